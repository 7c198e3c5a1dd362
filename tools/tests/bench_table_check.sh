#!/usr/bin/env bash
# ctest Tools.BenchTableRegeneratesTheReadmeSection: tools/bench_table.py on recorded measurements (a
# kes-bench Google Benchmark JSON and a bench/engine/run.sh --json file) rewrites only the marked
# section of a README copy, with the right ratios, and refuses a README without markers.
#   bench_table_check.sh WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$1
mkdir -p "$work"
# A missing dependency skips the test, or fails it under CI (cmake/test_dependency.sh).
. "$here/../../cmake/test_dependency.sh"
command -v python3 >/dev/null || skip_missing "python3 missing"
cat >"$work/kes.json" <<'JSON'
{"context": {"num_cpus": 2, "mhz_per_cpu": 2600},
 "benchmarks": [
  {"name": "P1 jpeg 1080p:kestrel", "run_name": "P1 jpeg 1080p:kestrel", "run_type": "iteration", "iterations": 10, "real_time": 2.5, "cpu_time": 2.0, "time_unit": "ms"},
  {"name": "P1 jpeg 1080p:opencv", "run_name": "P1 jpeg 1080p:opencv", "run_type": "iteration", "iterations": 10, "real_time": 9.0, "cpu_time": 5.0, "time_unit": "ms"},
  {"name": "P1 jpeg 1080p:turbojpeg", "run_name": "P1 jpeg 1080p:turbojpeg", "run_type": "iteration", "iterations": 10, "real_time": 1.9, "cpu_time": 1.9, "time_unit": "ms"},
  {"name": "aipp/x:kestrel/min_time:0.100/repeats:9_mean", "run_name": "aipp/x:kestrel/min_time:0.100/repeats:9", "run_type": "aggregate", "aggregate_name": "mean", "iterations": 9, "real_time": 90, "cpu_time": 40, "time_unit": "us"},
  {"name": "aipp/x:kestrel/min_time:0.100/repeats:9_median", "run_name": "aipp/x:kestrel/min_time:0.100/repeats:9", "run_type": "aggregate", "aggregate_name": "median", "iterations": 9, "real_time": 80, "cpu_time": 30, "time_unit": "us"},
  {"name": "aipp/x:opencv/min_time:0.100/repeats:9_median", "run_name": "aipp/x:opencv/min_time:0.100/repeats:9", "run_type": "aggregate", "aggregate_name": "median", "iterations": 9, "real_time": 100, "cpu_time": 60, "time_unit": "us"},
  {"name": "vdec:kestrel/repeats:5/real_time_median", "run_name": "vdec:kestrel/repeats:5/real_time", "run_type": "aggregate", "aggregate_name": "median", "iterations": 5, "real_time": 10, "cpu_time": 1, "time_unit": "ms"},
  {"name": "vdec:ffmpeg/repeats:5/real_time_median", "run_name": "vdec:ffmpeg/repeats:5/real_time", "run_type": "aggregate", "aggregate_name": "median", "iterations": 5, "real_time": 9, "cpu_time": 0.5, "time_unit": "ms"},
  {"name": "solo:kestrel", "run_name": "solo:kestrel", "run_type": "iteration", "iterations": 3, "real_time": 7, "cpu_time": 7, "time_unit": "ns"}
 ]}
JSON
cat >"$work/engine.json" <<'JSON'
[{"case": "P6 blazeface_256", "threads": 1, "kestrel": {"median_ms": 4.0}, "ort": {"median_ms": 3.0}, "opencv": {"median_ms": 8.0}}]
JSON
printf 'intro\n<!-- bench-table:begin -->\nstale\n<!-- bench-table:end -->\noutro\n' >"$work/README.md"
python3 "$here/../bench_table.py" --readme "$work/README.md" --kes-bench "$work/kes.json" --engine "$work/engine.json"
grep -q '^intro$' "$work/README.md" && grep -q '^outro$' "$work/README.md" || { echo "FAIL: text outside the markers changed"; exit 1; }
grep -q stale "$work/README.md" && { echo "FAIL: the old table stayed"; exit 1; }
# CPU time unless the case asked for wall time (real_time); with repetitions, the medians.
for row in '| P1 jpeg 1080p | opencv | 2 ms | 5 ms | 2.50× |' '| P1 jpeg 1080p | turbojpeg | 2 ms | 1.9 ms | 0.95× |' \
           '| aipp/x | opencv | 30 µs | 60 µs | 2.00× |' '| vdec | ffmpeg | 10 ms | 9 ms | 0.90× |' \
           '| P6 blazeface_256, 1 thread | ONNX Runtime 1.30 | 4 ms | 3 ms | 0.75× |' \
           '| P6 blazeface_256, 1 thread | OpenCV 4.6 DNN | 4 ms | 8 ms | 2.00× |'; do
  grep -qF "$row" "$work/README.md" || { echo "FAIL: missing row $row"; cat "$work/README.md"; exit 1; }
done
grep -q solo "$work/README.md" && { echo "FAIL: a case without a peer made a row"; exit 1; }
printf 'no markers\n' >"$work/bad.md"
if python3 "$here/../bench_table.py" --readme "$work/bad.md" --engine "$work/engine.json" 2>"$work/err"; then
  echo "FAIL: a README without markers was accepted"; exit 1
fi
grep -q "must hold one" "$work/err" || { echo "FAIL: unclear error: $(cat "$work/err")"; exit 1; }
echo "bench_table: regenerates the marked section"
