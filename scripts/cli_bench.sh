#!/usr/bin/env bash
# The runtime API under load: proxy CPU per request (proxybench's http-keepalive
# scenario) without, then with, 50 CLI clients looping on the stats socket
# (`show info`, then `show stat`, one connection per command, as scripts and
# exporters poll it). Prints both proxybench tables and the clients' totals; any
# client error (an answer without its end, a reset) is counted and makes the exit
# status 1 (connections refused or cut while proxybench restarts the proxy between
# runs are counted apart).
#
#   scripts/cli_bench.sh [PROXY_BINARY]    (default: target/release/rampart)
#
# CLIENTS (50), INTERVAL (seconds between two commands of one client, 0.02),
# ROUNDS (2), DURATION (8), PROXYBENCH (../shared/bench/proxybench.py) and
# OUT (/tmp/cli_bench) may be set. proxybench writes the proxy's configuration; a
# wrapper adds the `stats socket` to its `global` section and execs the proxy.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
proxy=${1:-$repo/target/release/rampart}
clients=${CLIENTS:-50}
interval=${INTERVAL:-0.02}
rounds=${ROUNDS:-2}
duration=${DURATION:-8}
out=${OUT:-/tmp/cli_bench}
bench=${PROXYBENCH:-}
for up in .. ../..; do
  [ -n "$bench" ] || [ ! -f "$repo/$up/shared/bench/proxybench.py" ] || bench=$repo/$up/shared/bench/proxybench.py
done
[ -f "$bench" ] || { echo "cli_bench.sh: proxybench.py not found (set PROXYBENCH)" >&2; exit 2; }
[ -x "$proxy" ] || { echo "cli_bench.sh: no proxy at $proxy" >&2; exit 2; }
mkdir -p "$out"
sock=$out/stats.sock

# the wrapper proxybench starts: the same configuration plus the stats socket
wrapper=$out/proxy-with-socket.sh
cat >"$wrapper" <<EOF
#!/bin/sh
sed '/^global/a\\    stats socket $sock level admin' "\$1" >"$out/with-socket.cfg"
exec "$proxy" -f "$out/with-socket.cfg"
EOF
chmod +x "$wrapper"

run_bench() {  # $1: label
  python3 "$bench" --proxy "$wrapper {cfg}" --scenarios http-keepalive --rounds "$rounds" \
    --duration "$duration" --max-other-load 100 --quiet-wait 1 --json "$out/$1.json" | tee "$out/$1.txt"
}

echo "== without CLI clients"
run_bench alone

echo "== with $clients CLI clients (one command every ${interval}s each)"
rm -f "$out/clients.done"
python3 - "$sock" "$clients" "$interval" "$out/clients.done" >"$out/clients.txt" <<'PY' &
import socket, sys, threading, time, os
path, n, interval, done = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
stats = {"answers": 0, "errors": 0, "refused": 0, "cut": 0}
lock = threading.Lock()

def ask(cmd):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect(path)
    except OSError:
        return "refused"          # the proxy is between two runs: no socket yet
    try:
        s.sendall(cmd)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        # a one-shot answer ends with an empty line; nothing at all: the proxy is
        # stopping (its sockets close when a soft stop begins, as HAProxy's)
        if not data:
            return "cut"
        return "answers" if data.endswith(b"\n\n") and data.count(b"\n") > 2 else "errors"
    except ConnectionResetError:
        return "cut"
    except OSError:
        return "errors"
    finally:
        s.close()

def client(i):
    cmds = [b"show info\n", b"show stat\n"]
    k = i
    while not os.path.exists(done):
        r = ask(cmds[k % 2])
        k += 1
        with lock:
            stats[r] += 1
        time.sleep(interval if r != "refused" else 0.05)

threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(f"cli clients={n} answers={stats['answers']} errors={stats['errors']} "
      f"cut(proxy stopping)={stats['cut']} refused(between runs)={stats['refused']}")
PY
clients_pid=$!
run_bench with-cli
touch "$out/clients.done"
wait "$clients_pid"
cat "$out/clients.txt"

python3 - "$out/alone.json" "$out/with-cli.json" <<'PY'
import json, statistics, sys
def runs(path):
    data = json.load(open(path))
    return [r["metrics"] for r in data["runs"] if r.get("ok") and "cpu_us_per_req" in r.get("metrics", {})]
a, b = runs(sys.argv[1]), runs(sys.argv[2])
if a and b:
    for key, label in (("cpu_us_per_req", "proxy CPU us/req"), ("rps", "req/s"), ("p50_ms", "p50 ms"), ("p99_ms", "p99 ms")):
        ma, mb = statistics.median(r[key] for r in a), statistics.median(r[key] for r in b)
        print(f"{label:17} alone {ma:10.2f}   with CLI clients {mb:10.2f}   ratio {mb / ma:.2f}")
PY
grep -q "errors=0 " "$out/clients.txt"
