#!/usr/bin/env bash
# ctest Track.DemoVideoFacesKeepOneIdWhileVisible: kestrel/track.h on BlazeFace's faces (and MobileFaceNet's
# embeddings of them) in the face-search demo video (samples/face-search/make_demo_data.sh; SECONDS per
# photo, 3 as ./kestrel.sh demo makes it): the models converted with their AIPP inserted, then
# track_demo_video.c checks that each person keeps one id while visible (its opening comment says how).
# Needs engine/tests/models/fetch_models.sh first, cjpeg and ffmpeg; exits 77 (skipped) when they are missing.
#   track_demo_video.sh KES_CONVERT TRACK_DEMO_VIDEO WORK_DIR SECONDS
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../../cmake/test_dependency.sh"
[ $# -eq 4 ] || { echo "usage: track_demo_video.sh KES_CONVERT TRACK_DEMO_VIDEO WORK_DIR SECONDS" >&2; exit 2; }
convert=$1 check=$2 work=$3 seconds=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
samples=$here/../../samples/face-search
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
for f in blazeface_256.onnx mobilefacenet.tflite photo1.ppm photo3.ppm photo6.ppm; do
  [ -f "$cache/$f" ] || skip_missing "track demo video: $cache/$f missing (run engine/tests/models/fetch_models.sh)"
done
command -v cjpeg >/dev/null || skip_missing "track demo video: needs cjpeg (libjpeg-turbo-progs)"
command -v ffmpeg >/dev/null || skip_missing "track demo video: needs ffmpeg"
rm -rf "$work"
mkdir -p "$work"
bash "$samples/make_demo_data.sh" "$cache" "$work/data" $seconds >/dev/null
"$convert" "$cache/blazeface_256.onnx" --output "$work/blazeface_256.kom" --insert-op-conf "$samples/aipp_rgb_centered.cfg" >/dev/null
"$convert" "$cache/mobilefacenet.tflite" --output "$work/mobilefacenet.kom" --dynamic-batch 1,2 \
  --insert-op-conf "$samples/aipp_rgb_centered.cfg" >/dev/null
"$check" "$work/blazeface_256.kom" "$work/mobilefacenet.kom" "$work/data/demo.mp4" "$seconds"
