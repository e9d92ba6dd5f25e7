#!/usr/bin/env python3
"""Instructions per request of one or more proxy binaries, counted by valgrind (callgrind).

Time-based CPU figures on the 2-core machines move by 20-45 % between runs, so a drift
of a few per cent between two builds cannot be seen with them. Instruction counts do not
depend on the machine's other load: this script runs each binary under callgrind with
`nbthread 1`, sends a fixed number of requests through it to an nginx backend, and does
it twice (N and 3N requests), so that start-up and shutdown cancel out:

    instructions per request = (I(3N) - I(N)) / 2N

Scenarios (the client paces itself: each request waits for the previous answer on its
connection, so every request is its own wake-up of the event loop, as at a fixed rate):
  keepalive  10 keep-alive connections (--conns), requests round-robin over them
  close      a connection per request (`Connection: close`)
  gzip       256 KiB of text (random words) compressed by the proxy (`compression algo
             gzip`, level 1), on one keep-alive connection (N/250 requests)
  text       the same requests without `Accept-Encoding`: with `gzip`, the table adds
             the instructions per MiB compressed (gzip minus text)
HTTP/2 scenarios (h2load from nghttp2-client, `-n` requests over a fixed number of
connections, so that their handshakes cancel out too; the proxy is saturated):
  h2c-1x100, h2c-100x10   cleartext prior knowledge (`bind ... proto h2`), 1 connection x
                          100 concurrent streams, 100 connections x 10 streams
  tls-1x100, tls-100x10   the same over TLS (ALPN h2, an EC P-256 certificate)

Usage: scripts/bench-instr.py [-n N] [--scenarios keepalive,close] [--syscalls|--cache] NAME=BINARY ...
       scripts/bench-instr.py -n 3000 --scenarios h2c-1x100,h2c-100x10,tls-1x100,tls-100x10 \
           haproxy=/usr/sbin/haproxy rampart=target/release/rampart
With --syscalls it counts system calls per request instead (strace -c, same difference).
With --cache, callgrind also simulates the caches (--cache-sim=yes: valgrind's model of
this machine's L1 and last-level caches) and the table adds cache misses per request
(I1: first-level instruction cache; D1: first-level data, reads and writes; LL: last-level
data): what the instruction count does not
show when a binary touches more memory per request than another.
Prints a table: instructions per request per binary and scenario, and each binary's
ratio to the first one. Needs valgrind (or strace) and nginx, and h2load for the HTTP/2 scenarios (Debian packages).
"""

import argparse
import http.client
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

from benchlib import free_port, nginx_fixed_conf, proxy_http_cfg, wait_port

BODY = "proxybench small fixed response".ljust(99, ".") + "\n"  # as proxybench.py

REQUEST = b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n"
REQUEST_CLOSE = b"GET / HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n"


def read_response(sock, until_close):
    """Reads one response (Content-Length framed, or up to the close); checks it is a 200."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit(f"connection closed mid-response: {data!r}")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    if not head.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"unexpected answer: {head!r}")
    length = int(re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head).group(1))
    while len(body) < length:
        body += sock.recv(65536)
    if until_close:
        while sock.recv(65536):
            pass


KEEPALIVE_CONNS = [10]  # set by --conns


def load_keepalive(port, n):
    conns = KEEPALIVE_CONNS[0]
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(conns)]
    for i in range(n):
        s = socks[i % conns]
        s.sendall(REQUEST)
        read_response(s, False)
    for s in socks:
        s.close()


def load_close(port, n):
    for _ in range(n):
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(REQUEST_CLOSE)
            read_response(s, True)


TEXT_KIB = 256
TEXT_WORDS = ("the of and to in is that for it as was with be by on not he this are or his from at which but "
              "have an they you were her she there been one all we their has would when if so no will more can "
              "out up other proxy server request response header cache compression backend frontend stream "
              "session rule").split()


def write_text(tmp):
    """{tmp}/www/text.txt: TEXT_KIB KiB of random words (seeded), as bench-cache-comp.py's."""
    rnd = random.Random(24)
    words, size = [], 0
    while size < TEXT_KIB * 1024:
        words.append(rnd.choice(TEXT_WORDS))
        size += len(words[-1]) + 1
    os.makedirs(os.path.join(tmp, "www"), exist_ok=True)
    with open(os.path.join(tmp, "www", "text.txt"), "w") as f:
        f.write(" ".join(words)[: TEXT_KIB * 1024])


def load_text(port, n, gzip=False):
    """n requests of the text on one connection; checks each answer's encoding."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(n):
        conn.request("GET", "/www/text.txt", headers={"Accept-Encoding": "gzip"} if gzip else {})
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200 or (resp.getheader("Content-Encoding") == "gzip") != gzip:
            raise SystemExit(f"unexpected answer: {resp.status} {resp.getheaders()}")
        LAST_BODY[0] = len(body)
    conn.close()


LAST_BODY = [0]
# requests of a scenario's short run: N divided by this
N_DIV = {"text": 250, "gzip": 250}
# the proxy's extra `defaults` lines by scenario
COMPRESSION = "    compression algo gzip\n    compression type text/plain\n"
DEFAULTS = {"text": COMPRESSION, "gzip": COMPRESSION}


def load_h2(transport, conns, streams):
    """An h2load run of n requests over `conns` connections, `streams` at a time on each."""
    def load(port, n):
        scheme = "https" if transport == "tls" else "http"
        argv = ["h2load", "-n", str(n), "-c", str(conns), "-m", str(streams), f"{scheme}://127.0.0.1:{port}/"]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=600).stdout
        m = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded", out)
        if not m or int(m.group(1)) != n:
            raise SystemExit(f"h2load: not {n} requests succeeded:\n{out}")
    return load


LOADS = {"keepalive": load_keepalive, "close": load_close, "text": load_text,
         "gzip": lambda port, n: load_text(port, n, gzip=True),
         "h2c-1x100": load_h2("h2c", 1, 100), "h2c-100x10": load_h2("h2c", 100, 10),
         "tls-1x100": load_h2("tls", 1, 100), "tls-100x10": load_h2("tls", 100, 10)}

CERT = [None]  # the TLS scenarios' certificate and key (one PEM file), made once


def bind_words(scenario, tmp):
    """The bind line's extra words for a scenario."""
    if scenario.startswith("h2c"):
        return " proto h2"
    if scenario.startswith("tls"):
        if CERT[0] is None:
            pem, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                            "-nodes", "-days", "2", "-subj", "/CN=localhost", "-keyout", key, "-out", pem],
                           check=True, capture_output=True)
            with open(pem, "a") as out, open(key) as k:
                out.write(k.read())
            CERT[0] = pem
        return f" ssl crt {CERT[0]} alpn h2,http/1.1"
    return ""


def instructions(binary, scenario, n, backend, tmp, keep=None, cache=False):
    """Callgrind's totals for the proxy (all threads) to start, serve n requests, and stop:
    {event: count}, with `Ir` the instructions (and the cache events with `cache`)."""
    port = free_port()
    cfg = os.path.join(tmp, "proxy.cfg")
    with open(cfg, "w") as f:
        f.write(proxy_http_cfg(port, backend, DEFAULTS.get(scenario, ""), bind=bind_words(scenario, tmp)))
    out = os.path.join(tmp, "callgrind.out")
    proc = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        + (["--cache-sim=yes"] if cache else []) + [binary, "-f", cfg],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "valgrind.log"), "w"))
    try:
        wait_port(port, tries=600)
        LOADS[scenario](port, n)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
    with open(out) as f:
        text = f.read()
    events = re.search(r"^events:\s*(.+)$", text, re.M).group(1).split()
    totals = re.search(r"^(?:summary|totals):\s*(.+)$", text, re.M).group(1).split()
    if keep:
        shutil.move(out, keep)
    else:
        os.unlink(out)
    return dict(zip(events, map(int, totals)))


def syscalls(binary, scenario, n, backend, tmp):
    """The proxy's system calls (all threads) to start, serve n requests and stop: {name: calls}."""
    port = free_port()
    cfg = os.path.join(tmp, "proxy.cfg")
    with open(cfg, "w") as f:
        f.write(proxy_http_cfg(port, backend, DEFAULTS.get(scenario, ""), bind=bind_words(scenario, tmp)))
    out = os.path.join(tmp, "strace.out")
    proc = subprocess.Popen(["strace", "-f", "-c", "-o", out, binary, "-f", cfg],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, tries=600)
        LOADS[scenario](port, n)
    finally:
        # the proxy, not strace: strace stops tracing on its own signal
        with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
            for child in f.read().split():
                os.kill(int(child), signal.SIGTERM)
        proc.wait(120)
    calls = {}
    with open(out) as f:
        for line in f:
            cols = line.split()
            if len(cols) >= 5 and cols[-1] != "total" and cols[0][0].isdigit():
                calls[cols[-1]] = int(cols[3])
    os.unlink(out)
    return calls


def print_syscalls(bins, scen, n, backend, tmp):
    """Per binary: system calls per request, in total and by name (those above 0.05)."""
    per = {}
    for name, path in bins:
        short = syscalls(path, scen, n, backend, tmp)
        long = syscalls(path, scen, 3 * n, backend, tmp)
        per[name] = {k: (long.get(k, 0) - short.get(k, 0)) / (2 * n) for k in set(short) | set(long)}
    names = sorted({k for p in per.values() for k, v in p.items() if v >= 0.05})
    print(f"\n{scen}: system calls per request")
    print("| syscall | " + " | ".join(n for n, _ in bins) + " |")
    print("|---|" + "---|" * len(bins))
    for k in names + ["total"]:
        cells = [f"{(sum(per[b].values()) if k == 'total' else per[b].get(k, 0)):.2f}" for b, _ in bins]
        print(f"| {k} | " + " | ".join(cells) + " |")


def print_instructions(bins, scenarios, per_req, cache):
    """The table: instructions per request (ratio to the first binary), and with `cache`
    the first-level and last-level data-cache misses per request."""
    def cell(i, name, scen, value):
        base = value(per_req[(bins[0][0], scen)])
        v = value(per_req[(name, scen)])
        return f"{v:,.0f}" + ("" if i == 0 or not base else f" ({v / base:.3f})")

    columns = [("instructions", lambda e: e["Ir"])]
    if cache:
        columns += [("I1 misses", lambda e: e.get("I1mr", 0)),
                    ("D1 misses", lambda e: e.get("D1mr", 0) + e.get("D1mw", 0)),
                    ("LL misses", lambda e: e.get("DLmr", 0) + e.get("DLmw", 0))]
    print()
    print("| scenario | per request | " + " | ".join(n for n, _ in bins) + " |")
    print("|---|---|" + "---|" * len(bins))
    for scen in scenarios:
        for label, value in columns:
            cells = [cell(i, n, scen, value) for i, (n, _) in enumerate(bins)]
            print(f"| {scen} | {label} | " + " | ".join(cells) + " |")


def print_compression(bins, per_req, gzip_size):
    """Instructions per MiB compressed (the gzip requests minus the plain ones) and the ratio."""
    print(f"\ngzip level 1, {TEXT_KIB} KiB of text per request:")
    print("| binary | instructions per MiB compressed | ratio |")
    print("|---|---|---|")
    for name, _ in bins:
        extra = per_req[(name, "gzip")]["Ir"] - per_req[(name, "text")]["Ir"]
        per_mib = extra / (TEXT_KIB / 1024)
        print(f"| {name} | {per_mib / 1e6:.2f} M | {TEXT_KIB * 1024 / gzip_size[name]:.3f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=2000, help="requests of the short run (the long one: 3n)")
    ap.add_argument("--scenarios", default="keepalive,close")
    ap.add_argument("--keep", metavar="DIR", help="keep each long run's callgrind profile there "
                    "(DIR/NAME-SCENARIO.callgrind, for callgrind_annotate)")
    ap.add_argument("--syscalls", action="store_true", help="count system calls per request "
                    "(strace -c) instead of instructions")
    ap.add_argument("--conns", type=int, default=10, help="keep-alive connections (default 10): "
                    "with more, each request finds less of its connection's state in the caches")
    ap.add_argument("--cache", action="store_true", help="also simulate the caches and count "
                    "data-cache misses per request (slower)")
    ap.add_argument("binaries", nargs="+", help="NAME=PATH")
    args = ap.parse_args()
    bins = [b.split("=", 1) for b in args.binaries]
    KEEPALIVE_CONNS[0] = args.conns
    for tool in ("valgrind", "nginx"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            sys.exit(f"{tool} is needed")
    tmp = tempfile.mkdtemp(prefix="bench-instr-")
    os.chmod(tmp, 0o755)  # nginx's workers read the text
    write_text(tmp)
    backend = free_port()
    with open(os.path.join(tmp, "nginx.conf"), "w") as f:
        f.write(nginx_fixed_conf(tmp, backend, BODY))
    nginx = subprocess.Popen([shutil.which("nginx") or "/usr/sbin/nginx", "-p", tmp + "/", "-e",
                              os.path.join(tmp, "nginx-error.log"), "-c", os.path.join(tmp, "nginx.conf")])
    try:
        wait_port(backend)
        scenarios = args.scenarios.split(",")
        if args.syscalls:
            for scen in scenarios:
                print_syscalls(bins, scen, max(args.n // N_DIV.get(scen, 1), 2), backend, tmp)
            return
        per_req = {}
        gzip_size = {}
        for scen in scenarios:
            n = max(args.n // N_DIV.get(scen, 1), 2)
            for name, path in bins:
                short = instructions(path, scen, n, backend, tmp, cache=args.cache)
                keep = args.keep and os.path.join(args.keep, f"{name}-{scen}.callgrind")
                long = instructions(path, scen, 3 * n, backend, tmp, keep, args.cache)
                per_req[(name, scen)] = {k: (long[k] - short.get(k, 0)) / (2 * n) for k in long}
                if scen == "gzip":
                    gzip_size[name] = LAST_BODY[0]
                print(f"{scen:10} {name:16} {per_req[(name, scen)]['Ir']:12,.0f} instructions/request", flush=True)
        print_instructions(bins, scenarios, per_req, args.cache)
        if "gzip" in scenarios and "text" in scenarios:
            print_compression(bins, per_req, gzip_size)
    finally:
        nginx.terminate()
        nginx.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
