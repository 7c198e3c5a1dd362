#!/usr/bin/env bash
# tests/soak/run.sh — the soak of issue 15 §6 in one command: 10,000 frames through VDEC → VPC → AIPP →
# BlazeFace → detect → VPC → MobileFaceNet → fv search, VmRSS sampled every 500 frames, exit 1 if it grows
# after the warm-up (kes-soak's header says what is checked). Run on demand, never by ctest.
#
#   tests/soak/run.sh [BUILD_DIR] [FRAMES] [-- kes-soak options...]
#     BUILD_DIR  a configured build tree (default build/h-soak: cmake --preset host -B build/h-soak); the
#                kes-soak and kes-convert targets are built there (-j2) if missing
#     FRAMES     frames to run (default 10000; e.g. 300 for the ASan build: cmake --preset host-debug
#                -B build/h-soak-dbg, then ASAN_OPTIONS=detect_leaks=1 tests/soak/run.sh build/h-soak-dbg 300)
#
# Needs engine/tests/models/fetch_models.sh first (the models and photos in
# ${KES_MODEL_CACHE:-~/.cache/kestrel/models}/files), cjpeg (libjpeg-turbo-progs) and ffmpeg. The clip
# is samples/face-search/make_demo_data.sh's demo video, 1 s per photo (75 frames, 640x480, H.264: three
# photos with faces zooming and panning), so the decoder is reopened every 75 frames. Work files go to
# BUILD_DIR/soak. Exit status: kes-soak's (0 pass, 1 fail), 2 for usage or a missing dependency.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build/h-soak frames=10000
# The header above, up to the first line that is not a comment (--help was taken for a build directory).
case "${1:-}" in -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;; esac
if [ $# -gt 0 ] && [ "$1" != -- ]; then build=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != -- ]; then frames=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" = -- ]; then shift; fi
case "$frames" in '' | *[!0-9]* | 0) echo "run.sh: FRAMES must be a whole number >= 1 (got '$frames')" >&2; exit 2 ;; esac
[ -f "$build/CMakeCache.txt" ] || { echo "run.sh: $build is not a configured build (cmake --preset host -B $build)" >&2; exit 2; }
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
for f in blazeface_256.onnx mobilefacenet.tflite photo1.ppm photo3.ppm photo6.ppm; do
  [ -f "$cache/$f" ] || { echo "run.sh: $cache/$f missing (run engine/tests/models/fetch_models.sh)" >&2; exit 2; }
done
for tool in cjpeg ffmpeg; do command -v $tool >/dev/null || { echo "run.sh: needs $tool" >&2; exit 2; }; done

cmake --build "$build" -j2 --target kes-soak kes-convert >/dev/null
soak=$(find "$build" -name kes-soak -type f -perm -u+x | head -n 1)
convert=$(find "$build" -name kes-convert -type f -perm -u+x | head -n 1)
[ -n "$soak" ] && [ -n "$convert" ] || { echo "run.sh: kes-soak or kes-convert not built in $build" >&2; exit 2; }

work=$build/soak
mkdir -p "$work"
[ -f "$work/data/demo.mp4" ] || bash "$root/samples/face-search/make_demo_data.sh" "$cache" "$work/data" 1 >/dev/null
aipp=$root/samples/face-search/aipp_rgb_centered.cfg
# Converted every run: the .kom depends on the build's kes-convert (a stale one from an older build is
# refused or, worse, accepted with different bits).
"$convert" "$cache/blazeface_256.onnx" --output "$work/blazeface_256.kom" --insert-op-conf "$aipp" >/dev/null
"$convert" "$cache/mobilefacenet.tflite" --output "$work/mobilefacenet.kom" --dynamic-batch 1,2 \
  --insert-op-conf "$aipp" >/dev/null

exec "$soak" "$work/blazeface_256.kom" "$work/mobilefacenet.kom" "$work/data/demo.mp4" --frames "$frames" "$@"
