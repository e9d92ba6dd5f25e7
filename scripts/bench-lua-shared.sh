#!/usr/bin/env bash
# bench-lua-shared.sh PROXY_BIN... : what a Lua action costs per request when its file is loaded with
# `lua-load` (one state shared by the threads, each call under its lock) and with `lua-load-per-thread`
# (a state per thread, no lock), next to the same requests without the action; for each proxy given
# (haproxy and rampart take the same configs), one after the other in the same run. The action sets a
# header (`txn.http:req_set_header`) before `http-request return`, `nbthread 1` on cpu 1; the client is
# `wrk -t1 -c10` on keep-alive connections on cpu 0. Read `cpu_us_per_req` (the proxy's CPU per request:
# steadier than the rate on a shared machine) and its difference with the `none` line.
#   scripts/bench-lua-shared.sh /usr/sbin/haproxy target/release/rampart
# SECS (default 4) sets each run's length; ROUNDS (default 1) repeats the whole comparison.
set -u
SECS=${SECS:-4}; ROUNDS=${ROUNDS:-1}
T=$(mktemp -d); PID=; trap 'kill $PID 2>/dev/null; rm -rf "$T"' EXIT
P=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
printf 'core.register_action("hdr", { "http-req" }, function(txn)\n  txn.http:req_set_header("x-lua", "1")\nend)\n' >"$T/hdr.lua"
cfg() { # $1: none | lua-load | lua-load-per-thread
  local load= rule=
  [ "$1" = none ] || { load="    $1 $T/hdr.lua\n"; rule="    http-request lua.hdr\n"; }
  printf "global\n    nbthread 1\n${load}defaults\n    mode http\n    timeout client 10s\n    timeout server 10s\n    timeout connect 5s\nfrontend fe\n    bind 127.0.0.1:%s\n${rule}    http-request return status 200 content-type text/plain string ok\n" "$P" >"$T/$1.cfg"
}
for k in none lua-load lua-load-per-thread; do cfg $k; done
cpu() { awk '{print $14+$15}' /proc/$PID/stat; }
printf '%-22s %-20s %10s %14s\n' proxy load req_per_sec cpu_us_per_req
for round in $(seq "$ROUNDS"); do
  for BIN in "$@"; do
    for k in none lua-load lua-load-per-thread; do
      taskset -c 1 "$BIN" -db -f "$T/$k.cfg" >"$T/proxy.log" 2>&1 & PID=$!
      sleep 0.5
      kill -0 $PID 2>/dev/null || { echo "$(basename "$BIN") did not start: $(head -3 "$T/proxy.log")"; exit 1; }
      c0=$(cpu)
      out=$(taskset -c 0 wrk -t1 -c10 -d"${SECS}s" "http://127.0.0.1:$P/" 2>&1)
      c1=$(cpu)
      n=$(grep -oE '^ *[0-9]+ requests in' <<<"$out" | grep -oE '[0-9]+')
      [ -n "$n" ] && [ "$n" -gt 0 ] || { echo "wrk failed: $(tail -3 <<<"$out")"; exit 1; }
      printf '%-22s %-20s %10s %14s\n' "$(basename "$(dirname "$BIN")")/$(basename "$BIN")" "$k" \
        "$(python3 -c "print(round($n/$SECS))")" "$(python3 -c "print(round(($c1-$c0)*1e6/100/$n,2))")"
      kill $PID; wait $PID 2>/dev/null; PID=
    done
  done
done
