#!/usr/bin/env bash
# bench-accept-proxy.sh PROXY_BIN [RELAY_BIN] [SECONDS]
#
# CPU per request of a proxy (haproxy or rampart, same config) on a frontend with
# `accept-proxy`, against the same frontend without it. wrk cannot send a PROXY header,
# so a relay in TCP mode (haproxy by default, pinned with wrk to cpu 0) sits in front:
# one relay listener forwards plainly, the other with `send-proxy` (v1) and one with
# `send-proxy-v2`. The proxy under test is pinned to cpu 1 and answers by itself
# (`http-request return`), so only its CPU is read. In `close` mode every request is a
# new connection, hence a new PROXY header: that is where the header's cost shows.
# Compare two proxies in the same run (absolute figures move with the machine).
#
# At full speed the routes do not run at the same rate (the relay's own work differs),
# and CPU per request rises as the rate falls (fewer events per wakeup), which hides
# the header's cost. RATE=<req/s> paces wrk (a `delay()` per connection) so every route
# runs at nearly that rate: pick one below the slowest route's full-speed rate.
#
# A relay such as haproxy sends the header in a segment of its own, before the
# request, which costs the proxy one more wake-up per connection whatever it does with
# the header. The last mode, `direct`, has no relay: wrk itself sends the header and a
# `Connection: close` request in one write on each new connection (a wrk script), as a
# sender that coalesces them does; that isolates what reading the header costs. (wrk
# checks the first request it builds, so each thread's first one may go without the
# header: at most one refused connection per thread.)
set -u
BIN=$1
RELAY=${2:-/usr/sbin/haproxy}
SECS=${3:-8}
T=$(mktemp -d)
trap 'kill $PID $RPID 2>/dev/null; rm -rf "$T"' EXIT
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
P0=$(port); P1=$(port); P2=$(port); R0=$(port); R1=$(port); R2=$(port)

cat >"$T/proxy.cfg" <<EOF
global
    nbthread 1
    maxconn 4000
defaults
    mode http
    timeout client 10s
    timeout server 10s
    timeout connect 5s
frontend plain
    bind 127.0.0.1:$P0
    http-request return status 200 content-type text/plain string ok
frontend pp
    bind 127.0.0.1:$P1 accept-proxy
    bind 127.0.0.1:$P2 accept-proxy
    http-request return status 200 content-type text/plain string ok
EOF
cat >"$T/relay.cfg" <<EOF
global
    maxconn 4000
defaults
    mode tcp
    timeout client 10s
    timeout server 10s
    timeout connect 5s
listen plain
    bind 127.0.0.1:$R0
    server s 127.0.0.1:$P0
listen v1
    bind 127.0.0.1:$R1
    server s 127.0.0.1:$P1 send-proxy
listen v2
    bind 127.0.0.1:$R2
    server s 127.0.0.1:$P2 send-proxy-v2
EOF
taskset -c 1 "$BIN" -db -f "$T/proxy.cfg" >"$T/proxy.log" 2>&1 & PID=$!
taskset -c 0 "$RELAY" -db -f "$T/relay.cfg" >"$T/relay.log" 2>&1 & RPID=$!
sleep 1
kill -0 $PID 2>/dev/null || { echo "$(basename "$BIN") did not start: $(head -3 "$T/proxy.log")"; exit 1; }
kill -0 $RPID 2>/dev/null || { echo "relay did not start: $(head -3 "$T/relay.log")"; exit 1; }
cpu() { awk '{print $14+$15}' /proc/$PID/stat; }
CONNS=50; pace=()
if [ -n "${RATE:-}" ]; then
  # each connection waits CONNS/RATE seconds before each request
  printf 'function delay()\n  return %s\nend\n' "$(python3 -c "print(max(1, round($CONNS*1000/$RATE)))")" >"$T/pace.lua"
  pace=(-s "$T/pace.lua")
fi
# measure <label> <port> <wrk options...>: one wrk run against the port, the proxy's CPU
# per request it completed
measure() {
  local label=$1 rp=$2; shift 2
  local c0 c1 out req tps us
  c0=$(cpu)
  out=$(taskset -c 0 wrk -t1 -c$CONNS -d"${SECS}"s "$@" "http://127.0.0.1:$rp/" 2>&1)
  c1=$(cpu)
  req=$(awk '/requests in/{print $1}' <<<"$out")
  tps=$(awk '/Requests\/sec/{print $2}' <<<"$out")
  us=$(python3 -c "print(round(($c1-$c0)*1e6/100/max(${req:-0},1),2))")
  echo "$(basename "$BIN") $label: requests $req, req/s $tps, proxy cpu us/req $us $(grep -o 'Socket errors.*\|Non-2xx.*' <<<"$out" | tr '\n' ' ')"
}
for mode in keepalive close; do
  hdr=(); [ $mode = close ] && hdr=(-H 'Connection: close')
  for route in plain:$R0 v1:$R1 v2:$R2; do
    measure "$mode ${route%%:*}" "${route##*:}" "${pace[@]}" "${hdr[@]}"
  done
done
# direct: the header (none, v1, v2: 192.0.2.1:40000 -> 127.0.0.1:80) and the request in one write
v1='PROXY TCP4 192.0.2.1 127.0.0.1 40000 80\r\n'
v2='\13\10\13\10\0\13\10\81\85\73\84\10\33\17\0\12\192\0\2\1\127\0\0\1\156\64\0\80'
names=(plain v1 v2); ports=("$P0" "$P1" "$P2"); headers=("" "$v1" "$v2")
for i in 0 1 2; do
  printf 'local req = "GET / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n"\nlocal header = "%s"\nlocal calls = 0\n-- wrk checks the first request it builds, which must look like HTTP: that one goes\n-- without the header\nfunction request()\n  calls = calls + 1\n  if calls == 1 then\n    return req\n  end\n  return header .. req\nend\n' "${headers[$i]}" >"$T/direct.lua"
  measure "direct ${names[$i]}" "${ports[$i]}" -s "$T/direct.lua"
done
