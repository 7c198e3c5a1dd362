#!/usr/bin/env bash
# ctest segment.MaskAgreesWithArmNN: the segment sample on MediaPipe's real selfie segmentation models,
# checked against an independent runtime's outputs (fetch_models.sh's reference: Arm NN CpuRef running the
# same .tflite on photo 1, its input saved as <model>_input.f32 and its mask as <model>_out0.f32):
#   - both models (256x256 and the 144x256 landscape one) converted with kes-convert; segment --raw-input
#     feeds the reference's exact input: every mask value within 0.002 of Arm NN's (both compute in
#     float32 from the same fp16-widened weights; only the order of the sums differs);
#   - the photo path (JPEGD -> VPC resize -> AIPP): the reference's input written as a 256x256 JPEG
#     (quality 100): the mask within 0.02 of Arm NN's on average and the same foreground/background call
#     (0.5) for at least 97% of the pixels (JPEG's 4:2:0 chroma and the YUV round trip are the difference);
#   - the drawing: with --background colour:00FF00 the output JPEG is green where Arm NN's mask is below
#     0.02 and keeps the photo where it is above 0.98; the reference's mask is neither all foreground
#     nor all background, so both kinds of pixel exist;
#   - photo 1 at its own size with the default blur: the output decodes at 960x640 and differs from it;
#   - a clip panning over photo 1 with a virtual background (photo 2): one JSON line per frame, someone in
#     front in every frame, and an MP4 holding every frame;
#   - a truncated JPEG, a raw input of the wrong size and a missing background image are errors naming
#     the file; a detector model is refused as not a selfie segmentation model.
# Needs engine/tests/models/fetch_models.sh's MediaPipe models and reference, cjpeg/djpeg, ffmpeg/ffprobe
# and numpy; exits 77 (skipped) when they are missing.
#   check.sh KES_CONVERT SEGMENT WORK_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../../cmake/test_dependency.sh"
fail() { echo "FAIL: $*"; exit 1; }
[ $# -eq 3 ] || { echo "usage: check.sh KES_CONVERT SEGMENT WORK_DIR" >&2; exit 2; }
convert=$1 segment=$2 work=$3
root=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}
cache=$root/files ref=$root/reference/mediapipe
for f in files/mediapipe/selfie_segmentation.tflite files/mediapipe/selfie_segmentation_landscape.tflite \
         files/mediapipe/palm_detection_lite.tflite files/photo1.ppm files/photo2.ppm \
         reference/mediapipe/selfie_segmentation_input.f32 reference/mediapipe/selfie_segmentation_out0.f32 \
         reference/mediapipe/selfie_segmentation_landscape_input.f32 \
         reference/mediapipe/selfie_segmentation_landscape_out0.f32; do
  [ -f "$root/$f" ] || skip_missing "segment check: $root/$f missing (run engine/tests/models/fetch_models.sh)"
done
for tool in cjpeg djpeg ffmpeg ffprobe; do
  command -v $tool >/dev/null || skip_missing "segment check: needs $tool"
done
/usr/bin/python3 -c "import numpy" 2>/dev/null ||
  skip_missing "segment check: needs numpy (apt-get install python3-numpy)"
py() { /usr/bin/python3 -c "$@"; }
rm -rf "$work"
mkdir -p "$work/out" "$work/mask"
for m in selfie_segmentation selfie_segmentation_landscape; do
  "$convert" "$cache/mediapipe/$m.tflite" --output "$work/$m.kom" -q
done

# The reference's exact input: the masks agree value by value.
for m in selfie_segmentation selfie_segmentation_landscape; do
  "$segment" "$work/$m.kom" --raw-input "$ref/${m}_input.f32" --dump-mask "$work/mask" >"$work/$m.jsonl"
  py "import numpy as np, sys
got = np.fromfile('$work/mask/${m}_input_mask.f32', np.float32)
want = np.fromfile('$ref/${m}_out0.f32', np.float32)
if got.shape != want.shape: sys.exit('$m: mask of %d values, want %d' % (got.size, want.size))
share = (want >= 0.5).mean()
if not 0.1 < share < 0.9: sys.exit('$m: the reference mask is %.2f foreground: not a usable check' % share)
err = np.abs(got - want).max()
print('$m: raw input: max |mask - Arm NN| = %.2e, foreground %.3f' % (err, share))
if not err <= 0.002: sys.exit('$m: the mask differs from Arm NN by %g' % err)" || fail "$m mask disagrees with Arm NN"
done

# The same input as a JPEG through the photo path, and the drawing.
py "import numpy as np
x = np.fromfile('$ref/selfie_segmentation_input.f32', np.float32).reshape(256, 256, 3)
with open('$work/reference.ppm', 'wb') as f:
    f.write(b'P6\n256 256\n255\n' + np.clip(np.rint(x * 255), 0, 255).astype(np.uint8).tobytes())"
cjpeg -quality 100 "$work/reference.ppm" >"$work/reference.jpg"
"$segment" "$work/selfie_segmentation.kom" "$work/reference.jpg" --dump-mask "$work/mask" --out "$work/out" \
  --background colour:00FF00 >"$work/reference.jsonl"
djpeg -pnm "$work/out/reference_segment.jpg" >"$work/reference_segment.ppm"
py "import numpy as np, sys
def ppm(path):
    with open(path, 'rb') as f:
        assert f.readline().strip() == b'P6'
        w, h = map(int, f.readline().split()); f.readline()
        return np.frombuffer(f.read(), np.uint8).reshape(h, w, 3).astype(int)
got = np.fromfile('$work/mask/reference_mask.f32', np.float32).reshape(256, 256)
want = np.fromfile('$ref/selfie_segmentation_out0.f32', np.float32).reshape(256, 256)
mean = np.abs(got - want).mean()
agree = ((got >= 0.5) == (want >= 0.5)).mean()
print('photo path: mean |mask - Arm NN| = %.4f, same call for %.4f of the pixels' % (mean, agree))
if not (mean <= 0.02 and agree >= 0.97): sys.exit('the photo path mask differs from Arm NN')
out, photo = ppm('$work/reference_segment.ppm'), ppm('$work/reference.ppm')
if out.shape != photo.shape: sys.exit('output is %s, want %s' % (out.shape, photo.shape))
back, front = want < 0.02, want > 0.98
green = (out[..., 1] > 200) & (out[..., 0] < 60) & (out[..., 2] < 60)
kept = np.abs(out - photo).max(axis=2) < 40
print('drawing: %.4f of %d background pixels green, %.4f of %d foreground pixels kept'
      % (green[back].mean(), back.sum(), kept[front].mean(), front.sum()))
if not (back.sum() > 1000 and front.sum() > 1000): sys.exit('the reference mask lacks clear foreground or background')
if not (green[back].mean() >= 0.95 and kept[front].mean() >= 0.95):
    sys.exit('the background is not replaced as the mask says')" ||
  fail "photo path"

# Photo 1 at its own size, blurred background.
cjpeg -quality 95 "$cache/photo1.ppm" >"$work/photo1.jpg"
cjpeg -quality 95 "$cache/photo2.ppm" >"$work/photo2.jpg"
"$segment" "$work/selfie_segmentation.kom" "$work/photo1.jpg" --out "$work/out" >"$work/photo1.jsonl"
got=$(djpeg "$work/out/photo1_segment.jpg" | head -c 64 | sed -n 2p || true) # djpeg gets SIGPIPE
[ "$got" = "960 640" ] || fail "blurred photo 1 is $got, want 960 640"
djpeg "$work/photo1.jpg" | cmp -s - <(djpeg "$work/out/photo1_segment.jpg") && fail "nothing blurred on photo 1"

# A clip panning over photo 1, on photo 2 as the virtual background, with the landscape model.
ffmpeg -v error -y -loop 1 -i "$work/photo1.jpg" -vf "crop=640:360:'min(8*n,300)':120,format=yuv420p" -frames:v 8 \
  -r 25 -c:v libx264 "$work/clip.mp4"
"$segment" "$work/selfie_segmentation_landscape.kom" --video "$work/clip.mp4" --background "$work/photo2.jpg" \
  --out "$work/out" >"$work/video.jsonl" 2>"$work/video.err" || { cat "$work/video.err"; fail "video"; }
[ "$(wc -l <"$work/video.jsonl")" -eq 8 ] || fail "want 8 JSON lines for 8 frames: $(wc -l <"$work/video.jsonl")"
py "import json, sys
for line in open('$work/video.jsonl'):
    d = json.loads(line)
    if not d['foreground'] >= 0.05: sys.exit('frame %d: nobody in front: %s' % (d['frame'], line))" ||
  fail "video masks"
frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 \
  "$work/out/clip_segment.mp4")
[ "$frames" -eq 8 ] || fail "the MP4 holds $frames frames, want 8"
grep -q "8 frames, wrote $work/out/clip_segment.mp4" "$work/video.err" || fail "summary: $(cat "$work/video.err")"

# Bad inputs: errors naming the file; the good photo is still processed.
head -c 2000 "$work/photo2.jpg" >"$work/truncated.jpg"
head -c 1000 "$ref/selfie_segmentation_input.f32" >"$work/short.f32"
set +e
"$segment" "$work/selfie_segmentation.kom" "$work/truncated.jpg" "$work/photo1.jpg" --raw-input "$work/short.f32" \
  --out "$work/out" >"$work/bad.jsonl" 2>"$work/bad.err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "bad inputs: exit $rc, want 1"
grep -q "segment: $work/truncated.jpg: " "$work/bad.err" ||
  fail "the error does not name the JPEG: $(cat "$work/bad.err")"
grep -q "segment: $work/short.f32: want exactly 786432 bytes" "$work/bad.err" ||
  fail "the error does not name the raw input: $(cat "$work/bad.err")"
grep -q '"image": ".*photo1.jpg"' "$work/bad.jsonl" || fail "the good photo after a bad one was not processed"
set +e
"$segment" "$work/selfie_segmentation.kom" "$work/photo1.jpg" --background "$work/no-such.jpg" >/dev/null 2>"$work/nobg.err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "a missing background image: exit $rc, want 1"
grep -q "segment: $work/no-such.jpg: " "$work/nobg.err" || fail "missing background: $(cat "$work/nobg.err")"
"$convert" "$cache/mediapipe/palm_detection_lite.tflite" --output "$work/palm.kom" -q
set +e
"$segment" "$work/palm.kom" "$work/photo1.jpg" >"$work/wrong.out" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || fail "a palm detector: exit $rc, want 1"
grep -q "segment: $work/palm.kom: not a selfie segmentation model" "$work/wrong.out" ||
  fail "wrong model: $(cat "$work/wrong.out")"
echo "segment check passed"
