#!/usr/bin/env python3
"""CPU per HTTPS keep-alive request of several proxies (haproxy and rampart read the same
config), interleaved round by round so that the machine's drift weighs on all of them.

The config is /work/shared/bench/tlsbench.sh's: one thread pinned to cpu 1, the proxy
answers by itself (`http-request return`), wrk (50 connections) on cpu 0. Each round
runs every binary once (the order reverses every other round): a fresh process, one
second of unmeasured warm-up, then SECS seconds measured (utime+stime from /proc over
the requests wrk completed). The report gives each binary's median and the median and
range of its per-round ratio to the first binary: a ratio is taken between runs a few
seconds apart, which keeps it steadier than the absolute figures on a shared machine.

    scripts/bench-tls-keepalive.py --cert ec.pem --rounds 8 /usr/sbin/haproxy target/release/rampart
"""

import argparse
import os
import socket
import statistics
import subprocess
import tempfile
import time

CONFIG = """\
global
    nbthread 1
    maxconn 4000
defaults
    mode http
    timeout client 10s
    timeout server 10s
    timeout connect 5s
frontend fe
    bind 127.0.0.1:{port} ssl crt {cert}
    http-request return status 200 content-type text/plain string ok
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ticks(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def wrk(port, secs):
    out = subprocess.run(["taskset", "-c", "0", "wrk", "-t1", "-c50", f"-d{secs}s", f"https://127.0.0.1:{port}/"],
                         capture_output=True, text=True, check=True).stdout
    return int(next(line for line in out.splitlines() if "requests in" in line).split()[0])


def one_run(binary, cert, secs, tmp):
    port = free_port()
    cfg = os.path.join(tmp, "t.cfg")
    with open(cfg, "w") as f:
        f.write(CONFIG.format(port=port, cert=cert))
    proxy = subprocess.Popen(["taskset", "-c", "1", binary, "-db", "-f", cfg],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.8)
        wrk(port, 1)
        before = cpu_ticks(proxy.pid)
        requests = wrk(port, secs)
        ticks = cpu_ticks(proxy.pid) - before
    finally:
        proxy.kill()
        proxy.wait()
    return ticks * 1e6 / os.sysconf("SC_CLK_TCK") / requests


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cert", required=True, help="PEM file: certificate chain and key")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--secs", type=int, default=4, help="measured seconds per run")
    p.add_argument("binaries", nargs="+")
    a = p.parse_args()
    cert = os.path.realpath(a.cert)
    runs = {b: [] for b in a.binaries}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            order = a.binaries if r % 2 == 0 else a.binaries[::-1]
            for b in order:
                runs[b].append(one_run(b, cert, a.secs, tmp))
            print(f"round {r + 1}: " + "  ".join(f"{os.path.basename(b)} {runs[b][-1]:.2f}" for b in a.binaries),
                  flush=True)
    base = a.binaries[0]
    print(f"\nCPU us per HTTPS keep-alive request; ratio to {base}, per round")
    for b in a.binaries:
        ratios = [x / y for x, y in zip(runs[b], runs[base])]
        print(f"{b:40s} median {statistics.median(runs[b]):6.2f}   ratio median {statistics.median(ratios):.3f}"
              f"  range {min(ratios):.3f}..{max(ratios):.3f}")


if __name__ == "__main__":
    main()
