#!/bin/sh
# Runs a proxy on a copy of an HAProxy-syntax config with log lines added to its
# `defaults` section, for proxybench.py (which writes the config itself):
#
#   proxybench.py --proxy 'rampart -f {cfg}' \
#     --vs 'scripts/with-log-cfg.sh {cfg} rampart -f @CFG@'
#
# LOG_LINES (default: a UDP syslog target on 127.0.0.1:5514 and `option httplog`)
# holds the lines, separated by `;`. `@CFG@` in the command becomes the copy's path.
# The proxy is exec'ed, so the benchmark's PID and CPU accounting stay the proxy's.
set -eu
cfg=$1
shift
lines=${LOG_LINES:-"log 127.0.0.1:5514 local0;option httplog"}
out="${cfg%.cfg}-log.cfg"
awk -v lines="$lines" '
  { print }
  /^defaults/ { n = split(lines, l, ";"); for (i = 1; i <= n; i++) print "    " l[i] }
' "$cfg" > "$out"
cmd=""
for a in "$@"; do
  if [ "$a" = "@CFG@" ]; then a=$out; fi
  cmd="$cmd '$(printf %s "$a" | sed "s/'/'\\\\''/g")'"
done
eval "exec $cmd"
