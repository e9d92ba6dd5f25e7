#!/usr/bin/env bash
# bench-ab.sh <git-rev> [rounds] : proxybench A/B of a previous revision (A) against the current
# binary (B), on the three scenarios that catch per-request regressions (docs/PERFORMANCE.md):
#   scripts/bench-ab.sh main~5          # 3 rounds of 6 s per scenario and proxy
#   scripts/bench-ab.sh v0.3 5
# <git-rev> is built in a temporary worktree (removed afterwards) into its own cargo target dir,
# AB_TARGET (default /work/target-bench-ab), kept between runs so that the next build is
# incremental; the first one is seeded with a copy of SEED_TARGET when set (a warm target dir).
# B is NEW (default: $CARGO_TARGET_DIR or <repo>/target, then release/rampart): build it first.
# DURATION (default 6) sets the seconds per measured run, SCENARIOS the scenario list, OUT the
# directory of the JSON results (default /work/bench-ab). Anything after the rounds goes to
# proxybench as is (e.g. --proxy-cpus 1).
# Expect 20-45 % between single runs on a shared machine: read the medians over rounds.
set -euo pipefail
REV=${1:?usage: scripts/bench-ab.sh <git-rev> [rounds] [proxybench options]}
ROUNDS=${2:-3}
shift $(($# < 2 ? $# : 2))
DURATION=${DURATION:-6}
SCENARIOS=${SCENARIOS:-http-keepalive,http-rate,http-close}
PROXYBENCH=${PROXYBENCH:-/work/shared/bench/proxybench.py}
AB_TARGET=${AB_TARGET:-/work/target-bench-ab}
OUT=${OUT:-/work/bench-ab}
ROOT=$(git rev-parse --show-toplevel)
NEW=${NEW:-${CARGO_TARGET_DIR:-$ROOT/target}/release/rampart}

SHA=$(git -C "$ROOT" rev-parse --verify "$REV^{commit}")
SHORT=$(git -C "$ROOT" rev-parse --short "$SHA")
[ -x "$NEW" ] || { echo "no binary at $NEW: build it (cargo build --release -p rampart) or set NEW" >&2; exit 1; }
mkdir -p "$OUT"
OLD=$OUT/rampart-$SHORT

if [ ! -x "$OLD" ]; then
  if [ ! -d "$AB_TARGET" ] && [ -n "${SEED_TARGET:-}" ]; then
    echo "seeding $AB_TARGET from $SEED_TARGET"
    cp -a "$SEED_TARGET" "$AB_TARGET"
  fi
  WT=$(mktemp -d "${TMPDIR:-/tmp}/bench-ab-wt.XXXXXX")
  trap 'git -C "$ROOT" worktree remove --force "$WT" 2>/dev/null || rm -rf "$WT"' EXIT
  git -C "$ROOT" worktree add --detach --quiet "$WT" "$SHA"
  echo "building $SHORT in $WT (target $AB_TARGET)"
  CARGO_TARGET_DIR=$AB_TARGET cargo build --release --quiet --manifest-path "$WT/Cargo.toml" -p rampart --bin rampart
  cp "$AB_TARGET/release/rampart" "$OLD"
fi

JSON=$OUT/ab-$SHORT-vs-$(git -C "$ROOT" rev-parse --short HEAD)-$(date -u +%Y%m%dT%H%M%SZ).json
echo "A = $OLD ($REV), B = $NEW; $ROUNDS rounds of ${DURATION}s; results in $JSON"
python3 "$PROXYBENCH" --proxy "$OLD -f {cfg}" --vs "$NEW -f {cfg}" --rounds "$ROUNDS" \
  --duration "$DURATION" --scenarios "$SCENARIOS" --json "$JSON" "$@"
