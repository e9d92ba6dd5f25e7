#!/usr/bin/env python3
"""What a fleet of nodes can measure on one machine over loopback (docs/SCALE-OUT.md,
"Figures"), for rampart or haproxy 2.6 alike (`--proxy`), one measure a subcommand:

  dns-change     a server `app.test:<port>` whose A record moves between 127.0.0.2 and
                 127.0.0.3: the time from the record's change (in the DNS server) to the
                 first response from the new address, a client sending a request every
                 2 ms, each on a new connection (`--keepalive`: all on one); `--resolve`
                 is `timeout resolve`, `--obsolete` `hold obsolete` (the old record is
                 kept that long after it left the answers).
  srv-grow       `server-template web 5 _http._tcp.app.test`: the SRV set grows from 2
                 to 5 records (time until each of the 5 servers answered a request),
                 then shrinks to 1 (time until the last response from a removed one,
                 `hold obsolete` being `--obsolete`).
  resolvers-cpu  `--servers` servers, each its own name, resolved every
                 `--resolve`: the proxy's CPU (% of one core) and the DNS queries per
                 second over `--seconds`, no traffic.
  peers          two nodes of one `peers` section: the time from a request tracked in
                 a stick table on node A (its response received) to the entry being
                 listed by `show table` on node B's stats socket (polled in a loop).

    scripts/bench-scale-out.py dns-change --proxy target/release/rampart
    scripts/bench-scale-out.py peers --proxy /usr/sbin/haproxy

The DNS server is scripts/benchdns.py (UDP, standard library); the HTTP servers are
Python's, each answering its own name. Times are wall-clock; CPU figures on a shared
machine are indicative only.
"""

import argparse
import http.client
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from benchdns import DnsServer
from benchlib import cpu_ticks, free_port, wait_port

GLOBAL = """\
global
    nbthread 1
    stats socket {tmp}/{name}.sock level admin
{extra}
defaults
    mode http
    timeout client 30s
    timeout server 30s
    timeout connect 1s
"""

RESOLVERS = """\
resolvers r1
    nameserver ns1 127.0.0.1:{dns}
    accepted_payload_size 8192
    resolve_retries 3
    timeout resolve {resolve}
    timeout retry 1s
    hold valid 10s
    hold obsolete {obsolete}
"""


def http_server(ip, port, name):
    """An HTTP/1.1 server on ip:port answering `name` to every request (a thread)."""

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            # one write: a head and a body in two would wait on the proxy's delayed ACK
            # (Nagle) on a reused connection, a Python server's artefact
            body = name.encode()
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer((ip, port), H)
    srv.daemon_threads = True
    # a proxy closing an idle connection is no error
    srv.handle_error = lambda *a: None
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


class Proxy:
    """The proxy under test started on `cfg` (output to a file), stopped by `stop`."""

    def __init__(self, binary, tmp, name, cfg):
        path = os.path.join(tmp, f"{name}.cfg")
        with open(path, "w") as f:
            f.write(cfg)
        self.log = open(os.path.join(tmp, f"{name}.out"), "w")
        self.p = subprocess.Popen([binary, "-f", path, "-db"], stdout=self.log, stderr=subprocess.STDOUT)
        self.sock = os.path.join(tmp, f"{name}.sock")

    def cli(self, cmd):
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.sock)
        s.sendall(cmd.encode() + b"\n")
        out = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
        s.close()
        return out.decode()

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.log.close()


class Client:
    """Sends GET / in a loop, every `every` s, on a new connection each time (`keep`:
    on one keep-alive connection); `seen` gets (time, body)."""

    def __init__(self, port, every=0.002, keep=False):
        self.port, self.every, self.keep = port, every, keep
        self.seen = []
        self.stop_flag = False
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        c = None
        while not self.stop_flag:
            try:
                if c is None:
                    c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                c.request("GET", "/")
                r = c.getresponse()
                body = r.read().decode(errors="replace")
                self.seen.append((time.monotonic(), body if r.status == 200 else f"<{r.status}>"))
                if not self.keep:
                    c.close()
                    c = None
            except (OSError, http.client.HTTPException):
                c = None
                self.seen.append((time.monotonic(), "<error>"))
            time.sleep(self.every)

    def close(self):
        self.stop_flag = True
        self.t.join()


def wait_for(cond, timeout, step=0.002):
    """The time `cond()` first held (monotonic), or None after `timeout` s."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return time.monotonic()
        time.sleep(step)
    return None


def print_errors(seen):
    """The requests, and those that failed once a server first answered (before, the
    server waits for its first resolution: `init-addr none`)."""
    first = next((i for i, (_, b) in enumerate(seen) if not b.startswith("<")), len(seen))
    errors = [b for _, b in seen[first:] if b.startswith("<")]
    print(f"  {len(seen)} requests, {len(errors)} failed after the first answer {sorted(set(errors))}")


def summary(xs):
    xs = sorted(xs)
    if not xs:
        return "no sample"
    return f"median {statistics.median(xs):.3f} s, min {xs[0]:.3f} s, max {xs[-1]:.3f} s over {len(xs)}"


def dns_change(a, tmp):
    dns = DnsServer()
    port = free_port()
    servers = [http_server("127.0.0.2", port, "two"), http_server("127.0.0.3", port, "three")]
    dns.set_a("app.test", ["127.0.0.2"])
    fe = free_port()
    cfg = GLOBAL.format(tmp=tmp, name="p", extra="") + RESOLVERS.format(
        dns=dns.port, resolve=a.resolve, obsolete=a.obsolete
    )
    cfg += f"""frontend fe
    bind 127.0.0.1:{fe}
    default_backend be
backend be
    server s1 app.test:{port} resolvers r1 resolve-prefer ipv4 init-addr none
"""
    p = Proxy(a.proxy, tmp, "p", cfg)
    wait_port(fe)
    c = Client(fe, keep=a.keepalive)
    try:
        if wait_for(lambda: c.seen and c.seen[-1][1] == "two", 10) is None:
            sys.exit("never served by 127.0.0.2")
        took = []
        cur = "two"
        for i in range(a.rounds):
            # a random moment within the resolution period
            time.sleep(1.0 + (i * 0.37) % 1.0)
            nxt, ip = ("three", "127.0.0.3") if cur == "two" else ("two", "127.0.0.2")
            n = len(c.seen)
            t0 = time.monotonic()
            dns.set_a("app.test", [ip])
            t1 = wait_for(lambda: any(b == nxt for _, b in c.seen[n:]), 30)
            if t1 is None:
                print(f"round {i}: traffic did not follow within 30 s")
                break
            took.append(t1 - t0)
            cur = nxt
        print(f"dns-change ({a.proxy}, timeout resolve {a.resolve}, hold obsolete {a.obsolete}): {summary(took)}")
        print_errors(c.seen)
    finally:
        c.close()
        p.stop()
        for s in servers:
            s.shutdown()


def srv_grow(a, tmp):
    dns = DnsServer()
    ports = [free_port() for _ in range(5)]
    names = [f"w{i + 1}" for i in range(5)]
    servers = [http_server("127.0.0.1", port, n) for port, n in zip(ports, names)]
    for n in names:
        dns.set_a(f"{n}.test", ["127.0.0.1"])
    records = [(0, 10, port, f"{n}.test") for port, n in zip(ports, names)]
    dns.set_srv("_http._tcp.app.test", records[:2])
    fe = free_port()
    cfg = GLOBAL.format(tmp=tmp, name="p", extra="") + RESOLVERS.format(
        dns=dns.port, resolve=a.resolve, obsolete=a.obsolete
    )
    cfg += f"""frontend fe
    bind 127.0.0.1:{fe}
    default_backend be
backend be
    balance roundrobin
    server-template web 5 _http._tcp.app.test resolvers r1 resolve-prefer ipv4 init-addr none
"""
    p = Proxy(a.proxy, tmp, "p", cfg)
    wait_port(fe)
    c = Client(fe)
    grow, shrink = [], []
    try:
        for i in range(a.rounds):
            # steady on two first
            if wait_for(lambda: {b for _, b in c.seen[-10:]} == set(names[:2]), 60) is None:
                sys.exit(f"round {i}: never steady on two servers")
            time.sleep(1.0 + (i * 0.37) % 1.0)
            n = len(c.seen)
            t0 = time.monotonic()
            dns.set_srv("_http._tcp.app.test", records)
            t1 = wait_for(lambda: set(names) <= {b for _, b in c.seen[n:]}, 60)
            if t1 is None:
                print(f"round {i}: the five did not all answer within 60 s")
                break
            grow.append(t1 - t0)
            time.sleep(1.0)
            n = len(c.seen)
            t0 = time.monotonic()
            dns.set_srv("_http._tcp.app.test", records[:1])
            # until only w1 answered for 2 s
            t1 = wait_for(lambda: {b for t, b in c.seen[n:] if t > time.monotonic() - 2} == {"w1"}, 120)
            if t1 is None:
                print(f"round {i}: still served by removed servers after 120 s")
                break
            removed = [t for t, b in c.seen[n:] if b != "w1"]
            shrink.append(max(removed, default=t0) - t0)
            print(f"  round {i}: grow {grow[-1]:.3f} s, shrink {shrink[-1]:.3f} s ({len(removed)} answers from removed ones)")
            dns.set_srv("_http._tcp.app.test", records[:2])
        print(f"srv-grow ({a.proxy}, timeout resolve {a.resolve}): 2 -> 5: {summary(grow)}")
        print(f"  5 -> 1 (hold obsolete {a.obsolete}): last response from a removed server {summary(shrink)}")
        print_errors(c.seen)
    finally:
        c.close()
        p.stop()
        for s in servers:
            s.shutdown()


def udp_rcvbuf_errors():
    """The machine's count of UDP datagrams dropped for a full receive buffer."""
    with open("/proc/net/snmp") as f:
        rows = [l.split() for l in f if l.startswith("Udp:")]
    return int(rows[1][rows[0].index("RcvbufErrors")])


def resolvers_cpu(a, tmp):
    dns = DnsServer()
    for i in range(a.servers):
        dns.set_a(f"h{i}.test", ["127.0.0.1"])
    fe = free_port()
    cfg = GLOBAL.format(tmp=tmp, name="p", extra="") + RESOLVERS.format(
        dns=dns.port, resolve=a.resolve, obsolete="10s"
    )
    cfg += f"frontend fe\n    bind 127.0.0.1:{fe}\n    default_backend be\nbackend be\n"
    for i in range(a.servers):
        cfg += f"    server s{i} h{i}.test:80 resolvers r1 resolve-prefer ipv4 init-addr none\n"
    p = Proxy(a.proxy, tmp, "p", cfg)
    try:
        wait_port(fe)
        time.sleep(5)
        hz = os.sysconf("SC_CLK_TCK")
        c0, q0, t0, l0 = cpu_ticks(p.p.pid), dns.queries, time.monotonic(), udp_rcvbuf_errors()
        time.sleep(a.seconds)
        c1, q1, t1, l1 = cpu_ticks(p.p.pid), dns.queries, time.monotonic(), udp_rcvbuf_errors()
        rows = [r.split(",") for r in p.cli("show stat").splitlines()[1:] if r]
        up = sum(1 for r in rows if r[1] not in ("FRONTEND", "BACKEND") and not r[17].startswith("MAINT"))
        cpu = 100.0 * (c1 - c0) / hz / (t1 - t0)
        print(
            f"resolvers-cpu ({a.proxy}, {a.servers} servers, timeout resolve {a.resolve}): "
            f"{cpu:.1f} % of a core, {(q1 - q0) / (t1 - t0):.0f} queries/s, {up} servers with an address, "
            f"{l1 - l0} datagrams dropped for a full receive buffer (the proxy's: the DNS server's is 4 MiB)"
        )
        ns = p.cli("show resolvers r1")
        print("  " + " ".join(l.strip() for l in ns.splitlines() if l.strip().startswith(("sent", "valid", "timeout"))))
    finally:
        p.stop()


def peers(a, tmp):
    pa, pb, fa, fb = free_port(), free_port(), free_port(), free_port()
    nodes = {}
    for me, fe in (("a", fa), ("b", fb)):
        cfg = GLOBAL.format(tmp=tmp, name=me, extra=f"    localpeer {me}\n")
        cfg += f"""peers lb
    peer a 127.0.0.1:{pa}
    peer b 127.0.0.1:{pb}
    table t type string len 32 size 100k expire 300s store http_req_cnt
frontend fe
    bind 127.0.0.1:{fe}
    http-request track-sc0 hdr(x-key) table lb/t
    http-request return status 200
"""
        nodes[me] = Proxy(a.proxy, tmp, me, cfg)
    try:
        wait_port(fa)
        wait_port(fb)
        c = http.client.HTTPConnection("127.0.0.1", fa, timeout=5)

        def track(key):
            c.request("GET", "/", headers={"x-key": key})
            c.getresponse().read()

        def on_b(key):
            return f"key={key} " in nodes["b"].cli(f"show table lb/t key {key}")

        track("warmup")
        if wait_for(lambda: on_b("warmup"), 30, 0.05) is None:
            sys.exit("the nodes never synced")
        took = []
        stamp = int(time.time())
        for i in range(a.rounds):
            key = f"k{stamp}-{i}"
            track(key)
            t0 = time.monotonic()
            t1 = wait_for(lambda: on_b(key), 10, 0)
            if t1 is None:
                print(f"{key}: not on node B within 10 s")
                continue
            took.append(t1 - t0)
            time.sleep(0.05)
        ms = sorted(x * 1000 for x in took)
        print(
            f"peers ({a.proxy}): entry on B after median {statistics.median(ms):.2f} ms, "
            f"p90 {ms[int(len(ms) * 0.9)]:.2f} ms, max {ms[-1]:.2f} ms over {len(ms)}"
        )
    finally:
        for n in nodes.values():
            n.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["dns-change", "srv-grow", "resolvers-cpu", "peers"])
    p.add_argument("--proxy", default="target/release/rampart")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--resolve", default="1s", help="timeout resolve")
    p.add_argument("--obsolete", default="2s", help="hold obsolete")
    p.add_argument("--keepalive", action="store_true", help="dns-change: one client connection for all")
    p.add_argument("--servers", type=int, default=1000, help="resolvers-cpu")
    p.add_argument("--seconds", type=float, default=20, help="resolvers-cpu")
    a = p.parse_args()
    a.proxy = shutil.which(a.proxy) or a.proxy
    tmp = tempfile.mkdtemp(prefix="scaleout-")
    try:
        {"dns-change": dns_change, "srv-grow": srv_grow, "resolvers-cpu": resolvers_cpu, "peers": peers}[a.what](
            a, tmp
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
