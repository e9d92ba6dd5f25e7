#!/usr/bin/env python3
"""Memory per stick-table entry: a proxy with one table of type ip and three
counters (`store http_req_rate(10s),conn_cur,gpc0`, size 1m) gets N entries through
`set table <t> key <ip> data.gpc0 1` on its stats socket; the report gives the growth
of the process's resident memory divided by the entries `show table` counts.

    scripts/bench-stick-mem.py --proxy target/release/rampart [--entries 1000000]
    scripts/bench-stick-mem.py --proxy /usr/sbin/haproxy
"""

import argparse
import ipaddress
import os
import re
import signal
import socket
import subprocess
import tempfile
import time

CFG = """\
global
    nbthread 1
    stats socket {sock} level admin
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend fe
    bind 127.0.0.1:{port}
    stick-table type ip size 1m store http_req_rate(10s),conn_cur,gpc0
    http-request track-sc0 src
    default_backend be
backend be
    server s1 127.0.0.1:9
"""


def cli(sock, line):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall(line.encode() + b"\n")
    out = b""
    while True:
        d = s.recv(65536)
        if not d:
            return out.decode()
        out += d


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1)) * 1024


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--proxy", default="target/release/rampart")
    p.add_argument("--entries", type=int, default=1_000_000)
    p.add_argument("--batch", type=int, default=250, help="commands per CLI line")
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="stick-mem-")
    sock = f"{tmp}/admin.sock"
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with open(f"{tmp}/p.cfg", "w") as f:
        f.write(CFG.format(sock=sock, port=port))
    proc = subprocess.Popen([args.proxy, "-f", f"{tmp}/p.cfg"], stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        time.sleep(0.3)
        before = rss(proc.pid)
        base = int(ipaddress.IPv4Address("10.0.0.0"))
        t0 = time.time()
        for start in range(0, args.entries, args.batch):
            n = min(args.batch, args.entries - start)
            cmds = ";".join(f"set table fe key {ipaddress.IPv4Address(base + start + i)} data.gpc0 1" for i in range(n))
            cli(sock, cmds)
        took = time.time() - t0
        head = cli(sock, "show table").strip()
        used = int(re.search(r"used:(\d+)", head).group(1))
        after = rss(proc.pid)
        print(f"{os.path.basename(args.proxy)}: {used} entries, RSS {before / 2**20:.1f} -> {after / 2**20:.1f} MiB, "
              f"{(after - before) / max(used, 1):.1f} bytes/entry ({took:.1f} s to insert)")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


if __name__ == "__main__":
    main()
