#!/usr/bin/env bash
# ctest face-search.FindsShiftedFaces: the whole pipeline on a real photo. Converts BlazeFace and
# MobileFaceNet with kes-convert (with their AIPP inserted, and once more without, where face-search
# runs AIPP itself: both must print the same), enrolls the faces of sample photo 1, then queries a copy of the photo
# shifted by (16, 8) pixels (jpegtran -crop, so the pixels of every face change): every face must come
# back as its own gallery entry with cosine > 0.85. Needs engine/tests/models/fetch_models.sh first
# (./kestrel.sh test runs it); exits 77 (skipped) when the models are not in the cache.
#   check.sh KES_CONVERT FACE_SEARCH WORK_DIR
set -euo pipefail
# A missing dependency skips the test (exit 77), or fails it when KES_REQUIRE_TEST_DEPS is set (CI).
skip() {
  echo "$1"
  if [ -n "${KES_REQUIRE_TEST_DEPS:-}" ] && [ "$KES_REQUIRE_TEST_DEPS" != 0 ]; then exit 1; fi
  exit 77
}
convert=$1 search=$2 work=$3
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
for f in blazeface_256.onnx mobilefacenet.tflite photo1.ppm; do
  [ -f "$cache/$f" ] || skip "face-search check: $cache/$f missing (run engine/tests/models/fetch_models.sh)"
done
command -v cjpeg >/dev/null && command -v jpegtran >/dev/null || skip "needs libjpeg-turbo-progs"
mkdir -p "$work"
# The models carry their AIPP (--insert-op-conf: they consume NV12 as on a board) ...
aipp="$(dirname "${BASH_SOURCE[0]}")/aipp_rgb_centered.cfg"
"$convert" "$cache/blazeface_256.onnx" --output "$work/blazeface_256.kom" --insert-op-conf "$aipp" >/dev/null
"$convert" "$cache/mobilefacenet.tflite" --output "$work/mobilefacenet.kom" --dynamic-batch 1,2 \
  --insert-op-conf "$aipp" >/dev/null
# ... and, without it, face-search applies the same AIPP itself: the results must be identical.
"$convert" "$cache/blazeface_256.onnx" --output "$work/blazeface_256_plain.kom" >/dev/null
"$convert" "$cache/mobilefacenet.tflite" --output "$work/mobilefacenet_plain.kom" --dynamic-batch 1,2 >/dev/null
cjpeg -quality 92 -outfile "$work/photo1.jpg" "$cache/photo1.ppm"
jpegtran -crop 900x600+16+8 -outfile "$work/photo1_shifted.jpg" "$work/photo1.jpg"
out=$("$search" "$work/blazeface_256.kom" "$work/mobilefacenet.kom" "$work/photo1.jpg" "$work/photo1_shifted.jpg")
echo "$out"
plain=$("$search" "$work/blazeface_256_plain.kom" "$work/mobilefacenet_plain.kom" "$work/photo1.jpg" \
  "$work/photo1_shifted.jpg")
[ "$out" == "$plain" ] || { echo "FAIL: the app's own AIPP gave other results:"; echo "$plain"; exit 1; }
faces=$(sed -n 's/^gallery .*: \([0-9]*\) faces$/\1/p' <<<"$out")
[ "${faces:-0}" -ge 2 ] || { echo "FAIL: expected at least 2 faces in the gallery photo"; exit 1; }
# Query lines: "  face I at (x, y): gallery face J, cosine C" — each I must find J = I above 0.85.
awk -v want="$faces" '
  /^query / { q = 1; next }
  q && /gallery face/ { n++; i = $2; sub(/,/, "", $8); j = $8; c = $10;
         if (i != j || c + 0 <= 0.85) { print "FAIL: " $0; bad = 1 } }
  END { if (n != want) { print "FAIL: " n " query matches for " want " faces"; bad = 1 } exit bad }' <<<"$out"
echo "face-search: every shifted face found itself"
