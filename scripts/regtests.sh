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
# RUNNER    the shared runner (default: shared/tools/regtests/run.sh beside the
#           repository or one level up), which filters tests by their #REQUIRE_* headers, keeps
#           vtest's paths short and names the first failing line
# OUT       results TSV (default: /tmp/regtests-<program>.tsv)
# RUNDIR    where the per-test vtest logs go (default: <OUT without .tsv>.run)
# JOBS, TEST_TIMEOUT, RETRY_FAILED are passed to the runner (defaults 2, 20, 0).
# REPORT_ONLY=1 prints the table of an earlier run (OUT, RUNDIR) without running.
#
# The tests are read where they are and never copied into this repository.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${VTEST:?set VTEST to the vtest binary}"
: "${REGTESTS:?set REGTESTS to the reg-tests directory of HAProxy 2.6}"
runner=${RUNNER:-}
for up in .. ../..; do   # shared/ sits beside the main checkout (worktrees are one deeper)
  [ -n "$runner" ] || [ ! -x "$repo/$up/shared/tools/regtests/run.sh" ] || runner=$repo/$up/shared/tools/regtests/run.sh
done
[ -x "$runner" ] || { echo "regtests.sh: runner not found: $runner (set RUNNER)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "usage: regtests.sh FOLDER|TEST.vtc ..." >&2; exit 2; }

program=${PROGRAM:-$repo/target/release/rampart}
if [ -z "${PROGRAM:-}" ] && [ "${NO_BUILD:-0}" != 1 ] && [ "${REPORT_ONLY:-0}" != 1 ]; then
  (cd "$repo" && cargo build --release -p rampart --quiet)
fi
[ -x "$program" ] || { echo "regtests.sh: no program at $program" >&2; exit 2; }

out=${OUT:-/tmp/regtests-$(basename "$program").tsv}
rundir=${RUNDIR:-${out%.tsv}.run}
if [ "${REPORT_ONLY:-0}" != 1 ]; then
  rm -rf "$rundir"
  # rampart reports HAProxy's version in -vv; say it for binaries that do not.
  version=${PROXY_VERSION:-2.6.12}
  VTEST=$VTEST REGTESTS=$REGTESTS HAPROXY_PROGRAM=$program PROXY_VERSION=$version \
    JOBS=${JOBS:-2} TEST_TIMEOUT=${TEST_TIMEOUT:-20} RETRY_FAILED=${RETRY_FAILED:-0} OUT=$out RUNDIR=$rundir \
    "$runner" "$@" >"${out%.tsv}.log" 2>&1 || true
fi
[ -s "$out" ] || { echo "regtests.sh: the runner wrote no results; see ${out%.tsv}.log" >&2; exit 2; }

# The table: test, result, reason. For a configuration the program refused, the
# reason lists every distinct [ALERT] of the vtest log ("'x' (not yet)" for a keyword
# rampart does not implement yet, else the message), each with the line of the test's
# configuration where it first appears; otherwise it is the runner's: the first vtest
# error line (the failed `expect`, a timeout ...).
python3 - "$out" "$rundir/logs" <<'PY'
import csv, os, re, sys
out, logs = sys.argv[1], sys.argv[2]
skip = ("Error(s) found", "Fatal errors found", "multiple argument resolution errors")
alert = re.compile(r"\[ALERT\]\s+\(\d+\) : (?:config : )?(?:parsing \[[^\]]*?:(\d+)\] ?: ?)?(.*)")
rows = list(csv.reader(open(out), delimiter="\t", quoting=csv.QUOTE_NONE))
for row in sorted(rows[1:]):
    test, result, reason = row[0], row[2], row[3]
    if result == "fail":
        seen = {}
        log = os.path.join(logs, test.replace("/", "__") + ".log")
        for line in open(log, errors="replace") if os.path.exists(log) else []:
            m = alert.search(line)
            if m and not m.group(2).startswith(skip):
                what = m.group(2).strip()
                # "error detected in frontend 'fe' while parsing '...' rule : X" -> X
                what = re.sub(r"^error detected in .*? : (?=\S)", "", what)
                what = re.sub(r" (is|are) not supported yet\.?$", " (not yet)", what)
                seen.setdefault(what, m.group(1))
        if seen:
            reason = "config refused: " + "; ".join(f"{k} cfg:{v}" if v else k for k, v in seen.items())
    print(f"{test}\t{result}\t{reason}")
PY
echo
grep '^#' "${out%.tsv}.summary.tsv" || true
grep -v '^#' "${out%.tsv}.summary.tsv" | column -t -s$'\t' 2>/dev/null || grep -v '^#' "${out%.tsv}.summary.tsv"
pass=$(awk -F'\t' 'NR > 1 && $3 == "pass"' "$out" | wc -l)
fail=$(awk -F'\t' 'NR > 1 && $3 == "fail"' "$out" | wc -l)
skip=$(awk -F'\t' 'NR > 1 && $3 == "skipped"' "$out" | wc -l)
echo "regtests: $pass passed, $fail failed, $skip skipped"
echo "results: $out"
