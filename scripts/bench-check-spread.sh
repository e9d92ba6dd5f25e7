#!/usr/bin/env bash
# bench-check-spread.sh PROXY_BIN [PROXY_BIN ...]
#
# 1,000 servers with `check inter 1s` in one backend, all pointing at one listener
# that records when each check connection arrives. The checks are HTTP checks
# (`option httpchk`): a TCP check's connection is reset as soon as it is established,
# before a user-space listener can accept and time it. Prints, for each proxy
# given (haproxy and rampart, same config), how the checks spread over the second
# (connections per 100 ms slice of the second, over MEASURE seconds) and the CPU the
# otherwise idle process used (user + system, % of one core, from /proc/<pid>/stat).
# This is issue 9's 1,000-server measurement.
#
# Environment: SERVERS (1000), WARMUP (3 s), MEASURE (10 s), NBTHREAD (proxy threads, 2).
set -u
[ $# -ge 1 ] || { echo "usage: $0 PROXY_BIN [PROXY_BIN ...]" >&2; exit 2; }
SERVERS=${SERVERS:-1000}; WARMUP=${WARMUP:-3}; MEASURE=${MEASURE:-10}; NBTHREAD=${NBTHREAD:-2}
T=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# the listener: accepts, notes the time, answers 200, closes; one timestamp per line
cat >"$T/listen.py" <<'EOF'
import socket, sys, time
port, out, secs = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port)); s.listen(4096); s.settimeout(0.5)
end, stamps = time.time() + secs, []
while time.time() < end:
    try:
        c, _ = s.accept()
    except (socket.timeout, OSError):
        continue
    stamps.append(time.time())
    try:
        c.settimeout(0.2)
        c.recv(4096)
        c.sendall(b"HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n")
    except OSError:
        pass
    c.close()
open(out, "w").write("\n".join(f"{t:.6f}" for t in stamps))
EOF

run_one() {
  local bin=$1 name; name=$(basename "$bin")
  local p; p=$(port)
  {
    printf 'global\n    nbthread %s\n    maxconn 4000\ndefaults\n    mode http\n    option httpchk\n' "$NBTHREAD"
    printf '    timeout client 30s\n    timeout server 30s\n    timeout connect 5s\nbackend many\n'
    for i in $(seq 1 "$SERVERS"); do printf '    server s%d 127.0.0.1:%d check inter 1s\n' "$i" "$p"; done
    # haproxy does not check the servers of a backend no frontend uses
    printf 'frontend fe\n    bind 127.0.0.1:%d\n    default_backend many\n' "$(port)"
  } >"$T/proxy.cfg"
  python3 "$T/listen.py" "$p" "$T/stamps" $((WARMUP + MEASURE + 3)) & local lpid=$!
  PIDS+=("$lpid")
  sleep 1
  "$bin" -db -f "$T/proxy.cfg" >"$T/proxy.log" 2>&1 & local ppid=$!
  PIDS+=("$ppid")
  sleep "$WARMUP"
  kill -0 "$ppid" 2>/dev/null || { echo "$name did not start: $(head -3 "$T/proxy.log")"; return 1; }
  local t0 c0 c1 hz; t0=$(date +%s.%N); c0=$(ticks "$ppid"); hz=$(getconf CLK_TCK)
  sleep "$MEASURE"
  c1=$(ticks "$ppid"); local t1; t1=$(date +%s.%N)
  kill "$ppid" 2>/dev/null; wait "$ppid" 2>/dev/null
  wait "$lpid"
  python3 - "$name" "$t0" "$t1" "$T/stamps" "$c0" "$c1" "$hz" "$SERVERS" <<'PY'
import sys
name, t0, t1, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
c0, c1, hz, n = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
stamps = [float(l) for l in open(path) if l.strip() and t0 <= float(l) < t1]
secs = t1 - t0
slices = [0] * 10
for t in stamps:
    slices[int((t % 1.0) * 10)] += 1
per = [x / secs for x in slices]
mean = sum(per) / 10
print(f"== {name}: {n} servers, inter 1s, {secs:.1f} s measured")
print(f"checks/s: {len(stamps) / secs:.0f} (expected {n})")
print("per 100 ms slice of the second (checks/s in that slice):",
      " ".join(f"{x:.0f}" for x in per))
print(f"slice min/mean/max: {min(per):.0f} / {mean:.0f} / {max(per):.0f}"
      f" (max/min {max(per) / max(min(per), 1e-9):.2f})")
ms = sorted(stamps)
gaps = [b - a for a, b in zip(ms, ms[1:])]
if gaps:
    print(f"largest gap between two checks: {max(gaps) * 1000:.1f} ms")
print(f"CPU of the proxy: {100.0 * (c1 - c0) / hz / secs:.1f} % of one core")
PY
}

for bin in "$@"; do
  run_one "$bin"
done
