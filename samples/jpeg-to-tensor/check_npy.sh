#!/usr/bin/env bash
# ctest jpeg-to-tensor.TensorFileFeedsKesModelBench: jpeg-to-tensor -o t.npy, then kes-model-bench
# --input x=t.npy on a model that upsamples its input ×2 (nearest: every value kept, each four times),
# and the dumped output's per-channel mean, min and max are the ones jpeg-to-tensor printed for its
# tensor. A tensor of another size is refused by name.
#   check_npy.sh JPEG_TO_TENSOR KES_CONVERT KES_MODEL_BENCH UPSAMPLE.onnx WORK_DIR [EMULATOR ...]
set -euo pipefail
j2t=$1 convert=$2 bench=$3 model=$4 work=$5
shift 5
run=("$@")
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
out=$("${run[@]}" "$j2t" --size 32 -o "$work/t.npy")
echo "$out"
grep -q "^wrote   $work/t.npy (1x3x32x32 f32 NCHW" <<<"$out" || fail "jpeg-to-tensor did not say it wrote $work/t.npy"
"${run[@]}" "$convert" "$model" --input-shape x:1,3,32,32 -o "$work/up.kom" >/dev/null
"${run[@]}" "$bench" "$work/up.kom" --input "x=$work/t.npy" --iterations 1 --warmup 0 --dump "$work/dump" >/dev/null
# The output's floats (after the .npy header), per channel: mean, min, max with jpeg-to-tensor's rounding.
npy=$work/dump/y.npy
[ -f "$npy" ] || fail "no $npy in the dump ($(ls "$work/dump"))"
header=$(od -An -tu2 -j8 -N2 "$npy" | tr -d ' ')
got=$(od -An -v -tf4 -j$((10 + header)) "$npy" | awk -v plane=$((64 * 64)) '
  { for (i = 1; i <= NF; i++) { c = int(n / plane); v = $i + 0; s[c] += v;
      if (!(c in lo) || v < lo[c]) lo[c] = v; if (!(c in hi) || v > hi[c]) hi[c] = v; n++ } }
  END { for (c = 0; c < 3; c++) printf "%+.3f %+.3f %+.3f\n", s[c] / plane, lo[c], hi[c] }')
want=$(sed -n 's/^ *channel [RGB]: mean \([-+0-9.]*\)  min \([-+0-9.]*\)  max \([-+0-9.]*\)$/\1 \2 \3/p' <<<"$out")
echo "jpeg-to-tensor: $(tr '\n' ';' <<<"$want")"
echo "through the model: $(tr '\n' ';' <<<"$got")"
[ "$got" = "$want" ] || fail "the tensor kes-model-bench read is not the one jpeg-to-tensor wrote"
# Another size is another tensor: refused, naming the file.
"${run[@]}" "$j2t" --size 34 -o "$work/t34.npy" >/dev/null
rc=0
msg=$("${run[@]}" "$bench" "$work/up.kom" --input "x=$work/t34.npy" --iterations 1 --warmup 0 2>&1) || rc=$?
[ "$rc" = 1 ] && grep -q "t34.npy: f32 array of 13872 bytes; input 'x' takes f32 of 12288 bytes" <<<"$msg" ||
  fail "a 34x34 tensor was not refused by name (exit $rc: $msg)"
echo "jpeg-to-tensor -o: kes-model-bench reads the tensor it wrote"
