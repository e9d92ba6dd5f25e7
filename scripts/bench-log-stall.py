#!/usr/bin/env python3
"""Load test: a log receiver that stops reading must not slow the traffic down.

Starts rampart (or haproxy: anything reading an HAProxy-syntax config) with a frontend
that logs every request (`option httplog`) to a unix datagram socket, a UDP socket and
stdout, each read by this script, and answers `http-request return` itself so that no
backend adds noise. Keep-alive clients send requests for three phases of --duration
seconds each:

  reading   the receivers read every line
  stalled   the receivers stop reading (their socket buffers / the stdout pipe fill up)
  resumed   they read again

Per phase it prints requests/s, latency p50/p99/max, the lines each receiver got, and
`DroppedLogs` from `show info` on the stats socket (its growth is what rampart could
not send: the unix socket and the stdout pipe refuse lines once full). A UDP receiver's
kernel drops datagrams without telling the sender, so its losses are read from
/proc/net/udp instead. Standard library only.

    scripts/bench-log-stall.py --proxy target/release/rampart --duration 5
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

CFG = """\
global
    nbthread 1
    stats socket {tmp}/stats.sock level admin

defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 30s

frontend fe
    bind 127.0.0.1:{port}
    log unix@{tmp}/log.sock len 4096 local0
    log 127.0.0.1:{udp_port} len 4096 local0
    log stdout format raw local0
    option httplog
    http-request return status 200 content-type text/plain string ok
"""

REQUEST = b"GET /stall-test HTTP/1.1\r\nHost: bench\r\n\r\n"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Receiver(threading.Thread):
    """Reads datagrams (or a pipe) while `reading` is set, counting what it got."""

    def __init__(self, read_one, reading):
        super().__init__(daemon=True)
        self.read_one, self.reading, self.count = read_one, reading, 0

    def run(self):
        while True:
            self.reading.wait()
            try:
                n = self.read_one()
            except (BlockingIOError, socket.timeout, TimeoutError):
                continue
            except OSError:
                return
            if n is None:
                return
            self.count += n


def udp_drops(port):
    """Datagrams the kernel dropped at our UDP receiver (the last column of /proc/net/udp)."""
    hexport = f"{port:04X}"
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1].endswith(":" + hexport):
                return int(fields[-1])
    return 0


def show_info(path, field):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(path)
    s.sendall(b"show info\n")
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    for line in data.decode(errors="replace").splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    return None


def client(port, stop, lat, errors):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while not stop.is_set():
        t0 = time.perf_counter()
        try:
            s.sendall(REQUEST)
            got = b""
            while not got.endswith(b"ok"):
                chunk = s.recv(4096)
                if not chunk:
                    raise OSError("closed")
                got += chunk
        except OSError:
            errors.append(1)
            s.close()
            s = socket.create_connection(("127.0.0.1", port))
            continue
        lat.append(time.perf_counter() - t0)
    s.close()


def phase(name, args, port, receivers, stats_sock, udp_port):
    stop = threading.Event()
    lats = [[] for _ in range(args.conns)]
    errors = []
    before = [r.count for r in receivers]
    dropped0 = show_info(stats_sock, "DroppedLogs")
    udp0 = udp_drops(udp_port)
    threads = [threading.Thread(target=client, args=(port, stop, lats[i], errors)) for i in range(args.conns)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(args.duration)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    all_lat = sorted(x for l in lats for x in l)
    n = len(all_lat)
    q = statistics.quantiles(all_lat, n=100) if n > 1 else [0] * 99
    got = [r.count - b for r, b in zip(receivers, before)]
    return {
        "phase": name,
        "requests": n,
        "rps": n / elapsed,
        "p50_ms": q[49] * 1e3,
        "p99_ms": q[98] * 1e3,
        "max_ms": (all_lat[-1] if n else 0) * 1e3,
        "errors": len(errors),
        "unix_lines": got[0],
        "udp_lines": got[1],
        "stdout_lines": got[2],
        "DroppedLogs+": show_info(stats_sock, "DroppedLogs") - dropped0,
        "udp_kernel_drops+": udp_drops(udp_port) - udp0,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--proxy", default="target/release/rampart", help="binary taking -f <cfg>")
    p.add_argument("--duration", type=float, default=5.0, help="seconds per phase")
    p.add_argument("--conns", type=int, default=4, help="keep-alive client connections")
    p.add_argument("--rounds", type=int, default=1, help="reading/stalled/resumed cycles")
    args = p.parse_args()

    tmp = tempfile.mkdtemp(prefix="log-stall-")
    port, udp_port = free_port(), free_port()
    reading = threading.Event()
    reading.set()

    ux = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ux.bind(f"{tmp}/log.sock")
    ux.settimeout(0.2)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", udp_port))
    udp.settimeout(0.2)

    cfg = os.path.join(tmp, "stall.cfg")
    with open(cfg, "w") as f:
        f.write(CFG.format(tmp=tmp, port=port, udp_port=udp_port))
    proc = subprocess.Popen([args.proxy, "-f", cfg], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    os.set_blocking(proc.stdout.fileno(), False)

    def read_stdout():
        try:
            data = os.read(proc.stdout.fileno(), 65536)
        except BlockingIOError:
            time.sleep(0.01)
            return 0
        return None if not data else data.count(b"\n")

    receivers = [
        Receiver(lambda: (ux.recv(65536), 1)[1], reading),
        Receiver(lambda: (udp.recv(65536), 1)[1], reading),
        Receiver(read_stdout, reading),
    ]
    for r in receivers:
        r.start()
    stats_sock = f"{tmp}/stats.sock"
    for _ in range(100):
        if os.path.exists(stats_sock):
            break
        time.sleep(0.1)
    else:
        proc.kill()
        sys.exit("the proxy did not start")
    time.sleep(0.3)

    rows = []
    try:
        for _ in range(args.rounds):
            reading.set()
            rows.append(phase("reading", args, port, receivers, stats_sock, udp_port))
            reading.clear()
            rows.append(phase("stalled", args, port, receivers, stats_sock, udp_port))
            reading.set()
            rows.append(phase("resumed", args, port, receivers, stats_sock, udp_port))
    finally:
        proc.terminate()
        proc.wait(10)

    cols = list(rows[0].keys())
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        cells = [f"{v:,.2f}" if isinstance(v, float) else f"{v:,}" if isinstance(v, int) else v for v in r.values()]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
