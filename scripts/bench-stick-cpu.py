#!/usr/bin/env python3
"""CPU per keep-alive request with and without the classic rate limiter
(`stick-table type ip size 100k expire 30s store http_req_rate(10s)`,
`http-request track-sc0 src`, `http-request deny deny_status 429 if
{ sc_http_req_rate(0) gt <huge> }`: every request is tracked and counted, none is
denied), measured side by side as scripts/bench-log-cpu.py does: both proxies run at
the same time pinned to the same core, each loaded by its own wrk on another core.

Per round: CPU time (utime+stime from /proc) of each proxy divided by the requests its
wrk completed; the report gives each round's ratio (limiter / plain) and the median.
All requests come from 127.0.0.1: one entry, the path every request of a limited
client takes.

    scripts/bench-stick-cpu.py --proxy target/release/rampart
    scripts/bench-stick-cpu.py --proxy /usr/sbin/haproxy
"""

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile

from benchlib import cpu_ticks, free_port, nginx_fixed_conf, proxy_http_cfg, wait_port


LIMITER = """\
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 100000000 }
"""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--proxy", default="target/release/rampart")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--duration", type=int, default=8)
    p.add_argument("--conns", type=int, default=25, help="wrk connections per proxy")
    p.add_argument("--proxy-cpu", default="1")
    p.add_argument("--client-cpu", default="0")
    args = p.parse_args()

    tmp = tempfile.mkdtemp(prefix="stick-cpu-")
    backend = free_port()
    with open(f"{tmp}/nginx.conf", "w") as f:
        f.write(nginx_fixed_conf(tmp, backend, "x" * 100))
    procs = [subprocess.Popen(["taskset", "-c", args.client_cpu, "nginx", "-p", tmp + "/", "-e", f"{tmp}/nginx-error.log", "-c", f"{tmp}/nginx.conf"])]
    wait_port(backend)
    hz = os.sysconf("SC_CLK_TCK")
    ratios, rows = [], []
    try:
        for r in range(args.rounds):
            ports, proxies = {}, {}
            for side in ("plain", "limiter"):
                ports[side] = free_port()
                cfg = f"{tmp}/{side}.cfg"
                with open(cfg, "w") as f:
                    f.write(proxy_http_cfg(ports[side], backend, frontend=LIMITER if side == "limiter" else ""))
                proxies[side] = subprocess.Popen(["taskset", "-c", args.proxy_cpu, args.proxy, "-f", cfg],
                                                 stdout=subprocess.DEVNULL)
            for side in proxies:
                wait_port(ports[side])
            before = {s: cpu_ticks(pr.pid) for s, pr in proxies.items()}
            wrks = {s: subprocess.Popen(["taskset", "-c", args.client_cpu, "wrk", "-t1", f"-c{args.conns}",
                                         f"-d{args.duration}", f"http://127.0.0.1:{ports[s]}/"],
                                        stdout=subprocess.PIPE, text=True) for s in proxies}
            out = {s: w.communicate()[0] for s, w in wrks.items()}
            after = {s: cpu_ticks(pr.pid) for s, pr in proxies.items()}
            for pr in proxies.values():
                pr.send_signal(signal.SIGTERM)
                pr.wait(10)
            per_req = {}
            for s in proxies:
                m = re.search(r"(\d+) requests in", out[s])
                n = int(m.group(1)) if m else 0
                per_req[s] = (after[s] - before[s]) / hz / max(n, 1) * 1e6
                rows.append((r + 1, s, n, per_req[s]))
            ratios.append(per_req["limiter"] / per_req["plain"])
            print(f"round {r + 1}: plain {per_req['plain']:.2f} us/req, limiter {per_req['limiter']:.2f} us/req, "
                  f"ratio {ratios[-1]:.3f}", flush=True)
    finally:
        for pr in procs:
            pr.terminate()
        for pr in procs:
            pr.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    plain = statistics.median(x[3] for x in rows if x[1] == "plain")
    lim = statistics.median(x[3] for x in rows if x[1] == "limiter")
    print("\n| proxy | plain µs/req | limiter µs/req | ratio (median of rounds) | per-round ratios |")
    print("|---|---|---|---|---|")
    print(f"| {os.path.basename(args.proxy)} | {plain:.2f} | {lim:.2f} | {statistics.median(ratios):.3f} | "
          f"{min(ratios):.3f}..{max(ratios):.3f} |")


if __name__ == "__main__":
    main()
