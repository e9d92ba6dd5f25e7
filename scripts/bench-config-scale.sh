#!/usr/bin/env bash
# Configuration scale (issue 27, item 6): `-c` time, time until the listener accepts,
# and the running process's RSS, for rampart and haproxy on one generated
# configuration: one frontend, N backends (default 20 000) with `balance roundrobin`
# and five `server` lines each (servers never contacted: no checks).
#
#   scripts/bench-config-scale.sh [backends] [rounds]
#
# RAMPART (default target/release/rampart), HAPROXY (default /usr/sbin/haproxy) and
# PORT (default 18080) override. Rounds alternate the two proxies; the report gives
# each figure's median and the rampart/haproxy ratio. Times depend on the machine's
# load: compare within one run.
set -euo pipefail

backends=${1:-20000}
rounds=${2:-3}
rampart=${RAMPART:-target/release/rampart}
haproxy=${HAPROXY:-/usr/sbin/haproxy}
port=${PORT:-18080}
dir=$(mktemp -d /tmp/bench-config-scale.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cfg=$dir/scale.cfg

python3 - "$backends" "$port" >"$cfg" <<'EOF'
import sys
n, port = int(sys.argv[1]), sys.argv[2]
out = ["global", "    maxconn 1000", "defaults", "    mode http", "    timeout client 10s",
       "    timeout server 10s", "    timeout connect 5s", "frontend fe",
       f"    bind 127.0.0.1:{port}", "    default_backend be0"]
for b in range(n):
    out += [f"backend be{b}", "    balance roundrobin"]
    out += [f"    server s{s} 127.0.{b // 250}.{b % 250 + 1}:{8000 + s}" for s in range(5)]
print("\n".join(out))
EOF

now() { date +%s.%N; }

# seconds of `-c`
check_time() {
    local t0
    t0=$(now)
    "$1" -c -f "$cfg" >/dev/null 2>&1
    echo "$(now) - $t0" | bc
}

# seconds until the port accepts, then RSS in KiB a second later
start_time_rss() {
    local t0 pid t1 rss
    t0=$(now)
    "$1" -f "$cfg" >/dev/null 2>&1 &
    pid=$!
    until bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; do
        kill -0 "$pid" 2>/dev/null || { echo "$1 exited before listening" >&2; exit 1; }
        sleep 0.05
    done
    t1=$(now)
    sleep 1
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    echo "$(echo "$t1 - $t0" | bc) $rss"
}

declare -A vals
for r in $(seq 1 "$rounds"); do
    order=(rampart haproxy)
    ((r % 2 == 0)) && order=(haproxy rampart)
    for who in "${order[@]}"; do
        bin=$rampart
        [[ $who == haproxy ]] && bin=$haproxy
        c=$(check_time "$bin")
        read -r s rss < <(start_time_rss "$bin")
        vals[$who,check]+="$c "
        vals[$who,start]+="$s "
        vals[$who,rss]+="$rss "
        echo "round $r $who: -c ${c}s, listening after ${s}s, RSS ${rss} KiB" >&2
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "backends=$backends servers=$((backends * 5)) rounds=$rounds"
printf '%-22s %14s %14s %8s\n' figure haproxy rampart ratio
for f in check start rss; do
    h=$(echo "${vals[haproxy,$f]}" | median)
    m=$(echo "${vals[rampart,$f]}" | median)
    printf '%-22s %14s %14s %8.3f\n' "$f" "$h" "$m" "$(echo "$m / $h" | bc -l)"
done
