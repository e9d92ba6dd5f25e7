#!/usr/bin/env bash
# Runs HAProxy's own reg-tests (VTest .vtc files) against rampart, or any
# haproxy-compatible binary, and prints one line per test: result and first reason.
#
#   VTEST=/tmp/vtest/vtest REGTESTS=/tmp/haproxy-2.6/reg-tests \
#     scripts/regtests.sh http-rules converter sample_fetches tcp-rules http-errorfiles
#
# VTEST     the vtest binary (build: ../shared/tools/regtests/build-vtest.sh)
# REGTESTS  HAProxy 2.6's reg-tests/ directory (../shared/tools/get-regtests.sh)
# PROGRAM   the proxy under test (default: target/release/rampart, built first
#           with `cargo build --release -p rampart` unless NO_BUILD=1);
#           PROGRAM=/usr/sbin/haproxy gives the reference results
# RUNNER    the shared runner (default: ../shared/tools/regtests/run.sh beside the
#           repository), which filters tests by their #REQUIRE_* headers, keeps
#           vtest's paths short and names the first failing line
# OUT       results TSV (default: /tmp/regtests-<program>.tsv)
# JOBS, TEST_TIMEOUT, RETRY_FAILED are passed to the runner (defaults 2, 20, 0).
#
# The tests are read where they are and never copied into this repository.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${VTEST:?set VTEST to the vtest binary}"
: "${REGTESTS:?set REGTESTS to HAProxy 2.6's reg-tests directory}"
runner=${RUNNER:-$repo/../shared/tools/regtests/run.sh}
[ -x "$runner" ] || { echo "regtests.sh: runner not found: $runner (set RUNNER)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "usage: regtests.sh FOLDER|TEST.vtc ..." >&2; exit 2; }

program=${PROGRAM:-$repo/target/release/rampart}
if [ -z "${PROGRAM:-}" ] && [ "${NO_BUILD:-0}" != 1 ]; then
  (cd "$repo" && cargo build --release -p rampart --quiet)
fi
[ -x "$program" ] || { echo "regtests.sh: no program at $program" >&2; exit 2; }

out=${OUT:-/tmp/regtests-$(basename "$program").tsv}
# rampart reports HAProxy's version in -vv; say it for binaries that do not.
version=${PROXY_VERSION:-2.6.12}
VTEST=$VTEST REGTESTS=$REGTESTS HAPROXY_PROGRAM=$program PROXY_VERSION=$version \
  JOBS=${JOBS:-2} TEST_TIMEOUT=${TEST_TIMEOUT:-20} RETRY_FAILED=${RETRY_FAILED:-0} OUT=$out \
  "$runner" "$@" >"${out%.tsv}.log" 2>&1 || true
[ -s "$out" ] || { echo "regtests.sh: the runner wrote no results; see ${out%.tsv}.log" >&2; exit 2; }

# The table: test, result, first reason (cut to keep lines readable).
awk -F'\t' 'NR > 1 { r = $4; if (length(r) > 110) r = substr(r, 1, 107) "...";
                     printf "%-50s %-8s %s\n", $1, $3, r }' "$out" | sort
echo
column -t -s$'\t' "${out%.tsv}.summary.tsv" 2>/dev/null || cat "${out%.tsv}.summary.tsv"
pass=$(awk -F'\t' 'NR > 1 && $3 == "pass"' "$out" | wc -l)
fail=$(awk -F'\t' 'NR > 1 && $3 == "fail"' "$out" | wc -l)
skip=$(awk -F'\t' 'NR > 1 && $3 == "skipped"' "$out" | wc -l)
echo "regtests: $pass passed, $fail failed, $skip skipped"
echo "results: $out"
