#!/usr/bin/env bash
# Runs every fuzz target (or the named ones) with libFuzzer under ASan+UBSan for a fixed time each and
# reports runs, coverage and findings per target. `./kestrel.sh fuzz` builds the fuzz preset and calls this.
#
#   tools/fuzz/run.sh BUILD_DIR [--seconds N] [--jobs J] [target ...]     (target: jpeg_decode, npy, ...)
#
# Each target starts from its seed corpus (the directory its <name>.ReplaySeeds test replays, read only)
# plus a working corpus kept in BUILD_DIR/fuzz-corpus/<name>, so later runs resume where earlier ones
# stopped. A crash, leak, timeout or out-of-memory input is copied into the target's seed directory
# under its libFuzzer name: from then on the target's ReplaySeeds test replays it in every CI run
# (and fails until the bug is fixed), which is how a finding becomes a regression test.
# The table goes to stdout and to BUILD_DIR/fuzz-summary.md. Exit status 1 when anything was found.
set -euo pipefail

usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; }

[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in -h | --help) usage; exit 0 ;; esac
BUILD=$1; shift
SECONDS_PER_TARGET=600
JOBS=1
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_PER_TARGET=${2:?--seconds needs a number}; shift 2 ;;
    --jobs) JOBS=${2:?--jobs needs a number}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "fuzz: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
for n in "$SECONDS_PER_TARGET" "$JOBS"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: '$n' is not a positive whole number" >&2; exit 2; }
done
[ -f "$BUILD/CTestTestfile.cmake" ] || { echo "fuzz: $BUILD is not a configured build with tests" >&2; exit 2; }
BUILD=$(cd "$BUILD" && pwd)

# name<TAB>executable<TAB>seed dir, from the ReplaySeeds tests (the one place that pairs them).
LIST=$(ctest --test-dir "$BUILD" --show-only=json-v1 -L fuzz | /usr/bin/env python3 -c '
import json, sys
for t in json.load(sys.stdin)["tests"]:
    name = t["name"]
    if not name.endswith(".ReplaySeeds"):
        continue
    cmd = t["command"]
    print("\t".join([name[: -len(".ReplaySeeds")], cmd[0], cmd[1] if len(cmd) > 1 else ""]))
')
[ -n "$LIST" ] || { echo "fuzz: no fuzz targets registered in $BUILD" >&2; exit 1; }
if [ ${#TARGETS[@]} -gt 0 ]; then
  for t in "${TARGETS[@]}"; do
    grep -q "^$t	" <<<"$LIST" || { echo "fuzz: no target '$t' (have: $(cut -f1 <<<"$LIST" | tr '\n' ' '))" >&2; exit 2; }
  done
  LIST=$(grep -E "^($(IFS='|'; echo "${TARGETS[*]}"))	" <<<"$LIST")
fi
# A replay-driver build cannot fuzz: say how to get a libFuzzer one.
first=$(head -1 <<<"$LIST" | cut -f2)
help=$("$first" -help=1 2>&1 || true)
if ! grep -q "max_total_time" <<<"$help"; then
  echo "fuzz: $first is not linked with libFuzzer; build the fuzz preset (./kestrel.sh fuzz)" >&2
  exit 2
fi

OUT="$BUILD/fuzz-runs"
mkdir -p "$OUT"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {
  local name=$1 exe=$2 seeds=$3
  local corpus="$BUILD/fuzz-corpus/$name" findings="$OUT/$name.findings"
  rm -rf "$findings"
  mkdir -p "$corpus" "$findings"
  local dirs=("$corpus")
  [ -n "$seeds" ] && [ -d "$seeds" ] && dirs+=("$seeds")
  # -timeout: one input may take this long (sanitized decoders are slow); -rss_limit_mb: the board-sized
  # memory a parser may use before its input counts as an out-of-memory finding.
  "$exe" "${dirs[@]}" -max_total_time="$SECONDS_PER_TARGET" -timeout=30 -rss_limit_mb=2560 \
    -print_final_stats=1 -artifact_prefix="$findings/" >"$OUT/$name.log" 2>&1 || true
}
export -f run_one
export BUILD OUT SECONDS_PER_TARGET

echo "fuzz: $(wc -l <<<"$LIST") targets, ${SECONDS_PER_TARGET} s each, $JOBS at a time (logs in $OUT)"
tr '\t' '\n' <<<"$LIST" | xargs -d '\n' -n 3 -P "$JOBS" bash -c 'run_one "$@"' _

found=0
{
  echo "| target | seconds | runs | runs/s | coverage (edges) | corpus | peak RSS MB | findings |"
  echo "|---|---|---|---|---|---|---|---|"
  while IFS=$'\t' read -r name exe seeds; do
    log="$OUT/$name.log"
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
    corp=$(grep -oE 'corp: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
    n=0 what=""
    for f in "$OUT/$name.findings"/*; do
      [ -e "$f" ] || continue
      n=$((n + 1))
      what="$what $(basename "$f")"
      # Kept as a seed: the ReplaySeeds test replays it from now on.
      [ -n "$seeds" ] && [ -d "$seeds" ] && cp "$f" "$seeds/"
    done
    if [ -z "$runs" ] && [ "$n" = 0 ]; then what=" did not run: see $log"; n="?"; fi
    [ "$n" != 0 ] && found=1
    echo "| $name | $SECONDS_PER_TARGET | ${runs:-?} | ${rate:-?} | ${cov:-?} | ${corp:-?} | ${rss:-?} | $n${what:+ ($what )} |"
  done <<<"$LIST"
} | tee "$BUILD/fuzz-summary.md"
if [ "$found" != 0 ]; then
  echo "fuzz: findings were copied into the targets' seed directories; fix them, then commit the seeds" >&2
  exit 1
fi
