#!/usr/bin/env bash
# bench-tls-handshake.sh CERT.pem PROXY_BIN... : full and resumed TLS handshakes per second and proxy CPU
# per handshake, for each proxy given (haproxy and rampart take the same config), one after the other in
# the same run. The proxy answers by itself (`http-request return`) on cpu 1; the client is Debian's
# `openssl s_time` on cpu 0, which opens one connection at a time: `-new` makes a full handshake per
# connection, `-reuse` resumes the first connection's session on every later one (a TLS 1.3 ticket,
# or a TLS 1.2 session id with `TLS=-tls1_2`). Read CPU per handshake: s_time itself limits the rate.
#   scripts/bench-tls-handshake.sh cert.pem /usr/sbin/haproxy target/release/rampart
# SECS (default 8) sets each run's length; ROUNDS (default 1) repeats the whole comparison.
set -u
CERT=$(realpath "$1"); shift
SECS=${SECS:-8}; ROUNDS=${ROUNDS:-1}; TLS=${TLS:-}
T=$(mktemp -d); PID=; trap 'kill $PID 2>/dev/null; rm -rf "$T"' EXIT
P=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
printf 'global\n    nbthread 1\n    maxconn 4000\ndefaults\n    mode http\n    timeout client 10s\n    timeout server 10s\n    timeout connect 5s\nfrontend fe\n    bind 127.0.0.1:%s ssl crt %s\n    http-request return status 200 content-type text/plain string ok\n' "$P" "$CERT" >"$T/t.cfg"
cpu() { awk '{print $14+$15}' /proc/$PID/stat; }
printf '%-10s %-7s %12s %10s %14s\n' proxy mode handshakes per_sec cpu_us_per_hs
for round in $(seq "$ROUNDS"); do
  for BIN in "$@"; do
    taskset -c 1 "$BIN" -db -f "$T/t.cfg" >"$T/proxy.log" 2>&1 & PID=$!
    sleep 1
    kill -0 $PID 2>/dev/null || { echo "$(basename "$BIN") did not start: $(head -3 "$T/proxy.log")"; exit 1; }
    for mode in new reuse; do
      c0=$(cpu)
      # shellcheck disable=SC2086
      out=$(taskset -c 0 openssl s_time -connect "127.0.0.1:$P" -www / -$mode -time "$SECS" $TLS 2>&1)
      c1=$(cpu)
      n=$(grep -oE '^[0-9]+ connections in [0-9.]+ real' <<<"$out" | tail -1)
      conns=${n%% *}; real=$(awk '{print $4}' <<<"$n")
      [ -n "$conns" ] && [ "$conns" -gt 0 ] || { echo "s_time failed: $(tail -3 <<<"$out")"; exit 1; }
      printf '%-10s %-7s %12s %10s %14s\n' "$(basename "$BIN")" "$mode" "$conns" \
        "$(python3 -c "print(round($conns/$real))")" "$(python3 -c "print(round(($c1-$c0)*1e6/100/$conns,1))")"
    done
    kill $PID; wait $PID 2>/dev/null; PID=
  done
done
