#!/usr/bin/env bash
# ctest Soak.UnwritableTraceFailsTheRun: a short kes-soak (20 frames, no growth bound: this is not the soak
# of run.sh) on the real models passes with a writable KES_TRACE, which it writes, and fails (exit 1,
# the path named) with one it cannot write: the at-exit writer reported it, and the run exited 0.
# Needs engine/tests/models/fetch_models.sh first (./kestrel.sh test runs it), cjpeg and ffmpeg; exits 77
# (skipped) when they are missing, or 1 under KES_REQUIRE_TEST_DEPS (CI).
#   check.sh KES_CONVERT KES_SOAK WORK_DIR
set -euo pipefail
# A missing dependency skips the test, or fails it under CI (cmake/test_dependency.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../../cmake/test_dependency.sh"
fail() { echo "FAIL: $*"; exit 1; }
[ $# -eq 3 ] || { echo "usage: check.sh KES_CONVERT KES_SOAK WORK_DIR" >&2; exit 2; }
convert=$1 soak=$2 work=$3
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
for f in blazeface_256.onnx mobilefacenet.tflite photo1.ppm photo2.ppm photo3.ppm photo4.ppm photo5.ppm photo6.ppm; do
  [ -f "$cache/$f" ] || skip_missing "soak check: $cache/$f missing (run engine/tests/models/fetch_models.sh)"
done
command -v cjpeg >/dev/null || skip_missing "soak check: needs cjpeg (libjpeg-turbo-progs)"
command -v ffmpeg >/dev/null || skip_missing "soak check: needs ffmpeg"
rm -rf "$work"
mkdir -p "$work"
bash "$root/samples/face-search/make_demo_data.sh" "$cache" "$work/data" 1 >/dev/null
aipp=$root/samples/face-search/aipp_rgb_centered.cfg
"$convert" "$cache/blazeface_256.onnx" --output "$work/blazeface_256.kom" --insert-op-conf "$aipp" >/dev/null
"$convert" "$cache/mobilefacenet.tflite" --output "$work/mobilefacenet.kom" --dynamic-batch 1,2 \
  --insert-op-conf "$aipp" >/dev/null
run() {
  "$soak" "$work/blazeface_256.kom" "$work/mobilefacenet.kom" "$work/data/demo.mp4" --frames 20 --every 10 \
    --warmup 10 --bound-kib 1000000 --heap-bound-kib 1000000 >"$work/out.txt" 2>&1
}

rc=0
KES_TRACE=$work/trace.json run || rc=$?
[ $rc -eq 0 ] || { cat "$work/out.txt"; fail "kes-soak with KES_TRACE=$work/trace.json exited $rc, not 0"; }
grep -q '"traceEvents"' "$work/trace.json" || fail "kes-soak wrote no trace to $work/trace.json"
echo "writable KES_TRACE: exit 0, trace written"

rc=0
KES_TRACE=/nonexistent/dir/t.json run || rc=$?
cat "$work/out.txt"
grep -q '^kes-soak: PASS' "$work/out.txt" || fail "the soak itself did not pass"
grep -q 'kes-soak: KES_TRACE: .*/nonexistent/dir/t.json' "$work/out.txt" || fail "the unwritable trace is not named"
[ $rc -eq 1 ] || fail "kes-soak with KES_TRACE=/nonexistent/dir/t.json exited $rc, not 1"
echo "unwritable KES_TRACE: exit 1, named"
