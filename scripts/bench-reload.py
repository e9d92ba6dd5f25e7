#!/usr/bin/env python3
"""Reload under load (not run in CI): keep-alive clients and connection-per-request
clients run against a proxy while it is reloaded 10 times in 10 s, for rampart and
haproxy 2.6 in the same run, in master-worker mode (-W, SIGUSR2 to the master;
haproxy with `stats socket ... expose-fd listeners`) and with -sf (a new process per
reload, the old one told to finish). Prints, per binary and mode and per kind of
client: requests, failed requests (no complete response), resets (ECONNRESET/EPIPE or
refused), and p50/p99 latency over the reload window.

usage: scripts/bench-reload.py [--rampart PATH] [--haproxy PATH] [--clients N]
"""
import argparse, os, signal, socket, subprocess, sys, tempfile, threading, time

CFG = """global
  nbthread 2
  stats socket {dir}/stats.sock level admin expose-fd listeners
defaults
  mode http
  timeout client 5s
  timeout server 5s
  timeout connect 1s
  timeout http-keep-alive 5s
frontend fe
  bind 127.0.0.1:{port}
  http-request return status 200 content-type text/plain string "gen{gen}"
"""
REQ_KA = b"GET / HTTP/1.1\r\nhost: bench\r\n\r\n"
REQ_CLOSE = b"GET / HTTP/1.1\r\nhost: bench\r\nconnection: close\r\n\r\n"


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def read_response(sock, buf):
    """One response; returns (rest of buffer, keep_alive) or raises."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(4096)
        if not chunk:
            raise EOFError("closed before a complete head")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin1").split("\r\n")
    if not lines[0].startswith("HTTP/1.1 200"):
        raise EOFError("status " + lines[0])
    length, close = 0, False
    for l in lines[1:]:
        k, _, v = l.partition(":")
        if k.lower() == "content-length":
            length = int(v)
        if k.lower() == "connection" and v.strip().lower() == "close":
            close = True
    while len(rest) < length:
        chunk = sock.recv(4096)
        if not chunk:
            raise EOFError("closed in the body")
        rest += chunk
    return rest[length:], not close


class Stats:
    def __init__(self):
        self.lock = threading.Lock(); self.ok = 0; self.failed = 0; self.resets = 0; self.lat = []

    def record(self, t0, t1, ok, reset, window):
        with self.lock:
            if ok:
                self.ok += 1
            else:
                self.failed += 1
                self.resets += reset
            if ok and window[0] <= t0 <= window[1]:
                self.lat.append(t1 - t0)


def client(port, keep_alive, stop, stats, window):
    sock, buf = None, b""
    while not stop.is_set():
        t0 = time.monotonic(); reset = 0
        try:
            if sock is None:
                sock = socket.create_connection(("127.0.0.1", port), timeout=5); buf = b""
            sock.sendall(REQ_KA if keep_alive else REQ_CLOSE)
            buf, again = read_response(sock, buf)
            ok = True
            if not (keep_alive and again):
                sock.close(); sock = None
        except (ConnectionResetError, BrokenPipeError, ConnectionRefusedError):
            ok, reset = False, 1
        except (EOFError, OSError):
            ok = False
        if not ok and sock is not None:
            sock.close(); sock = None
        stats.record(t0, time.monotonic(), ok, reset, window)


class Target:
    def __init__(self, name, binary, mode, port, d):
        self.name, self.binary, self.mode, self.port, self.dir = name, binary, mode, port, d
        self.cfg = os.path.join(d, "cfg"); self.pidfile = os.path.join(d, "pid"); self.gen = 0
        self.log = open(os.path.join(d, "log"), "w"); self.procs = []

    def write_cfg(self):
        with open(self.cfg, "w") as f:
            f.write(CFG.format(dir=self.dir, port=self.port, gen=self.gen))

    def start(self):
        self.write_cfg()
        args = [self.binary, "-f", self.cfg, "-p", self.pidfile]
        args += ["-W"] if self.mode == "W" else ["-db"]
        self.procs.append(subprocess.Popen(args, stdout=self.log, stderr=self.log))
        time.sleep(1.0)

    def reload(self):
        self.gen += 1; self.write_cfg()
        if self.mode == "W":
            os.kill(self.procs[0].pid, signal.SIGUSR2)
        else:
            old = self.procs[-1].pid
            self.procs.append(subprocess.Popen([self.binary, "-db", "-f", self.cfg, "-sf", str(old)],
                                               stdout=self.log, stderr=self.log))

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()


def pct(lat, q):
    if not lat:
        return float("nan")
    lat = sorted(lat); return lat[min(len(lat) - 1, int(len(lat) * q))] * 1000


def run(target, clients):
    target.start()
    stop = threading.Event(); window = [float("inf"), float("inf")]
    ka, cl = Stats(), Stats()
    threads = [threading.Thread(target=client, args=(target.port, True, stop, ka, window)) for _ in range(clients)]
    threads += [threading.Thread(target=client, args=(target.port, False, stop, cl, window)) for _ in range(clients)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    window[0] = time.monotonic()
    for _ in range(10):
        target.reload(); time.sleep(1.0)
    window[1] = time.monotonic()
    time.sleep(1.0)
    stop.set()
    for t in threads:
        t.join()
    target.stop()
    for kind, s in (("keep-alive", ka), ("conn-per-request", cl)):
        print(f"{target.name:<8} {target.mode:<3} {kind:<17} requests {s.ok + s.failed:>7}  failed {s.failed:>5}  "
              f"resets {s.resets:>5}  p50 {pct(s.lat, 0.5):7.2f} ms  p99 {pct(s.lat, 0.99):7.2f} ms", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rampart", default=os.environ.get("RAMPART", "target/release/rampart"))
    ap.add_argument("--haproxy", default="/usr/sbin/haproxy")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--modes", default="W,sf")
    a = ap.parse_args()
    for mode in a.modes.split(","):
        for name, binary in (("rampart", a.rampart), ("haproxy", a.haproxy)):
            with tempfile.TemporaryDirectory(prefix=f"bench-reload-{name}-") as d:
                run(Target(name, binary, mode, free_port(), d), a.clients)


if __name__ == "__main__":
    sys.exit(main())
