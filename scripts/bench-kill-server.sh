#!/usr/bin/env bash
# bench-kill-server.sh PROXY_BIN [PROXY_BIN ...]
#
# Kills one of two servers under continuous keep-alive load and brings it back, and
# prints a per-second timeline of the requests each server answered and the errors
# the clients saw, for each proxy given (haproxy and rampart: same config, same run).
# This is issue 9's "Done when" bench: two servers, `retries 3`, `option redispatch`,
# checks at `inter 200ms` (`fall 3`, `rise 2`); the goal is no client-visible error,
# the surviving server carrying at least half the previous rate from one `inter`
# after the kill, and traffic back on the restarted server within 2 x inter x rise.
#
# The two servers are haproxy processes answering by themselves (`http-request
# return`, body "b1" or "b2"); killing one is a SIGKILL (its listener and keep-alive
# connections vanish: resets and refused connections), restarting it is a new process
# on the same port. The load is wrk (keep-alive, CONNS connections, THREADS threads)
# with a Lua script that counts every response per wall-clock second and by body;
# errors are the non-200 responses per second plus wrk's socket error totals; the
# proxy logs only the requests that went wrong (`option dontlog-normal`), printed too.
#
# Environment: SECS (run length, 20), KILL_AT (5), BACK_AT (12), CONNS (50),
# THREADS (2), NBTHREAD (proxy threads, 2), SERVER_BIN (the servers: /usr/sbin/haproxy).
set -u
[ $# -ge 1 ] || { echo "usage: $0 PROXY_BIN [PROXY_BIN ...]" >&2; exit 2; }
SECS=${SECS:-20}; KILL_AT=${KILL_AT:-5}; BACK_AT=${BACK_AT:-12}
CONNS=${CONNS:-50}; THREADS=${THREADS:-2}; NBTHREAD=${NBTHREAD:-2}
SERVER_BIN=${SERVER_BIN:-/usr/sbin/haproxy}
T=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# one server: answers its name, keep-alive
server_cfg() { # name port
  cat <<EOF
global
    nbthread 1
    maxconn 4000
defaults
    mode http
    timeout client 30s
    timeout server 30s
    timeout connect 5s
frontend $1
    bind 127.0.0.1:$2
    http-request return status 200 content-type text/plain string $1
EOF
}
start_server() { # name port -> pid in SERVER_PID
  "$SERVER_BIN" -db -f "$T/$1.cfg" >>"$T/$1.log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
}

cat >"$T/timeline.lua" <<'EOF'
-- counts responses per wall-clock second: 200s by body, other statuses as errors
local threads = {}
function setup(thread) table.insert(threads, thread) end
ok1, ok2, bad = {}, {}, {}
function response(status, headers, body)
  local s = os.time()
  if status ~= 200 then bad[s] = (bad[s] or 0) + 1
  elseif body == "b1" then ok1[s] = (ok1[s] or 0) + 1
  else ok2[s] = (ok2[s] or 0) + 1 end
end
function done(summary, latency, requests)
  local all = {}
  local function add(name, t)
    for s, n in pairs(t) do
      all[s] = all[s] or {0, 0, 0}
      all[s][name] = all[s][name] + n
    end
  end
  for _, t in ipairs(threads) do add(1, t:get("ok1")); add(2, t:get("ok2")); add(3, t:get("bad")) end
  for s, v in pairs(all) do io.write(string.format("SEC %d %d %d %d\n", s, v[1], v[2], v[3])) end
  local e = summary.errors
  io.write(string.format("ERRORS connect=%d read=%d write=%d status=%d timeout=%d requests=%d\n",
    e.connect, e.read, e.write, e.status, e.timeout, summary.requests))
end
EOF

run_one() { # proxy binary
  local bin=$1 name; name=$(basename "$bin")
  local p1 p2 fe; p1=$(port); p2=$(port); fe=$(port)
  server_cfg b1 "$p1" >"$T/b1.cfg"; server_cfg b2 "$p2" >"$T/b2.cfg"
  cat >"$T/proxy.cfg" <<EOF
global
    nbthread $NBTHREAD
    maxconn 4000
defaults
    mode http
    log stdout format raw local0
    option httplog
    option dontlog-normal
    retries 3
    option redispatch
    timeout client 30s
    timeout server 30s
    timeout connect 5s
listen fe
    bind 127.0.0.1:$fe
    balance roundrobin
    server b1 127.0.0.1:$p1 check inter 200ms fall 3 rise 2
    server b2 127.0.0.1:$p2 check inter 200ms fall 3 rise 2
EOF
  start_server b1 "$p1"; local b1=$SERVER_PID
  start_server b2 "$p2"
  sleep 0.5
  "$bin" -db -f "$T/proxy.cfg" >"$T/proxy.log" 2>&1 & local ppid=$!
  PIDS+=("$ppid")
  sleep 1.5
  kill -0 "$ppid" 2>/dev/null || { echo "$name did not start: $(head -3 "$T/proxy.log")"; return 1; }
  local t0; t0=$(date +%s)
  wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s "$T/timeline.lua" "http://127.0.0.1:$fe/" >"$T/wrk.out" 2>&1 &
  local wpid=$!
  sleep "$KILL_AT"; local tkill; tkill=$(date +%s.%N); kill -9 "$b1"; wait "$b1" 2>/dev/null
  sleep $((BACK_AT - KILL_AT)); local tback; tback=$(date +%s.%N); start_server b1 "$p1"
  wait "$wpid"
  kill "$ppid" 2>/dev/null; wait "$ppid" 2>/dev/null
  python3 - "$name" "$t0" "$tkill" "$tback" "$T/wrk.out" "$T/proxy.log" <<'PY'
import sys
name, t0, tkill, tback, out, log = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6]
rows, errors = {}, ""
for line in open(out):
    if line.startswith("SEC "):
        _, s, a, b, e = line.split()
        rows[int(s)] = (int(a), int(b), int(e))
    elif line.startswith("ERRORS "):
        errors = line[7:].strip()
print(f"== {name}: kill b1 at +{tkill - t0:.2f}s, restart at +{tback - t0:.2f}s")
print(f"{'t(s)':>5} {'b1/s':>7} {'b2/s':>7} {'total/s':>8} {'errors':>6}")
for s in sorted(rows):
    a, b, e = rows[s]
    mark = " <- kill" if s == int(tkill) else " <- restart" if s == int(tback) else ""
    print(f"{s - t0:>5} {a:>7} {b:>7} {a + b:>8} {e:>6}{mark}")
print("wrk:", errors)
# the goals, per second of wall clock (first and last seconds are partial)
full = [s for s in sorted(rows)][1:-1]
before = [sum(rows[s][:2]) for s in full if s < int(tkill)]
base = sorted(before)[len(before) // 2] if before else 0
after = [s for s in full if s >= int(tkill + 0.2) + 1 and s < int(tback)]
worst = min((sum(rows[s][:2]) for s in after), default=0)
back = next((s for s in full if s > int(tback) and rows[s][0] > 0), None)
errs = sum(v[2] for v in rows.values())
print(f"median req/s before the kill: {base}; worst full second from one inter after the kill "
      f"until the restart: {worst} ({worst / base:.0%} of before)" if base else "no baseline")
print(f"first second with b1 traffic after the restart: "
      f"{'+%.0fs after it' % (back - tback) if back else 'none'}; non-200 responses: {errs}")
msgs = [l.rstrip() for l in open(log) if "b1" in l and ("DOWN" in l or " UP" in l)]
for m in msgs:
    print("  ", m)
# the requests that went wrong, as the proxy logged them (`option dontlog-normal`)
# (httplog: status is the 6th field, the termination state the 10th; a retried
# request is logged too, with `+N` retries in the 11th)
lines = [l.split() for l in open(log) if '"GET ' in l]
bad = [f for f in lines if len(f) > 10 and (f[5] != "200" or f[9] != "----")]
retried = [f for f in lines if len(f) > 10 and "+" in f[10]]
print(f"logged: {len(bad)} failed requests, {len(retried)} requests retried (redispatched)")
for f in bad[:6]:
    print("  ", " ".join(f))
PY
  rm -f "$T"/*.log
}

for bin in "$@"; do
  run_one "$bin"
done
