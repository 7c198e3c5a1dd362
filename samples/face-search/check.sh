#!/usr/bin/env bash
# ctest face-search.*: face-search end to end on the face-api sample photos and a demo video made from them
# (make_demo_data.sh). Modes:
#   full  (face-search.RecognisesPeopleAcrossPhotos, host): BlazeFace and MobileFaceNet converted with
#         their AIPP inserted and without it (face-search then runs AIPP itself: the output must be the
#         same, byte for byte, annotated JPEGs included); every face of a photo finds itself in a copy
#         shifted by (16, 8) pixels; people enrolled by name from photos 1 and 2 are recognised in the
#         others: the woman of photo 1 face 2 is named in photo 3, and no other face is named at the
#         default threshold; the annotated JPEGs decode at the photo's (even) size; the annotated MP4
#         decodes and holds exactly the frames face-search says it wrote; --save then --load answers the
#         same; --gallery enrolls a folder; KES_TRACE shows the stages; bad inputs are clear errors; a
#         model with a fixed batch of 2 is named as such; the detector's threshold and its 128 model;
#         several --video; a bad photo is reported and the others still searched (exit 1).
#   camera (face-search.KeepsSearchingWhenTheCameraRestarts, host): the demo video served as an RTSP
#         camera (dvpp/tests/rtsp_test_server.c, the 5th argument), killed mid-stream and started again on
#         the same port: face-search goes on when it is back (saying it was lost when a read had to give
#         up meanwhile), reads all the frames it was asked for (more than the clip holds) and reports the
#         reconnect.
#   quick (face-search.RecognisesPeopleOnTheEmulatedBoard, aarch64 build): the cross-built tools under
#         EMULATOR (board/emulate.sh): the known pair across photos 1 and 3, no stranger in photo 6, the
#         annotated JPEG, and a 10-frame annotated MP4 (about a minute under qemu).
# Needs engine/tests/models/fetch_models.sh first (./kestrel.sh test runs it), cjpeg, djpeg, jpegtran,
# ffmpeg and ffprobe; exits 77 (skipped) when they are missing.
#   check.sh full|quick KES_CONVERT FACE_SEARCH WORK_DIR [EMULATOR ...]
set -euo pipefail
# A missing dependency skips the test, or fails it under CI (cmake/test_dependency.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../../cmake/test_dependency.sh"
fail() { echo "FAIL: $*"; exit 1; }
case "${1:-}" in
  full | quick) [ $# -ge 4 ] || { echo "usage: check.sh full|quick KES_CONVERT FACE_SEARCH WORK_DIR [EMULATOR ...]" >&2; exit 2; } ;;
  camera) [ $# -eq 5 ] || { echo "usage: check.sh camera KES_CONVERT FACE_SEARCH WORK_DIR RTSP_SERVER" >&2; exit 2; } ;;
  *) echo "usage: check.sh full|quick KES_CONVERT FACE_SEARCH WORK_DIR [EMULATOR ...] (the demo is demo.sh BUILD_DIR WORK_DIR)" >&2
     exit 2 ;;
esac
mode=$1 convert=$2 search=$3 work=$4
shift 4
camera_server=
if [ "$mode" = camera ]; then camera_server=$1; shift; fi
run=("$@")  # the emulator, if any, before every tool
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
for f in blazeface_256.onnx mobilefacenet.tflite photo1.ppm photo2.ppm photo3.ppm photo4.ppm photo5.ppm photo6.ppm; do
  [ -f "$cache/$f" ] || skip_missing "face-search check: $cache/$f missing (run engine/tests/models/fetch_models.sh)"
done
for tool in cjpeg djpeg jpegtran; do command -v $tool >/dev/null || skip_missing "face-search check: needs $tool (libjpeg-turbo-progs)"; done
for tool in ffmpeg ffprobe; do command -v $tool >/dev/null || skip_missing "face-search check: needs $tool (ffmpeg)"; done
rm -rf "$work"
mkdir -p "$work/out"
data=$work/data
bash "$here/make_demo_data.sh" "$cache" "$data" 1 >/dev/null
aipp=$here/aipp_rgb_centered.cfg
"${run[@]}" "$convert" "$cache/blazeface_256.onnx" --output "$work/blazeface_256.kom" --insert-op-conf "$aipp" >/dev/null
"${run[@]}" "$convert" "$cache/mobilefacenet.tflite" --output "$work/mobilefacenet.kom" --dynamic-batch 1,2 \
  --insert-op-conf "$aipp" >/dev/null
models=("$work/blazeface_256.kom" "$work/mobilefacenet.kom")
fs() { "${run[@]}" "$search" "$@"; }

# "  face I at (X, Y) WxH: NAME, cosine C" for a named face; "unknown (best ...)" otherwise.
named() { grep -E '^  face [0-9]+ at .*: [^ ]+, cosine ' || true; }
# The size of a JPEG, "W H", as djpeg decodes it.
jpeg_size() { djpeg "$1" | head -c 64 | sed -n 2p; }
even_size() { head -c 64 "$1" | sed -n 2p | awk '{ print $1 - $1 % 2, $2 - $2 % 2 }'; }
# Frames ffprobe decodes in an MP4.
mp4_frames() { ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1"; }

enroll=(--enroll ava=$data/photo1.jpg:0 --enroll mia=$data/photo1.jpg:1 --enroll zoe=$data/photo1.jpg:2)

if [ "$mode" = camera ]; then
  # The camera on port $1 (0: a free one): sets server_pid, and served_port once it listens (it prints
  # "PORT n"); started again on the same port after it is killed.
  serve() {
    "$camera_server" "$data/demo.mp4" "$1" >"$work/server.out" 2>"$work/server.err" &
    server_pid=$!
    served_port=
    for _ in $(seq 100); do
      served_port=$(sed -n 's/^PORT //p' "$work/server.out")
      [ -n "$served_port" ] && return 0
      kill -0 $server_pid 2>/dev/null || return 1
      sleep 0.1
    done
    return 1
  }
  server_pid=
  search_pid=
  trap '[ -n "$server_pid" ] && kill -9 $server_pid 2>/dev/null; [ -n "$search_pid" ] && kill -9 $search_pid 2>/dev/null; true' EXIT
  serve 0 || skip_missing "face-search camera check: the RTSP test server did not start (GStreamer plugins?)"
  port=$served_port
  url=rtsp://127.0.0.1:$port/cam
  # 100 frames: more than the clip's 75, so a second session is needed however far a slow (sanitizer)
  # build had read into the first before the camera died.
  fs "${models[@]}" "${enroll[@]}" --no-annotate --video "$url" --max-frames 100 --every 5 >"$work/out.txt" 2>"$work/stderr" &
  search_pid=$!
  for _ in $(seq 600); do grep -q '^  frame ' "$work/out.txt" && break; sleep 0.1; done
  grep -q '^  frame ' "$work/out.txt" || { cat "$work/out.txt" "$work/stderr"; fail "no frame searched from $url"; }
  kill -9 $server_pid
  wait $server_pid 2>/dev/null || true
  # Down for longer than a read's timeout (5 s), so a read returns while the channel is reconnecting.
  sleep 7
  for _ in $(seq 20); do
    serve "$port" && [ "$served_port" = "$port" ] && break
    kill -9 $server_pid 2>/dev/null || true
    sleep 0.25
  done
  [ "$served_port" = "$port" ] || fail "the camera did not come back on port $port"
  rc=0
  # A hang guard, not a speed limit: an ASan -O0 build on a busy 2-core machine needed over 180 s for the
  # 20 searched frames (frame 60 of 100 at 236 s). ctest's own time-out (600 s) stays the outer bound.
  timeout 480 tail --pid=$search_pid -f /dev/null || fail "face-search did not finish within 480 s (hung?)"
  wait $search_pid || rc=$?
  search_pid=
  out=$(cat "$work/out.txt")
  echo "$out"
  [ "$rc" = 0 ] || { cat "$work/stderr"; fail "face-search exited $rc after the camera came back"; }
  # "camera lost" shows when a read outlasts timeout_ms while the channel reconnects: a slow build still
  # busy with the frames it had buffered may find the camera back within one read, and then says nothing.
  # Either way the reconnect is in the summary, and every "lost" has its "back".
  if grep -q '^  camera lost (' <<<"$out"; then
    grep -q "^  camera lost (.*$url" <<<"$out" || fail "the camera-lost line does not name $url"
    grep -q '^  camera back (' <<<"$out" || fail "face-search said the camera was lost, never that it was back"
  fi
  grep -q "^video $url: 100 frames, " <<<"$out" || fail "face-search did not read the 100 frames asked for"
  grep -Eq '^  camera: [1-9][0-9]* reconnects' <<<"$out" || fail "the reconnect is not in the summary"
  echo "face-search: kept searching through a camera restart"
  exit 0
fi

if [ "$mode" = quick ]; then
  start=$SECONDS
  out=$(fs "${models[@]}" "${enroll[@]}" --out "$work/out" "$data/photo3.jpg" "$data/photo6.jpg" \
    --video "$data/demo.mp4" --max-frames 10 --every 5 2>"$work/stderr") || { cat "$work/stderr"; fail "face-search failed"; }
  echo "$out"
  [ "$(named <<<"$(sed -n '/^.*photo3.jpg: /,/^wrote/p' <<<"$out")" | grep -c ': zoe, cosine')" = 1 ] ||
    fail "photo 1's face 2 (zoe) not named in photo 3"
  [ "$(named <<<"$out" | wc -l)" = 1 ] || fail "a stranger was named"
  [ "$(jpeg_size "$work/out/photo3_annotated.jpg")" = "$(even_size "$cache/photo3.ppm")" ] ||
    fail "photo3_annotated.jpg does not decode at the photo's size"
  grep -q "^wrote $work/out/demo_annotated.mp4 (10 frames)$" <<<"$out" || fail "face-search did not write 10 frames"
  [ "$(mp4_frames "$work/out/demo_annotated.mp4")" = 10 ] || fail "demo_annotated.mp4 does not hold 10 frames"
  sed -n '/timing/,$p' "$work/stderr"
  echo "face-search: the known pair matches and nobody else on the emulated board ($((SECONDS - start)) s)"
  exit 0
fi

# 1. A face finds itself in a shifted copy of its photo (the pixels of every face change).
jpegtran -crop 900x600+16+8 -outfile "$work/photo1_shifted.jpg" "$data/photo1.jpg"
out=$(fs "${models[@]}" "${enroll[@]}" --no-annotate "$work/photo1_shifted.jpg" 2>/dev/null)
echo "$out"
awk '/^  face / { n++; want = n == 1 ? "ava," : n == 2 ? "mia," : "zoe,";
        if ($7 != want || $9 + 0 <= 0.85) { print "FAIL: " $0; bad = 1 } }
     END { if (n != 3) { print "FAIL: " n " faces in the shifted photo, not 3"; bad = 1 } exit bad }' <<<"$out"

# 2. People enrolled by name from photos 1 and 2, searched in photos 3 to 6 and the video.
people=("${enroll[@]}" --enroll lea=$data/photo2.jpg:0 --enroll ivy=$data/photo2.jpg:1)
queries=("$data/photo3.jpg" "$data/photo4.jpg" "$data/photo5.jpg" "$data/photo6.jpg")
out=$(fs "${models[@]}" "${people[@]}" --save "$work/faces.db" --out "$work/out" "${queries[@]}" \
  --video "$data/demo.mp4" --every 5 2>"$work/stderr") || { cat "$work/stderr"; fail "face-search failed"; }
echo "$out"
sed -n '/timing/,$p' "$work/stderr"
photo3=$(sed -n '/photo3.jpg: /,/^wrote/p' <<<"$out")
[ "$(named <<<"$photo3" | grep -c ': zoe, cosine 0\.[89]')" = 1 ] ||
  fail "the woman of photo 1 (zoe) is not named in photo 3 at cosine >= 0.8"
photos=$(sed -n '/^video /q;p' <<<"$out")
[ "$(named <<<"$photos" | wc -l)" = 1 ] || fail "a stranger was named in photos 3..6: $(named <<<"$photos")"
for i in 3 4 5 6; do
  [ "$(jpeg_size "$work/out/photo${i}_annotated.jpg")" = "$(even_size "$cache/photo$i.ppm")" ] ||
    fail "photo${i}_annotated.jpg does not decode at the photo's size"
  grep -q "^wrote $work/out/photo${i}_annotated.jpg " <<<"$out" || fail "the path of photo${i}_annotated.jpg not printed"
done
frames=$(sed -n "s|^wrote $work/out/demo_annotated.mp4 (\([0-9]*\) frames)$|\1|p" <<<"$out")
[ "${frames:-0}" = 75 ] || fail "face-search wrote ${frames:-no} frames of the 75-frame video"
[ "$(mp4_frames "$work/out/demo_annotated.mp4")" = "$frames" ] || fail "demo_annotated.mp4 does not hold $frames frames"
grep -q '^  zoe: in [0-9]* searched frames' <<<"$out" || fail "zoe not recognised in the video (photo 3 part)"
grep -Eq '^  (lea|ivy): ' <<<"$out" && fail "a stranger was named in the video"

# 3. Without AIPP in the models face-search runs the same AIPP itself: the same output, the same JPEGs.
"${run[@]}" "$convert" "$cache/blazeface_256.onnx" --output "$work/blazeface_256_plain.kom" >/dev/null
"${run[@]}" "$convert" "$cache/mobilefacenet.tflite" --output "$work/mobilefacenet_plain.kom" --dynamic-batch 1,2 >/dev/null
mkdir -p "$work/out_plain"
plain=$(fs "$work/blazeface_256_plain.kom" "$work/mobilefacenet_plain.kom" "${people[@]}" --out "$work/out_plain" \
  "${queries[@]}" 2>/dev/null)
[ "$plain" == "$(sed "s|$work/out/|$work/out_plain/|; /^saved /d; /^video /,\$d" <<<"$out")" ] ||
  { echo "$plain"; fail "the app's own AIPP gave other results"; }
for i in 3 4 5 6; do
  cmp -s "$work/out/photo${i}_annotated.jpg" "$work/out_plain/photo${i}_annotated.jpg" ||
    fail "photo${i}_annotated.jpg differs with the app's own AIPP"
done

# 4. --save, then --load: the same answers (and KES_TRACE records the stages).
loaded=$(KES_TRACE="$work/trace.json" fs "${models[@]}" --load "$work/faces.db" --no-annotate "${queries[@]}" 2>/dev/null)
[ "$(grep -v '^loaded ' <<<"$loaded")" == "$(grep -E '(\.jpg: [0-9]+ faces?$|^  face )' <<<"$photos")" ] ||
  { echo "$loaded"; fail "the loaded database answers differently"; }
for stage in decode detect align embed search; do
  grep -q "\"name\":\"$stage\",\"cat\":\"face-search\"" "$work/trace.json" || fail "no $stage span in KES_TRACE's file"
done

# 5. --gallery DIR/NAME/PHOTO.jpg: the largest face of photo 3 is zoe, found again in photo 1.
mkdir -p "$work/gallery/zoe" "$work/gallery/someone"
cp "$data/photo3.jpg" "$work/gallery/zoe/"
cp "$data/photo5.jpg" "$work/gallery/someone/"
out=$(fs "${models[@]}" --gallery "$work/gallery" --no-annotate "$data/photo1.jpg" 2>/dev/null)
[ "$(named <<<"$out")" = "$(named <<<"$out" | grep '^  face 2 .*: zoe, ')" ] && [ -n "$(named <<<"$out")" ] ||
  { echo "$out"; fail "--gallery: zoe not found in photo 1 (or someone else named)"; }

# 6. Bad inputs: a clear message and exit 1 (runtime) or 2 (usage), never a crash.
expect() {  # expect CODE MESSAGE-REGEX face-search-args...
  local code=$1 message=$2 got=0
  shift 2
  fs "$@" >"$work/bad.out" 2>&1 || got=$?
  [ "$got" = "$code" ] || { cat "$work/bad.out"; fail "face-search $* exited $got, not $code"; }
  grep -Eq -- "$message" "$work/bad.out" || { cat "$work/bad.out"; fail "face-search $*: no message /$message/"; }
}
expect 1 "missing\.jpg" "${models[@]}" --enroll ava="$work/missing.jpg" "$data/photo3.jpg"
expect 1 "missing\.jpg" "${models[@]}" --no-annotate "$work/missing.jpg"
expect 2 "--enroll wants NAME=PHOTO\[:FACE\]: no '='" "${models[@]}" --enroll "$data/photo1.jpg" "$data/photo3.jpg"
expect 2 "--enroll wants NAME=PHOTO\[:FACE\]: no name" "${models[@]}" --enroll "=$data/photo1.jpg" "$data/photo3.jpg"
expect 1 "has 3 faces \(0\.\.2, left to right\); face 7" "${models[@]}" --enroll ava="$data/photo1.jpg:7" "$data/photo3.jpg"
expect 2 "--max-frames must be" "${models[@]}" --video "$data/demo.mp4" --max-frames 0
corrupt() {  # corrupt NAME SED-SCRIPT: a copy of the database whose names file is edited
  cp "$work/faces.db" "$work/$1.db"
  sed "$2" "$work/faces.db.names" >"$work/$1.db.names"
}
corrupt dup '4s/ zoe$/ ava/'
expect 1 "dup\.db\.names line 4: the name is given twice" "${models[@]}" --load "$work/dup.db" --no-annotate "$data/photo3.jpg"
corrupt gap '3d'
expect 1 "gap\.db\.names line 3: want \"id0 id1 name\"" "${models[@]}" --load "$work/gap.db" --no-annotate "$data/photo3.jpg"
corrupt short '$d'
expect 1 "short\.db holds 5 people, .*short\.db\.names names 4: not a pair" "${models[@]}" --load "$work/short.db" \
  --no-annotate "$data/photo3.jpg"
corrupt header '1s/.*/faces/'
expect 1 "header\.db\.names line 1: not \"kestrel-face-names 1\"" "${models[@]}" --load "$work/header.db" \
  --no-annotate "$data/photo3.jpg"
corrupt binary '2s/ava/a\x01va/'
expect 1 "binary\.db\.names line 2: the name has a control character" "${models[@]}" --load "$work/binary.db" \
  --no-annotate "$data/photo3.jpg"
head -c 100 /dev/urandom >"$work/garbage.db"
cp "$work/faces.db.names" "$work/garbage.db.names"
expect 1 "garbage\.db" "${models[@]}" --load "$work/garbage.db" --no-annotate "$data/photo3.jpg"

# 7. Plainly converted models, the detector's threshold and size, several videos, a bad photo among good.
# MobileFaceNet as its file is (a fixed batch of 2): the error names the batch and the conversion that
# fixes it (it blamed AIPP, "output N is 2 but 1 images", or, through the 384-float output, the database).
"${run[@]}" "$convert" "$cache/mobilefacenet.tflite" --output "$work/mobilefacenet_batch2.kom" >/dev/null
expect 1 "mobilefacenet_batch2\.kom: input 'input' takes a fixed batch of 2 images.*--dynamic-batch 1,2" \
  "$work/blazeface_256_plain.kom" "$work/mobilefacenet_batch2.kom" --no-annotate "$data/photo3.jpg"
expect 1 "mobilefacenet_batch2\.kom: input 'input' takes a fixed batch of 2 images" \
  "${models[0]}" "$work/mobilefacenet_batch2.kom" --load "$work/faces.db" --no-annotate "$data/photo3.jpg"
# BlazeFace 256 at the default score threshold finds photo 3's three women (0.75, the old fixed value,
# missed the one on the right); the threshold is an option.
[ "$(fs "${models[@]}" --no-annotate "$data/photo3.jpg" 2>/dev/null | grep -c '^  face ')" = 3 ] ||
  fail "BlazeFace at the default threshold does not find photo 3's three faces"
[ "$(fs "${models[@]}" --detect-threshold 0.75 --no-annotate "$data/photo3.jpg" 2>/dev/null | grep -c '^  face ')" = 2 ] ||
  fail "--detect-threshold 0.75 is not taken"
expect 2 "--detect-threshold must be a score between 0 and 1" "${models[@]}" --detect-threshold 1.5 "$data/photo3.jpg"
# BlazeFace 128 (the front model) is told apart by its input size and runs.
"${run[@]}" "$convert" "$cache/blazeface_128.onnx" --output "$work/blazeface_128.kom" --insert-op-conf "$aipp" >/dev/null
out=$(fs "$work/blazeface_128.kom" "${models[1]}" --detect-threshold 0.5 --no-annotate "$data/photo3.jpg" 2>/dev/null)
grep -Eq "photo3\.jpg: [1-9][0-9]* faces?$" <<<"$out" || { echo "$out"; fail "BlazeFace 128 found no face in photo 3"; }
# Two --video: both are searched, in order (the second replaced the first).
cp "$data/demo.mp4" "$work/second.mp4"
out=$(fs "${models[@]}" "${enroll[@]}" --no-annotate --video "$data/demo.mp4" --video "$work/second.mp4" \
  --max-frames 5 --every 5 2>/dev/null) || fail "two videos: face-search failed"
grep -q "^video $data/demo.mp4: 5 frames" <<<"$out" && grep -q "^video $work/second.mp4: 5 frames" <<<"$out" ||
  { echo "$out"; fail "not both videos were searched"; }
expect 2 "would both write .*demo_annotated\.mp4" "${models[@]}" --out "$work/out" --video "$data/demo.mp4" \
  --video "$data/demo.mp4"
# A bad photo is reported, the photos after it are still searched, and the run exits 1.
rc=0
out=$(fs "${models[@]}" "${enroll[@]}" --no-annotate "$work/missing.jpg" "$data/photo3.jpg" 2>"$work/bad.err") || rc=$?
[ "$rc" = 1 ] || fail "a run with a bad photo exited $rc, not 1"
grep -q "missing\.jpg" "$work/bad.err" && grep -q "1 of 2 photos and 0 of 0 videos failed" "$work/bad.err" ||
  { cat "$work/bad.err"; fail "the bad photo is not reported"; }
grep -q ": zoe, cosine" <<<"$out" || { echo "$out"; fail "the photo after the bad one was not searched"; }
echo "face-search: the known pair matches across photos and in the video, no stranger is named, the JPEGs and the MP4 decode"
