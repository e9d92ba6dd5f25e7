#!/usr/bin/env python3
"""Cache and compression costs of rampart and haproxy 2.6 side by side in one run
(issue 24's "Done when"), with the same configuration against a local nginx:

- proxy CPU per request of a cache hit and of a proxied request (the same 4 KiB body,
  not cached): goal hit <= 0.6 x proxied, and rampart's hit <= haproxy's;
- gzip CPU per MiB of response compressed at level 1 (`tune.comp.maxlevel 1`): the
  CPU of compressed requests minus that of the same requests uncompressed, per MiB of
  input; goal rampart <= haproxy (`haproxy -vv` says which library it has: Debian's
  2.6 is built with libslz, `+SLZ -ZLIB`);
- the compression ratio each proxy reaches on the same text;
- RSS of a full cache: the resident memory the proxy gained while the cache was
  filled to over `total-max-size` with distinct objects, and its RSS then (haproxy
  maps its whole cache at startup, so its gain is near 0 and its RSS is the figure).
  `hits/lookups` are the FRONTEND row's `cache_hits`/`cache_lookups` (rampart's read
  0: not counted yet).

CPU is utime+stime from /proc/<pid>/stat over a wrk run; each proxy runs alone,
pinned to --proxy-cpu, with wrk and nginx on --client-cpu. Figures on a busy machine
are only indicative.

    scripts/bench-cache-comp.py                       # target/release/rampart vs /usr/sbin/haproxy
    scripts/bench-cache-comp.py --duration 10 --rounds 3
"""

import argparse
import gzip
import http.client
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile

from benchlib import cpu_ticks, free_port, rss_kib, wait_port

NGINX = """\
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_requests 1000000;
    types {{ text/plain txt; }}
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        root {tmp}/www;
        location = /obj   {{ default_type text/html; add_header Cache-Control "max-age=600"; try_files /obj.bin =404; }}
        location = /plain {{ default_type text/html; try_files /obj.bin =404; }}
        location /fill/   {{ default_type text/html; add_header Cache-Control "max-age=600"; try_files /fill.bin =404; }}
        location = /text  {{ default_type text/plain; try_files /text.txt =404; }}
    }}
}}
"""

CFG = """\
global
    nbthread 1
    maxconn 1000
    stats socket {tmp}/{name}.sock level admin
    tune.comp.maxlevel 1

defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 60s

cache c
    total-max-size {cache_mb}
    max-object-size 65536
    max-age 600

frontend fe
    bind 127.0.0.1:{port}
    http-request set-var(txn.cacheable) bool(1) if {{ path_beg /obj /fill/ }}
    http-request cache-use c if {{ var(txn.cacheable) -m bool }}
    http-response cache-store c if {{ var(txn.cacheable) -m bool }}
    use_backend be_comp if {{ path /text }}
    default_backend be

backend be
    http-reuse safe
    server nginx 127.0.0.1:{backend}

backend be_comp
    http-reuse safe
    compression algo gzip
    compression type text/plain
    server nginx 127.0.0.1:{backend}
"""

WORDS = ("the of and to in is that for it as was with be by on not he this are or his from at which but have an "
         "they you were her she there been one all we their has would when if so no will more can out up other "
         "proxy server request response header cache compression backend frontend stream session rule").split()


def cli(sock, cmd):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall(cmd.encode() + b"\n")
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    s.close()
    return out.decode()


def frontend_row(sock):
    lines = cli(sock, "show stat").splitlines()
    head = lines[0].lstrip("# ").split(",")
    for l in lines[1:]:
        cells = l.split(",")
        if len(cells) > 1 and cells[0] == "fe" and cells[1] == "FRONTEND":
            return dict(zip(head, cells))
    return {}


def wrk(client_cpu, port, path, duration, conns, headers=()):
    cmd = ["taskset", "-c", client_cpu, "wrk", "-t1", f"-c{conns}", f"-d{duration}"]
    for h in headers:
        cmd += ["-H", h]
    out = subprocess.run(cmd + [f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True).stdout
    m = re.search(r"(\d+) requests in", out)
    return int(m.group(1)) if m else 0


def measure(pid, hz, run):
    before = cpu_ticks(pid)
    n = run()
    return (cpu_ticks(pid) - before) / hz, n


def get(port, path, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    c.close()
    if r.status != 200:
        sys.exit(f"GET {path}: {r.status}")
    return r, body


def fill(port, count):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for i in range(count):
        c.request("GET", f"/fill/{i}")
        r = c.getresponse()
        r.read()
        if r.status != 200:
            sys.exit(f"GET /fill/{i}: {r.status}")
    c.close()


def run_proxy(name, binary, args, tmp, backend, hz):
    port = free_port()
    cfg = f"{tmp}/{name}.cfg"
    with open(cfg, "w") as f:
        f.write(CFG.format(tmp=tmp, name=name, port=port, backend=backend, cache_mb=args.cache_mb))
    proc = subprocess.Popen(["taskset", "-c", args.proxy_cpu, binary, "-db", "-f", cfg],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = f"{tmp}/{name}.sock"
    try:
        wait_port(port, tries=200)
        res = {}
        d, cc = args.duration, args.client_cpu
        # proxied vs cache hit, same body
        get(port, "/obj")
        rows = {"proxied": [], "hit": [], "gzip": [], "identity": []}
        text_size = os.path.getsize(f"{tmp}/www/text.txt")
        for _ in range(args.rounds):
            cpu, n = measure(proc.pid, hz, lambda: wrk(cc, port, "/plain", d, args.conns))
            rows["proxied"].append(cpu / max(n, 1) * 1e6)
            cpu, n = measure(proc.pid, hz, lambda: wrk(cc, port, "/obj", d, args.conns))
            rows["hit"].append(cpu / max(n, 1) * 1e6)
            cpu_i, n_i = measure(proc.pid, hz, lambda: wrk(cc, port, "/text", d, 4))
            cpu_g, n_g = measure(proc.pid, hz, lambda: wrk(cc, port, "/text", d, 4, ["Accept-Encoding: gzip"]))
            per_req_i = cpu_i / max(n_i, 1)
            rows["identity"].append(per_req_i)
            mib = text_size / 2**20
            rows["gzip"].append((cpu_g / max(n_g, 1) - per_req_i) / mib * 1e3)
        fe = frontend_row(sock)
        res["hits"] = f"{fe.get('cache_hits', '?')}/{fe.get('cache_lookups', '?')}"
        res["proxied_us"] = statistics.median(rows["proxied"])
        res["hit_us"] = statistics.median(rows["hit"])
        res["gzip_ms_per_mib"] = statistics.median(rows["gzip"])
        r, body = get(port, "/text", {"Accept-Encoding": "gzip"})
        assert r.getheader("Content-Encoding") == "gzip", f"{name}: /text was not compressed: {r.status} {r.getheaders()}"
        assert gzip.decompress(body) == open(f"{tmp}/www/text.txt", "rb").read(), f"{name}: bad gzip"
        res["ratio"] = text_size / len(body)
        # a full cache: distinct 32 KiB objects for 1.5 x total-max-size
        before = rss_kib(proc.pid)
        count = int(args.cache_mb * 2**20 * 1.5 / args.fill_kib / 1024)
        fill(port, count)
        res["rss_gain_mib"] = (rss_kib(proc.pid) - before) / 1024
        res["rss_mib"] = rss_kib(proc.pid) / 1024
        res["objects"] = count
        return res
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rampart", default="target/release/rampart")
    p.add_argument("--haproxy", default="/usr/sbin/haproxy")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--duration", type=int, default=5, help="seconds per wrk run")
    p.add_argument("--conns", type=int, default=10)
    p.add_argument("--cache-mb", type=int, default=64, help="total-max-size")
    p.add_argument("--fill-kib", type=int, default=32, help="size of the objects that fill the cache")
    p.add_argument("--text-kib", type=int, default=256, help="size of the compressed text")
    p.add_argument("--proxy-cpu", default="1")
    p.add_argument("--client-cpu", default="0")
    args = p.parse_args()

    vv = subprocess.run([args.haproxy, "-vv"], capture_output=True, text=True).stdout
    lib = "libslz" if "libslz" in vv else ("zlib" if "zlib" in vv else "none")
    tmp = tempfile.mkdtemp(prefix="cache-comp-")
    os.chmod(tmp, 0o755)  # nginx's workers read the files
    os.makedirs(f"{tmp}/www")
    rnd = random.Random(24)
    with open(f"{tmp}/www/obj.bin", "wb") as f:
        f.write(bytes(rnd.getrandbits(8) for _ in range(4096)))
    with open(f"{tmp}/www/fill.bin", "wb") as f:
        f.write(bytes(rnd.getrandbits(8) for _ in range(args.fill_kib * 1024)))
    words, size = [], 0
    while size < args.text_kib * 1024:
        w = rnd.choice(WORDS)
        words.append(w)
        size += len(w) + 1
    with open(f"{tmp}/www/text.txt", "w") as f:
        f.write(" ".join(words)[: args.text_kib * 1024])
    backend = free_port()
    with open(f"{tmp}/nginx.conf", "w") as f:
        f.write(NGINX.format(tmp=tmp, port=backend))
    nginx = subprocess.Popen(["taskset", "-c", args.client_cpu, "nginx", "-p", tmp + "/", "-e",
                              f"{tmp}/nginx-error.log", "-c", f"{tmp}/nginx.conf"])
    hz = os.sysconf("SC_CLK_TCK")
    results = {}
    try:
        wait_port(backend, tries=200)
        for name, binary in (("haproxy", args.haproxy), ("rampart", args.rampart)):
            results[name] = run_proxy(name, binary, args, tmp, backend, hz)
    finally:
        nginx.terminate()
        nginx.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"haproxy compresses with {lib}; rampart with its own fast encoder (comp/fast.rs) at level 1, zlib-rs above")
    print(f"cache: total-max-size {args.cache_mb} MB; filled with {results['rampart']['objects']} objects of "
          f"{args.fill_kib} KiB; text {args.text_kib} KiB\n")
    print("| proxy | proxied µs/req | hit µs/req | hit/proxied | hits/lookups | gzip ms CPU/MiB | ratio | "
          "RSS gained filling the cache (MiB) | RSS full (MiB) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['proxied_us']:.1f} | {r['hit_us']:.1f} | {r['hit_us'] / r['proxied_us']:.2f} | "
              f"{r['hits']} | {r['gzip_ms_per_mib']:.2f} | {r['ratio']:.2f} | {r['rss_gain_mib']:.1f} | "
              f"{r['rss_mib']:.1f} |")
    ra, ha = results["rampart"], results["haproxy"]
    print()
    print(f"hit <= 0.6 x proxied (rampart): {'yes' if ra['hit_us'] <= 0.6 * ra['proxied_us'] else 'NO'}")
    print(f"rampart hit <= haproxy hit: {'yes' if ra['hit_us'] <= ha['hit_us'] else 'NO'}")
    print(f"rampart gzip CPU/MiB <= haproxy's ({lib}): "
          f"{'yes' if ra['gzip_ms_per_mib'] <= ha['gzip_ms_per_mib'] else 'NO'}")
    print(f"rampart RSS gained <= total-max-size + 10%: "
          f"{'yes' if ra['rss_gain_mib'] <= args.cache_mb * 1.1 else 'NO'}")


if __name__ == "__main__":
    main()
