#!/usr/bin/env bash
# ctest KesModelBench.* / KesCompare.*: the accuracy tools end to end on a real model (BlazeFace-128).
# kes-model-bench dumps every tensor of one run twice, the second time with an error injected into
# one layer; kes-compare must name exactly that layer as the first divergence, and find no divergence
# between a dump and itself or between the fast kernels and the reference kernels (KES_KERNELS).
# Needs engine/tests/models/fetch_models.sh first; exits 77 (skipped) when the model is not cached.
#   tools_check.sh KES_CONVERT KES_MODEL_BENCH KES_COMPARE WORK_DIR [EMULATOR...]
set -euo pipefail
# A missing dependency skips the test, or fails it under CI (cmake/test_dependency.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../../cmake/test_dependency.sh"
convert=$1 bench=$2 compare=$3 work=$4
shift 4
emu=("$@")
model=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files/blazeface_128.onnx
[ -f "$model" ] || skip_missing "tools check: $model missing (run engine/tests/models/fetch_models.sh)"
rm -rf "$work" && mkdir -p "$work"
"${emu[@]}" "$convert" "$model" --output "$work/bf.kom" >/dev/null

# Latency, memory and the per-layer table.
out=$("${emu[@]}" "$bench" "$work/bf.kom" --iterations 3 --warmup 1 --threads 2 --profile)
head -8 <<<"$out"  # not echo | head: head may close the pipe early (SIGPIPE under pipefail)
for want in "latency" "memory" "total (layer medians)" "igemm-"; do
  grep -q -- "$want" <<<"$out" || { echo "FAIL: kes-model-bench printed no '$want'"; exit 1; }
done

# Dumps: clean, clean again on 1 thread (bit-identical to 2 threads), with the reference kernels
# (the oracle: equal within tolerance), and with an error injected into layer 9.
"${emu[@]}" "$bench" "$work/bf.kom" --iterations 1 --warmup 0 --threads 2 --dump "$work/a" >/dev/null
"${emu[@]}" "$bench" "$work/bf.kom" --iterations 1 --warmup 0 --threads 1 --dump "$work/one" >/dev/null
KES_KERNELS=reference "${emu[@]}" "$bench" "$work/bf.kom" --iterations 1 --warmup 0 --dump "$work/ref" >/dev/null
"${emu[@]}" "$bench" "$work/bf.kom" --iterations 1 --warmup 0 --dump "$work/bad" --inject-error 9 >/dev/null
[ "$(wc -l <"$work/a/order.txt")" -gt 50 ] || { echo "FAIL: the dump holds too few tensors"; exit 1; }
"${emu[@]}" "$compare" "$work/a" "$work/one" --rtol 0 --atol 0 --min-cosine 1 >/dev/null ||
  { echo "FAIL: 1 and 2 threads differ"; exit 1; }
"${emu[@]}" "$compare" "$work/a" "$work/ref" --rtol 1e-3 --atol 1e-4 >"$work/ref.txt" ||
  { cat "$work/ref.txt"; echo "FAIL: the fast kernels diverge from the reference kernels"; exit 1; }
rc=0
"${emu[@]}" "$compare" "$work/a" "$work/bad" >"$work/bad.txt" || rc=$?
cat "$work/bad.txt" | tail -3
[ "$rc" = 1 ] || { echo "FAIL: kes-compare exited $rc on a divergent dump (expected 1)"; exit 1; }
grep -q "^first divergent tensor: .*(layer 9, " "$work/bad.txt" ||
  { echo "FAIL: kes-compare did not name layer 9"; exit 1; }
echo "tools check: kes-compare named the layer with the injected error"
