#!/usr/bin/env python3
"""CPU per keep-alive request with and without `option httplog` to a UDP syslog
target, measured side by side: both proxies run at the same time, pinned to the same
core, each loaded by its own wrk (both wrk on another core), so that whatever else runs
on the machine weighs on both alike. proxybench.py alternates runs instead, which this
machine's load (other builds) makes too noisy for a 10 % question.

Per round: CPU time (utime+stime from /proc) of each proxy divided by the requests its
wrk completed; the report gives each round's ratio (log / no log) and the median.
The UDP receiver (socat) is pinned beside wrk, off the proxies' core.

    scripts/bench-log-cpu.py --proxy target/release/rampart [--floor]

--floor also runs the `udp_send_floor` example (cargo build --release --example
udp_send_floor) on the proxies' core against the same receiver after each round: the
CPU of sending one datagram of a log line's size and nothing else. Its ratio to the
no-log request is the lowest overhead any proxy can reach by sending one datagram per
request on this machine (the report prints 1 + floor/no-log as "floor ratio").
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


LOG = "    log 127.0.0.1:{udp} local0\n    option httplog\n"
# --target ring: the lines go to a ring whose server is a TCP syslog receiver (the
# ring's forwarder sends many lines per write instead of a datagram per line)
LOG_RING = "    log ring@logs local0\n    option httplog\n"
RING = """
ring logs
    format rfc3164
    maxlen 1024
    size 1048576
    timeout connect 5s
    timeout server 10s
    server collector 127.0.0.1:{tcp}
"""


def send_floor(args, udp):
    """CPU µs the kernel takes to send one 220-byte datagram (batches of 10, about what
    rampart's log batching sends per call under this load) to the bench's receiver."""
    out = subprocess.run(["taskset", "-c", args.proxy_cpu, args.floor, f"127.0.0.1:{udp}", "200000", "10", "220"],
                         capture_output=True, text=True, check=True).stdout
    return float(out.split()[1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--proxy", default="target/release/rampart")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--duration", type=int, default=8)
    p.add_argument("--conns", type=int, default=25, help="wrk connections per proxy")
    p.add_argument("--proxy-cpu", default="1")
    p.add_argument("--client-cpu", default="0")
    p.add_argument("--target", choices=["udp", "ring"], default="udp",
                   help="udp: a syslog datagram per line; ring: a ring with a TCP server")
    p.add_argument("--floor", nargs="?", const="target/release/examples/udp_send_floor",
                   help="also measure the kernel's cost of one datagram (udp_send_floor example)")
    args = p.parse_args()

    tmp = tempfile.mkdtemp(prefix="log-cpu-")
    backend, udp = free_port(), free_port()
    with open(f"{tmp}/nginx.conf", "w") as f:
        f.write(nginx_fixed_conf(tmp, backend, "x" * 100))
    # nginx is pinned beside wrk and the receiver: left free, the scheduler moves it
    # onto the proxies' core when the receiver loads the client core, and the proxy
    # with logs then shares its core with nginx (thousands of preemptions per second)
    # while the one without does not.
    procs = [subprocess.Popen(["taskset", "-c", args.client_cpu, "nginx", "-p", tmp + "/", "-e", f"{tmp}/nginx-error.log", "-c", f"{tmp}/nginx.conf"])]
    procs.append(subprocess.Popen(["taskset", "-c", args.client_cpu, "socat", "-u",
                                   f"UDP-RECV:{udp},rcvbuf=4194304", "/dev/null"]))
    tcp = free_port()
    if args.target == "ring":
        procs.append(subprocess.Popen(["taskset", "-c", args.client_cpu, "socat", "-u",
                                       f"TCP-LISTEN:{tcp},reuseaddr,fork", "/dev/null"]))
    wait_port(backend)
    hz = os.sysconf("SC_CLK_TCK")
    ratios, rows, floors = [], [], []
    try:
        for r in range(args.rounds):
            ports, proxies = {}, {}
            for side in ("nolog", "log"):
                ports[side] = free_port()
                cfg = f"{tmp}/{side}.cfg"
                with open(cfg, "w") as f:
                    log = LOG_RING if args.target == "ring" else LOG.format(udp=udp)
                    f.write(proxy_http_cfg(ports[side], backend, defaults=log if side == "log" else ""))
                    if side == "log" and args.target == "ring":
                        f.write(RING.format(tcp=tcp))
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
            ratios.append(per_req["log"] / per_req["nolog"])
            floor_note = ""
            if args.floor:
                floor = send_floor(args, udp)
                floors.append(1 + floor / per_req["nolog"])
                floor_note = f", one datagram alone {floor:.2f} us (floor ratio {floors[-1]:.3f})"
            print(f"round {r + 1}: no log {per_req['nolog']:.2f} us/req, httplog to {args.target} "
                  f"{per_req['log']:.2f} us/req, ratio {ratios[-1]:.3f}{floor_note}", flush=True)
    finally:
        for pr in procs:
            pr.terminate()
        for pr in procs:
            pr.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    nolog = statistics.median(x[3] for x in rows if x[1] == "nolog")
    log = statistics.median(x[3] for x in rows if x[1] == "log")
    print(f"\n| proxy | no log µs/req | httplog→{args.target} µs/req | ratio (median of rounds) | per-round ratios |")
    print("|---|---|---|---|---|")
    print(f"| {os.path.basename(args.proxy)} | {nolog:.2f} | {log:.2f} | {statistics.median(ratios):.3f} | "
          f"{min(ratios):.3f}..{max(ratios):.3f} |")
    if floors:
        print(f"\nfloor ratio (1 + one datagram's CPU / no-log request), median of rounds: "
              f"{statistics.median(floors):.3f} ({min(floors):.3f}..{max(floors):.3f})")


if __name__ == "__main__":
    main()
