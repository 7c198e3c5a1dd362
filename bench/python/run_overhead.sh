#!/usr/bin/env bash
# bench/python/run_overhead.sh — the Python module's per-call overhead (issue 27): kestrel's
# Context.run against kes_model_execute (kes-model-bench), on BlazeFace-128 at 1 thread, in one run.
# Goal: Python's median ≤ 1.05 × C's.
#
#   bench/python/run_overhead.sh [BUILD_DIR] [--iterations N] [--rounds R]   (or ./kestrel.sh bench-python)
# Needs the host build with the Python module (kes-convert, kes-model-bench, build/host/python) and the
# model cache of engine/tests/models/fetch_models.sh. Each round runs the C and the Python benchmark, one
# process each, pinned to one CPU, N timed runs after 20 warm-up, in alternating order (a shared
# machine's load then hits both sides alike); the ratios are of the medians of the rounds' medians and
# of the least minimums (the steadier figure on a loaded machine: a call's own cost, without preemption).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build/host"
iterations=300
rounds=10
build_given=""
usage_error() { echo "run_overhead.sh: $1 (run_overhead.sh -h for usage)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --iterations|--rounds)
      [ $# -ge 2 ] && [ -n "$2" ] || usage_error "$1 needs a value"
      case "$1" in --iterations) iterations=$2 ;; --rounds) rounds=$2 ;; esac
      shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) usage_error "unknown option $1" ;;
    *) [ -z "$build_given" ] || usage_error "one BUILD_DIR only (got $build_given and $1)"
       build=$1; build_given=$1; shift ;;
  esac
done
[[ "$iterations" =~ ^[1-9][0-9]*$ ]] || usage_error "--iterations takes a positive integer, not '$iterations'"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || usage_error "--rounds takes a positive integer, not '$rounds'"
model=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files/blazeface_128.onnx
[ -f "$model" ] || { echo "run_overhead.sh: $model missing: run engine/tests/models/fetch_models.sh" >&2; exit 1; }
for t in engine/kes-model-bench engine/kes-convert; do
  [ -x "$build/$t" ] || { echo "run_overhead.sh: build $build first ($t)" >&2; exit 1; }
done
ls "$build"/python/kestrel/_kestrel*.so >/dev/null 2>&1 ||
  { echo "run_overhead.sh: no Python module in $build/python (configure with pybind11-dev and python3-dev)" >&2; exit 1; }
# Debian's interpreter (its python3-numpy), as python/CMakeLists.txt picks it; KES_PYTHON overrides.
python=${KES_PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=python3
work="$build/bench-python"
mkdir -p "$work"
"$build/engine/kes-convert" "$model" -o "$work/blazeface_128.kom" >/dev/null

field() { sed -n "s/.*\"$2\": *\([^,}]*\).*/\1/p" <<<"$1" | tr -d '"'; }
py_field() { "$python" -c 'import json, sys; d = json.loads(sys.argv[1]); print(d[sys.argv[2]][sys.argv[3]])' "$@"; }
# Both sides on one CPU (the last, or KES_BENCH_CPU): no migrations, the same cache.
cpu=${KES_BENCH_CPU:-$(($(nproc) - 1))}
pin=(); command -v taskset >/dev/null && pin=(taskset -c "$cpu")
c_bench() {
  "${pin[@]}" "$build/engine/kes-model-bench" "$work/blazeface_128.kom" --threads 1 --iterations "$iterations" \
    --warmup 20 --json
}
py_bench() {
  PYTHONPATH="$build/python" "${pin[@]}" "$python" "$root/bench/python/run_overhead.py" "$work/blazeface_128.kom" \
    --threads 1 --iterations "$iterations" --warmup 20
}
c_med=(); c_min=(); into_med=(); into_min=(); run_med=(); run_min=()
echo "BlazeFace-128, 1 thread${pin[*]:+ (pinned to CPU $cpu)}: $rounds rounds of $iterations runs after 20 warm-up; ms"
printf "%6s  %-19s  %-19s  %-19s\n" round "C execute med/min" "py run_into med/min" "py run med/min"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then c=$(c_bench); p=$(py_bench); else p=$(py_bench); c=$(c_bench); fi
  c_med+=("$(field "$c" median_ms)"); c_min+=("$(field "$c" min_ms)")
  into_med+=("$(py_field "$p" run_into median_ms)"); into_min+=("$(py_field "$p" run_into min_ms)")
  run_med+=("$(py_field "$p" run median_ms)"); run_min+=("$(py_field "$p" run min_ms)")
  printf "%6s  %8.4f / %-8.4f  %8.4f / %-8.4f  %8.4f / %-8.4f\n" "$r" "${c_med[-1]}" "${c_min[-1]}" \
    "${into_med[-1]}" "${into_min[-1]}" "${run_med[-1]}" "${run_min[-1]}"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
least() { printf '%s\n' "$@" | sort -g | head -1; }
awk -v c="$(median "${c_med[@]}")" -v into="$(median "${into_med[@]}")" -v run="$(median "${run_med[@]}")" \
    -v cm="$(least "${c_min[@]}")" -v im="$(least "${into_min[@]}")" -v rm="$(least "${run_min[@]}")" 'BEGIN {
  printf "%6s  %8.4f / %-8.4f  %8.4f / %-8.4f  %8.4f / %-8.4f   (median of medians / least min)\n", "all", c, cm, into, im, run, rm
  printf "Python / C, medians: run(x, outputs=...) %.3f (%+.1f us a call), run(x) %.3f (%+.1f us)\n", into / c, (into - c) * 1000, run / c, (run - c) * 1000
  printf "Python / C, minimums: run(x, outputs=...) %.3f (%+.1f us a call), run(x) %.3f (%+.1f us); goal <= 1.05\n", im / cm, (im - cm) * 1000, rm / cm, (rm - cm) * 1000 }'
