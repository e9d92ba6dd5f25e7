#!/usr/bin/env python3
"""HTTP/2 clients through haproxy and rampart (the same config), side by side in one run:
h2load (Debian's nghttp2-client) over TLS (ALPN h2) and cleartext prior knowledge (h2c,
`bind ... proto h2`), to an nginx answering a 100-byte body over HTTP/1.1 keep-alive.

Scenarios, each run for every proxy in every round (the order reverses every other
round, a fresh proxy process each time, one unmeasured second of warm-up first):
  1x100   1 connection, 100 concurrent streams      (saturation)
  100x10  100 connections, 10 concurrent streams each (saturation)
  rate    10 connections, 1 stream each, a fixed total rate (h2load --rps): CPU per
          request of a proxy that is not saturated
The proxy runs one thread pinned to --proxy-cpu; h2load and nginx share --client-cpu.
Proxy CPU is utime+stime from /proc over the requests h2load completed. The report gives
each proxy's median req/s and CPU us/request, and the median of the per-round ratios
rampart/haproxy (goal: req/s >= 1.2x, CPU/request <= 0.8x at saturation, <= 0.9x at the
fixed rate).

Then the upload-time ratio of issue 21 §4: a 10 MiB PUT (nginx stores it) through rampart over HTTP/2
(curl --http2-prior-knowledge) and over HTTP/1.1 (curl --http1.1), in --uploads pairs
(the two uploads of a pair back to back) per proxy and round, --upload-rounds rounds
(the proxies take turns); the table gives the median times and the median and range
of the per-pair ratios, for the wall time (curl's) and for the proxy's CPU time (all
its threads, from schedstat), which a busy machine disturbs less; goal: HTTP/2 at most
1.5x the HTTP/1.1 time. Also for haproxy, for reference. More binaries after the first
two take part in the uploads (a before/after comparison in one run).

    scripts/bench-h2.py --rounds 5 --secs 10 /usr/sbin/haproxy target/release/rampart
    scripts/bench-h2.py --rounds 3 --secs 3 ...      (a quick check)
    scripts/bench-h2.py --rounds 0 --uploads 10 --upload-rounds 3 /usr/sbin/haproxy old/rampart new/rampart
"""

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

from benchlib import cpu_ticks, free_port, wait_port

BODY = "x" * 100

NGINX = """\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    client_max_body_size 0;
    client_body_temp_path {tmp}/cb; proxy_temp_path {tmp}/px; fastcgi_temp_path {tmp}/fc;
    uwsgi_temp_path {tmp}/uw; scgi_temp_path {tmp}/sc;
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location = / {{ return 200 "{body}"; }}
        location /up/ {{ root {tmp}/www; dav_methods PUT; create_full_put_path on; }}
    }}
}}
"""

PROXY = """\
global
    nbthread 1
    maxconn 4000

defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 60s

frontend fe_tls
    bind 127.0.0.1:{tls} ssl crt {cert} alpn h2,http/1.1
    default_backend be_http

frontend fe_h2c
    bind 127.0.0.1:{h2c} proto h2
    default_backend be_http

frontend fe_h1
    bind 127.0.0.1:{h1}
    default_backend be_http

backend be_http
    http-reuse safe
    server nginx 127.0.0.1:{backend}
"""

SCENARIOS = [  # name, transport, h2load arguments
    ("h2c 1x100", "h2c", ["-c1", "-m100"]),
    ("h2c 100x10", "h2c", ["-c100", "-m10"]),
    ("h2c rate", "h2c", ["-c10", "-m1", "--rps"]),
    ("tls 1x100", "tls", ["-c1", "-m100"]),
    ("tls 100x10", "tls", ["-c100", "-m10"]),
    ("tls rate", "tls", ["-c10", "-m1", "--rps"]),
]


class Proxy:
    """One proxy process on fresh ports, pinned to a core; stopped by its own PID."""

    def __init__(self, binary, tmp, backend, cert, cpu):
        self.ports = {"tls": free_port(), "h2c": free_port(), "h1": free_port()}
        cfg = os.path.join(tmp, "proxy.cfg")
        with open(cfg, "w") as f:
            f.write(PROXY.format(backend=backend, cert=cert, **self.ports))
        self.proc = subprocess.Popen(["taskset", "-c", cpu, binary, "-db", "-f", cfg],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for port in self.ports.values():
            wait_port(port)

    def url(self, transport, path="/"):
        scheme = "https" if transport == "tls" else "http"
        return f"{scheme}://127.0.0.1:{self.ports[transport]}{path}"

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def h2load(args, url, extra, secs):
    """(requests succeeded, seconds) of one h2load run; exits on errors."""
    argv = ["taskset", "-c", args.client_cpu, "h2load", "-D", str(secs)] + extra + [url]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=secs + 60).stdout
    m = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored",
                  out)
    t = re.search(r"finished in ([\d.]+)(m?s)", out)
    if not m or not t:
        raise SystemExit(f"h2load output not understood:\n{out}")
    if int(m.group(2)) or int(m.group(3)):
        print(f"  warning: {url} {' '.join(extra)}: {m.group(2)} failed, {m.group(3)} errored")
    secs = float(t.group(1)) / (1000 if t.group(2) == "ms" else 1)
    return int(m.group(1)), secs


def one_run(args, binary, scen, tmp, backend, cert):
    """{'rps', 'us_per_req'} of one scenario against a fresh proxy."""
    name, transport, extra = scen
    if extra[-1] == "--rps":
        extra = extra[:-1] + ["--rps", str(max(1, args.rate // 10))]
    proxy = Proxy(binary, tmp, backend, cert, args.proxy_cpu)
    try:
        h2load(args, proxy.url(transport), extra, 1)
        before = cpu_ticks(proxy.proc.pid)
        done, secs = h2load(args, proxy.url(transport), extra, args.secs)
        ticks = cpu_ticks(proxy.proc.pid) - before
    finally:
        proxy.stop()
    hz = os.sysconf("SC_CLK_TCK")
    return {"rps": done / secs, "us_per_req": ticks / hz * 1e6 / max(done, 1)}


def upload_secs(url, data, http):
    """Seconds of one PUT of `data` (nginx stores it: the whole body is read)."""
    argv = ["curl", "-sS", "-o", "/dev/null", "-w", "%{time_total} %{http_code}", http, "-T", data]
    if url.startswith("https"):
        argv.append("-k")
    out = subprocess.run(argv + [url], capture_output=True, text=True, check=True, timeout=120).stdout
    secs, code = out.split()
    if code not in ("201", "204"):
        raise SystemExit(f"upload to {url} ({http}): status {code}")
    return float(secs)


def upload_ratios(args, binary, tmp, backend, cert):
    """[(HTTP/2 seconds, HTTP/1.1 seconds)] of --uploads pairs of 10 MiB uploads through one
    proxy process, the two of a pair back to back (their order alternating), so that the
    ratio of a pair sees the same load of the machine."""
    data = os.path.join(tmp, "upload.bin")
    if not os.path.exists(data):
        with open(data, "wb") as f:
            f.write(os.urandom(10 << 20))
    proxy = Proxy(binary, tmp, backend, cert, args.proxy_cpu)
    pairs = []

    def timed(url, http):
        """(wall seconds, proxy CPU seconds) of one upload."""
        before = cpu_ns(proxy.proc.pid)
        wall = upload_secs(url, data, http)
        return wall, (cpu_ns(proxy.proc.pid) - before) / 1e9

    try:
        for i in range(args.uploads):
            h2 = lambda: timed(proxy.url("h2c", "/up/f"), "--http2-prior-knowledge")
            h1 = lambda: timed(proxy.url("h1", "/up/f"), "--http1.1")
            if i % 2:
                b, a = h1(), h2()
            else:
                a, b = h2(), h1()
            pairs.append((a, b))
    finally:
        proxy.stop()
    return pairs


def cpu_ns(pid):
    """The CPU time of all the process's threads so far, in nanoseconds (schedstat: finer
    than the clock ticks of /proc/PID/stat)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # a thread that ended
    return total


def upload_report(args, names):
    """The upload table: each proxy's median times and the median and range of its
    per-pair ratios; the proxies take turns, --upload-rounds times."""
    pairs = {n: [] for n, _ in names}
    for r in range(args.upload_rounds):
        order = names if r % 2 == 0 else names[::-1]
        for n, b in order:
            pairs[n] += upload_ratios(args, b, *args.upload_env)
    print(f"\n{args.upload_rounds} rounds x {args.uploads} pairs of 10 MiB uploads per proxy; wall time "
          "(curl's) and the proxy's CPU time (all threads, schedstat) per upload, medians; ratios: "
          "median and range of the per-pair ratios")
    print("\n| proxy | HTTP/2 (h2c) s | HTTP/1.1 s | time ratio h2/h1 (goal <= 1.5) | range | "
          "proxy CPU h2 ms | CPU h1 ms | CPU ratio h2/h1 | range |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, _ in names:
        p = pairs[n]
        walls = sorted(a[0] / b[0] for a, b in p)
        cpus = sorted(a[1] / max(b[1], 1e-9) for a, b in p)
        med = lambda i, side: statistics.median(pair[side][i] for pair in p)
        print(f"| {n} | {med(0, 0):.3f} | {med(0, 1):.3f} | {statistics.median(walls):.2f} | "
              f"{walls[0]:.2f}-{walls[-1]:.2f} | {med(1, 0) * 1e3:.1f} | {med(1, 1) * 1e3:.1f} | "
              f"{statistics.median(cpus):.2f} | {cpus[0]:.2f}-{cpus[-1]:.2f} |")


def make_cert(tmp):
    pem = os.path.join(tmp, "cert.pem")
    key = os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-days", "2", "-subj", "/CN=localhost", "-keyout", key, "-out", pem],
                   check=True, capture_output=True)
    with open(pem, "a") as out, open(key) as k:
        out.write(k.read())
    return pem


def report(results, names, args):
    base, other = names[0], names[1]
    print(f"\n{args.rounds} rounds x {args.secs} s per run; rate runs at {args.rate} req/s; "
          f"ratios = {other}/{base}, median of the per-round ratios\n")
    print(f"| scenario | {base} req/s | {other} req/s | req/s ratio | {base} CPU us/req | "
          f"{other} CPU us/req | CPU/req ratio |")
    print("|---|---|---|---|---|---|---|")
    for scen in SCENARIOS:
        rows = results[scen[0]]
        med = {n: {k: statistics.median(r[n][k] for r in rows) for k in ("rps", "us_per_req")} for n in names}
        rps_ratio = statistics.median(r[other]["rps"] / r[base]["rps"] for r in rows)
        cpu_ratio = statistics.median(r[other]["us_per_req"] / r[base]["us_per_req"] for r in rows)
        print(f"| {scen[0]} | {med[base]['rps']:,.0f} | {med[other]['rps']:,.0f} | {rps_ratio:.2f} | "
              f"{med[base]['us_per_req']:.2f} | {med[other]['us_per_req']:.2f} | {cpu_ratio:.2f} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--secs", type=int, default=10, help="measured seconds per run")
    p.add_argument("--rate", type=int, default=5000, help="total req/s of the rate scenarios")
    p.add_argument("--uploads", type=int, default=5, help="pairs of 10 MiB uploads (h2, h1) per proxy and round")
    p.add_argument("--upload-rounds", type=int, default=1, help="rounds of uploads (the proxies take turns)")
    p.add_argument("--proxy-cpu", default="1")
    p.add_argument("--client-cpu", default="0")
    p.add_argument("--only", default="", help="run only the scenarios whose name contains this")
    p.add_argument("binaries", nargs="+", help="haproxy, then rampart (more binaries: uploads only)")
    args = p.parse_args()
    if len(args.binaries) < 2:
        p.error("give haproxy and rampart")
    names = [os.path.basename(b) for b in args.binaries]
    if len(set(names)) < len(names):
        names = args.binaries

    tmp = tempfile.mkdtemp(prefix="bench-h2-")
    os.makedirs(f"{tmp}/www/up")
    for d in (tmp, f"{tmp}/www", f"{tmp}/www/up"):  # nginx workers may run as nobody
        os.chmod(d, 0o777)
    backend = free_port()
    with open(f"{tmp}/nginx.conf", "w") as f:
        f.write(NGINX.format(tmp=tmp, port=backend, body=BODY))
    nginx = subprocess.Popen(["taskset", "-c", args.client_cpu, "nginx", "-p", tmp + "/", "-e",
                              f"{tmp}/nginx-error.log", "-c", f"{tmp}/nginx.conf"])
    wait_port(backend)
    global SCENARIOS
    SCENARIOS = [s for s in SCENARIOS if args.only in s[0]]
    results = {s[0]: [] for s in SCENARIOS}
    try:
        cert = make_cert(tmp)
        for r in range(args.rounds):
            order = list(zip(names, args.binaries))
            if r % 2:
                order.reverse()
            for scen in SCENARIOS:
                row = {n: one_run(args, b, scen, tmp, backend, cert) for n, b in order}
                results[scen[0]].append(row)
                print(f"round {r + 1} {scen[0]}: " + ", ".join(
                    f"{n} {row[n]['rps']:,.0f} req/s {row[n]['us_per_req']:.2f} us/req" for n in names),
                    flush=True)
        if args.rounds:
            report(results, names, args)
        if args.uploads and args.upload_rounds:
            args.upload_env = (tmp, backend, cert)
            upload_report(args, list(zip(names, args.binaries)))
    finally:
        nginx.terminate()
        nginx.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
