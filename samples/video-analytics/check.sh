#!/usr/bin/env bash
# ctest video-analytics.*: the sample run on three channels, checked from its own output (JSON lines,
# MP4s, stdout). Modes:
#   tracks (video-analytics.TracksFacesOnThreeChannels): pan.mp4 (photo 1's three faces, the camera panning
#          across them for 75 frames) on channels 0 and 1 and the 75-frame demo clip (three photos, two
#          cuts) on channel 2, batched through one detector. Asserted: every channel reads its 75 frames and
#          its MP4 decodes to 75 frames; on pan.mp4 one id per face while it is visible (three ids for the
#          three faces that pass, each seen in one run of frames, the middle face one id from the first frame
#          to the last, at least two faces counted in every frame); channels 0 and 1 give
#          the same tracks (a batch never mixes channels up); everywhere, counts equal the tracks listed,
#          every id enters once before it is seen and leaves once after, and the last health line counts
#          every frame, none dropped; --loop reads a file again (100 frames from the 75-frame clip); a missing
#          file and a JPEG given as a video are refused naming the channel.
#   camera (video-analytics.DeadCameraDoesNotStallTheOthers): pan.mp4 twice, read in real time, and a camera
#          (dvpp's RTSP test server) that is killed after its first frames and never comes back: the file
#          channels still deliver all 75 frames each, in about real time; the camera's channel reports its
#          reconnect attempts while it reconnects, then fails naming the URL; exit status 1.
#   names (video-analytics.NamesTracksFromTheFaceSearchDatabase): five people enrolled by face-search from
#          photos 1 and 2 (as its own check does) and saved; the demo clip's first 40 frames (photo 3, then
#          photo 1) on one channel with --load. The truth is face-search's own search of the same frames:
#          the tracks are named exactly the people face-search names there, a frame never shows a name
#          face-search does not give in it, some tracks stay unknown as face-search leaves faces unknown, and
#          the enter, leave and frame records carry name and cosine, a named track keeps its name, fewer
#          than a third of the tracked faces are embedded (per track); a broken or missing database and a
#          detector given as the embedder are clear errors.
# Needs engine/tests/models/fetch_models.sh first, cjpeg, ffmpeg, ffprobe and python3; exits 77 (skipped)
# when they are missing.
#   check.sh tracks KES_CONVERT VIDEO_ANALYTICS WORK_DIR
#   check.sh names KES_CONVERT VIDEO_ANALYTICS WORK_DIR FACE_SEARCH
#   check.sh camera KES_CONVERT VIDEO_ANALYTICS WORK_DIR RTSP_SERVER
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../../cmake/test_dependency.sh"
fail() { echo "FAIL: $*"; exit 1; }
case "${1:-}" in
  tracks) [ $# -eq 4 ] || { echo "usage: check.sh tracks KES_CONVERT VIDEO_ANALYTICS WORK_DIR" >&2; exit 2; } ;;
  names) [ $# -eq 5 ] || { echo "usage: check.sh names KES_CONVERT VIDEO_ANALYTICS WORK_DIR FACE_SEARCH" >&2; exit 2; } ;;
  camera) [ $# -eq 5 ] || { echo "usage: check.sh camera KES_CONVERT VIDEO_ANALYTICS WORK_DIR RTSP_SERVER" >&2; exit 2; } ;;
  *) echo "usage: check.sh tracks|names|camera KES_CONVERT VIDEO_ANALYTICS WORK_DIR [FACE_SEARCH|RTSP_SERVER]" >&2; exit 2 ;;
esac
mode=$1 convert=$2 va=$3 work=$4 server=${5:-} search=${5:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
model=$cache/mediapipe/face_detection_full_range.tflite
needs=("$model" "$cache/photo1.ppm")
[ "$mode" = names ] && needs+=("$cache/blazeface_256.onnx" "$cache/mobilefacenet.tflite")
for f in "${needs[@]}"; do
  [ -f "$f" ] || skip_missing "video-analytics check: $f missing (run engine/tests/models/fetch_models.sh)"
done
for tool in cjpeg ffmpeg ffprobe python3; do
  command -v $tool >/dev/null || skip_missing "video-analytics check: needs $tool"
done
rm -rf "$work"
mkdir -p "$work"
data=$work/data
bash "$here/../face-search/make_demo_data.sh" "$cache" "$data" 1 >/dev/null
"$convert" "$model" --output "$work/face_full_range.kom" --dynamic-batch 1,2,4 \
  --insert-op-conf "$here/../face-search/aipp_rgb_centered.cfg" >/dev/null
mp4_frames() { ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1"; }

if [ "$mode" = names ]; then
  aipp=$here/../face-search/aipp_rgb_centered.cfg
  "$convert" "$cache/blazeface_256.onnx" --output "$work/blazeface_256.kom" --insert-op-conf "$aipp" >/dev/null
  "$convert" "$cache/mobilefacenet.tflite" --output "$work/mobilefacenet.kom" --dynamic-batch 1,2 \
    --insert-op-conf "$aipp" >/dev/null
  embedder=$work/mobilefacenet.kom
  "$search" "$work/blazeface_256.kom" "$embedder" --enroll ava="$data/photo1.jpg:0" --enroll mia="$data/photo1.jpg:1" \
    --enroll zoe="$data/photo1.jpg:2" --enroll lea="$data/photo2.jpg:0" --enroll ivy="$data/photo2.jpg:1" \
    --save "$work/faces.db" >/dev/null 2>"$work/stderr" || { cat "$work/stderr"; fail "face-search could not enrol"; }
  # The truth: face-search searching every 5th of the same 40 frames (photo 3, then photo 1).
  "$search" "$work/blazeface_256.kom" "$embedder" --load "$work/faces.db" --no-annotate --video "$data/demo.mp4" \
    --max-frames 40 --every 5 >"$work/truth.txt" 2>"$work/stderr" || { cat "$work/stderr"; fail "face-search failed"; }
  cat "$work/truth.txt"
  out=$("$va" "$work/face_full_range.kom" --out "$work/out" --no-video --max-frames 40 --load "$work/faces.db" \
    --embedder "$embedder" "$data/demo.mp4" 2>"$work/stderr") ||
    { echo "$out"; cat "$work/stderr"; fail "video-analytics --load failed"; }
  echo "$out"
  cat "$work/stderr"
  grep -q "^loaded 5 people (5 faces) from $work/faces.db$" <<<"$out" || fail "the database was not loaded"
  grep -q "^channel 0: 40 frames, [0-9]* tracks, 0 dropped$" <<<"$out" || fail "channel 0 did not read 40 frames"
  python3 - "$work/truth.txt" "$work/out/ch0_demo.jsonl" "$work/stderr" <<'EOF'
import json, re, sys
def fail(msg):
    print("FAIL:", msg); sys.exit(1)
# face-search prints the names on screen, left to right, when they change ("  frame F (T s): zoe, unknown"),
# and per person "  NAME: in K searched frames": the names at every 5th frame, and everyone it named.
text = open(sys.argv[1]).read()
changes = {int(m.group(1)): m.group(2) for m in re.finditer(r"^  frame (\d+) \([^)]*\): (.*)$", text, re.M)}
truth, shown = {}, "no face"
for f in range(0, 40, 5):
    shown = changes.get(f, shown)
    truth[f] = [n for n in shown.split(", ") if n not in ("unknown", "no face")]
named = set(re.findall(r"^  (\w+): in \d+ searched frames", text, re.M))
unknown = int(re.search(r"^  unknown: (\d+) faces", text, re.M).group(1))
if not named or not unknown:
    fail(f"face-search named {named} and left {unknown} faces unknown: no truth to check against")
lines = [json.loads(l) for l in open(sys.argv[2])]
enter = {l["track"]: l for l in lines if l["type"] == "enter"}
leave = {l["track"]: l for l in lines if l["type"] == "leave"}
frames = {l["frame"]: l for l in lines if l["type"] == "frame"}
for l in list(enter.values()) + list(leave.values()) + [t for f in frames.values() for t in f["tracks"]]:
    if "name" not in l or "cosine" not in l: fail(f"a record without name and cosine: {l}")
    if l["name"] is not None and not 0.65 <= l["cosine"] <= 1.0001: fail(f"named below the threshold: {l}")
# A track's name is the vote over its whole life: what it leaves with.
va_named = {l["name"] for l in leave.values() if l["name"]}
if va_named != named: fail(f"video-analytics named {sorted(va_named)}, face-search {sorted(named)}")
if not any(l["name"] is None for l in leave.values()):
    fail("every track was named, face-search left some faces unknown")
# A frame never shows a name face-search does not give in it (a name stuck to a face it is not).
for f, names in truth.items():
    shown_va = [t["name"] for t in frames[f]["tracks"] if t["name"]]
    if any(shown_va.count(n) > names.count(n) for n in shown_va):
        fail(f"frame {f}: video-analytics shows {shown_va}, face-search names {names}")
# The name sticks to the track: once named, a track keeps that name in every later frame.
names_of = {}
for f in sorted(frames):
    for t in frames[f]["tracks"]:
        if t["name"] and names_of.setdefault(t["id"], t["name"]) != t["name"]:
            fail(f"track {t['id']} named {names_of[t['id']]}, then {t['name']} in frame {f}")
# Per track, not per frame: far fewer faces embedded than tracked faces in the frames.
embedded = int(re.search(r"recognition: (\d+) faces embedded", open(sys.argv[3]).read()).group(1))
seen = sum(len(f["tracks"]) for f in frames.values())
if not 0 < embedded * 3 <= seen: fail(f"{embedded} faces embedded for {seen} tracked faces: not per track")
unknown_tracks = sum(l["name"] is None for l in leave.values())
print(f"video-analytics named {sorted(va_named)} as face-search does; {unknown_tracks} of {len(leave)} tracks unknown; "
      f"{embedded} faces embedded for {seen} tracked")
EOF
  # A broken or missing database is a clear error, before any channel starts.
  expect_error() { # expect_error MESSAGE DB
    local rc=0 err
    err=$("$va" "$work/face_full_range.kom" --out "$work/bad" --no-video --load "$2" --embedder "$embedder" \
      "$data/demo.mp4" 2>&1) || rc=$?
    [ $rc = 1 ] && grep -qF -- "$1" <<<"$err" || { echo "$err"; fail "--load $2: exit $rc, no message '$1'"; }
    grep -F -- "$1" <<<"$err"
  }
  cp "$work/faces.db" "$work/dup.db"
  sed '4s/ zoe$/ ava/' "$work/faces.db.names" >"$work/dup.db.names"
  expect_error "$work/dup.db.names line 4: the name is given twice" "$work/dup.db"
  expect_error "$work/none.db" "$work/none.db"
  head -c 100 /dev/urandom >"$work/garbage.db"
  cp "$work/faces.db.names" "$work/garbage.db.names"
  expect_error "$work/garbage.db" "$work/garbage.db"
  # The detector given as the embedder: refused, naming it.
  rc=0
  err=$("$va" "$work/face_full_range.kom" --out "$work/bad" --no-video --load "$work/faces.db" \
    --embedder "$work/face_full_range.kom" "$data/demo.mp4" 2>&1) || rc=$?
  [ $rc = 1 ] && grep -q "face_full_range.kom: " <<<"$err" || { echo "$err"; fail "a detector as the embedder: exit $rc"; }
  grep "face_full_range.kom: " <<<"$err"
  exit 0
fi

# photo 1 cut to 4:3 and doubled as make_demo_data.sh does, then a 1.4x window panning left to right.
ffmpeg -hide_banner -loglevel error -y -i "$data/photo1.jpg" \
  -vf "crop='min(iw,ih*4/3)':'min(ih,iw*3/4)',scale=1280:960,setsar=1,zoompan=z=1.4:x='(iw-iw/zoom)*on/74':y='(ih-ih/zoom)*0.3':d=75:s=640x480:fps=25,format=yuv420p" \
  -frames:v 75 -c:v libx264 -preset veryfast -crf 20 -g 25 -bf 0 "$data/pan.mp4"

if [ "$mode" = tracks ]; then
  out=$("$va" "$work/face_full_range.kom" --out "$work/out" "$data/pan.mp4" "$data/pan.mp4" "$data/demo.mp4" \
    2>"$work/stderr") || { echo "$out"; cat "$work/stderr"; fail "video-analytics failed"; }
  echo "$out"
  grep -v '^\[libx264' "$work/stderr" || true
  for ch in 0 1 2; do
    stem=$([ $ch = 2 ] && echo demo || echo pan)
    grep -q "^channel $ch: 75 frames, [0-9]* tracks, 0 dropped$" <<<"$out" || fail "channel $ch did not read 75 frames"
    grep -q "^wrote $work/out/ch${ch}_${stem}_annotated.mp4 (75 frames)$" <<<"$out" || fail "channel $ch: no MP4 line"
    [ "$(mp4_frames "$work/out/ch${ch}_${stem}_annotated.mp4")" = 75 ] || fail "ch${ch}_${stem}_annotated.mp4: not 75 frames"
  done
  python3 - "$work/out" <<'EOF'
import json, sys
out = sys.argv[1]
def load(ch, stem):
    return [json.loads(line) for line in open(f"{out}/ch{ch}_{stem}.jsonl")]
def fail(msg):
    print("FAIL:", msg); sys.exit(1)
def consistent(ch, lines):
    entered, left, seen = {}, set(), set()
    frames = [l for l in lines if l["type"] == "frame"]
    for l in lines:
        if l["channel"] != ch: fail(f"channel {ch}: a line of channel {l['channel']}")
        t = l["type"]
        if t == "enter":
            if l["track"] in entered: fail(f"channel {ch}: track {l['track']} entered twice")
            entered[l["track"]] = l["frame"]
        elif t == "frame":
            ids = [x["id"] for x in l["tracks"]]
            if l["count"] != len(ids): fail(f"channel {ch} frame {l['frame']}: count {l['count']}, {len(ids)} tracks")
            for i in ids:
                if i not in entered or i in left: fail(f"channel {ch} frame {l['frame']}: track {i} seen outside enter/leave")
                seen.add(i)
        elif t == "leave":
            if l["track"] not in entered or l["track"] in left: fail(f"channel {ch}: track {l['track']} left twice or never entered")
            if l["frames"] != l["frame"] - entered[l["track"]]: fail(f"channel {ch}: leave of {l['track']} miscounts its frames")
            left.add(l["track"])
    if set(entered) != left: fail(f"channel {ch}: tracks entered but never left: {set(entered) - left}")
    if [f["frame"] for f in frames] != list(range(75)): fail(f"channel {ch}: frames are not 0..74")
    health = [l for l in lines if l["type"] == "health"]
    if not health or health[-1]["processed"] != 75 or health[-1]["dropped"] != 0 or health[-1]["state"] == "failed":
        fail(f"channel {ch}: last health line {health[-1] if health else None}")
    return frames, entered
pan0, ids0 = consistent(0, load(0, "pan"))
pan1, ids1 = consistent(1, load(1, "pan"))
_, ids2 = consistent(2, load(2, "demo"))
# The pan keeps photo 1's middle face in view all along; the left face leaves the picture past the middle
# of the clip and the right one comes in: three faces, three ids, each seen in one run of frames.
if min(f["count"] for f in pan0) < 2: fail("pan.mp4 always shows two faces, a frame counts fewer")
if len(ids0) != 3: fail(f"pan.mp4: {len(ids0)} ids for photo 1's 3 faces (a face changed id): {sorted(ids0)}")
for i in ids0:
    seen = [f["frame"] for f in pan0 if i in {t["id"] for t in f["tracks"]}]
    gaps = [b - a for a, b in zip(seen, seen[1:]) if b - a > 1]
    if any(g > 4 for g in gaps): fail(f"pan.mp4: track {i} vanished for {max(gaps) - 1} frames in view")
middle = {t["id"] for t in pan0[0]["tracks"]} & {t["id"] for t in pan0[-1]["tracks"]}
if len(middle) != 1: fail(f"pan.mp4: the middle face is not one id from the first frame to the last: {middle}")
strip = lambda fs: [(f["frame"], f["tracks"]) for f in fs]
if strip(pan0) != strip(pan1): fail("channels 0 and 1 read the same clip and tracked it differently")
if len(ids2) < 3: fail(f"the demo clip (three photos) gave only {len(ids2)} tracks")
print(f"video-analytics: 3 ids for 3 faces on pan.mp4, {len(ids2)} on the demo clip, events consistent")
EOF
  # --loop plays a file again from its start: 100 frames from the 75-frame clip, numbered on.
  out=$("$va" "$work/face_full_range.kom" --out "$work/loop" --loop --max-frames 100 --no-video "$data/pan.mp4" \
    2>"$work/stderr") || { cat "$work/stderr"; fail "--loop failed"; }
  grep -q "^channel 0: 100 frames, [0-9]* tracks, 0 dropped$" <<<"$out" || { echo "$out"; fail "--loop did not give 100 frames"; }
  [ "$(grep -c '"type":"frame"' "$work/loop/ch0_pan.jsonl")" = 100 ] && grep -q '"type":"frame","channel":0,"frame":99,' \
    "$work/loop/ch0_pan.jsonl" || fail "--loop: the JSON lines do not hold frames 0..99"
  # Bad inputs are refused before any channel starts, naming the channel and the problem.
  rc=0
  err=$("$va" "$work/face_full_range.kom" --out "$work/bad" "$data/pan.mp4" "$work/none.mp4" 2>&1) || rc=$?
  [ $rc = 1 ] && grep -qF "channel 1 ($work/none.mp4): KES_ERR_NOT_FOUND" <<<"$err" || { echo "$err"; fail "a missing input: exit $rc"; }
  rc=0
  err=$("$va" "$work/face_full_range.kom" --out "$work/bad" "$data/photo1.jpg" 2>&1) || rc=$?
  [ $rc = 1 ] && grep -qF "channel 0 ($data/photo1.jpg): KES_ERR_" <<<"$err" || { echo "$err"; fail "a JPEG as a video: exit $rc"; }
  echo "$err"
  exit 0
fi

# camera
serve() {
  "$server" "$data/pan.mp4" 0 >"$work/server.out" 2>"$work/server.err" &
  server_pid=$!
  for _ in $(seq 100); do
    port=$(sed -n 's/^PORT //p' "$work/server.out")
    [ -n "$port" ] && return 0
    kill -0 $server_pid 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
server_pid= va_pid=
trap '[ -n "$server_pid" ] && kill -9 $server_pid 2>/dev/null; [ -n "$va_pid" ] && kill -9 $va_pid 2>/dev/null; true' EXIT
serve || skip_missing "video-analytics camera check: the RTSP test server did not start (GStreamer plugins?)"
url=rtsp://127.0.0.1:$port/cam
start=$SECONDS
"$va" "$work/face_full_range.kom" --out "$work/out" --realtime --no-video --timeout-ms 1000 --reconnect-attempts 2 \
  "$data/pan.mp4" "$data/pan.mp4" "$url" >"$work/stdout" 2>"$work/stderr" &
va_pid=$!
for _ in $(seq 1200); do grep -q '"type":"frame"' "$work/out/ch2_cam.jsonl" 2>/dev/null && break; sleep 0.05; done
grep -q '"type":"frame"' "$work/out/ch2_cam.jsonl" || { cat "$work/stdout" "$work/stderr"; fail "no frame from $url"; }
kill -9 $server_pid
wait $server_pid 2>/dev/null || true
server_pid=
killed_at=$(grep -c '"type":"frame"' "$work/out/ch0_pan.jsonl" || true)
rc=0
timeout 120 tail --pid=$va_pid -f /dev/null || fail "video-analytics did not finish within 120 s of the camera's death (hung?)"
wait $va_pid || rc=$?
va_pid=
cat "$work/stdout"
[ "$rc" = 1 ] || { cat "$work/stderr"; fail "exit status $rc, not 1 (a channel failed)"; }
for ch in 0 1; do
  # Read in real time on a busy machine, a channel may drop frames (then its tracks may differ); each is
  # counted.
  line=$(grep "^channel $ch: [0-9]* frames, [0-9]* tracks, [0-9]* dropped$" "$work/stdout") || fail "channel $ch: no summary"
  [ $(($(cut -d' ' -f3 <<<"$line") + $(cut -d' ' -f7 <<<"$line"))) = 75 ] || fail "channel $ch: $line (not 75 in all)"
done
grep -q "^channel 2: [0-9]* frames, .*failed: .*$url" "$work/stdout" || fail "the camera's channel did not fail naming $url"
echo "the file channels had $killed_at of 75 frames when the camera died; the run took $((SECONDS - start)) s"
[ "$killed_at" -lt 60 ] || fail "the camera died too late to show anything ($killed_at frames read)"
python3 - "$work/out/ch2_cam.jsonl" "$work/out/ch0_pan.jsonl" <<'EOF'
import json, sys
cam = [json.loads(l) for l in open(sys.argv[1])]
health = [l for l in cam if l["type"] == "health"]
# Health is sampled once a second: on a slow (sanitizer) build the whole reconnect phase can fall between
# two samples, so the camera's loss shows as "reconnecting" or, already, as "failed" after its attempts.
lost = [h for h in health if h["state"] in ("reconnecting", "failed") and h["reconnect_attempts"] >= 1]
if not lost:
    print("FAIL: the camera's health never said it was reconnecting (or failed after reconnecting):", health); sys.exit(1)
if health[-1]["state"] != "failed" or "reconnect attempts" not in health[-1]["error"]:
    print("FAIL: the camera's last health line:", health[-1]); sys.exit(1)
# The file channel went on after the camera was lost: more of its frames were accounted for (processed, or
# dropped for being late when read in real time) after the loss than before, unless it had read them all by
# then, and it ended well.
lost_at = lost[0]["seconds"]
files = [l for l in map(json.loads, open(sys.argv[2])) if l["type"] == "health"]
done = lambda h: h["processed"] + h["dropped"]
at_loss = max([done(h) for h in files if h["seconds"] <= lost_at] or [0])
if files[-1]["state"] == "failed" or (done(files[-1]) <= at_loss and at_loss < 75):
    print(f"FAIL: the file channel stalled with the camera: {at_loss} frames when it was lost, then {files[-1]}")
    sys.exit(1)
print(f"file channel: {at_loss} frames when the camera was lost at {lost_at} s, {files[-1]['processed']} at the end")
print(f"video-analytics: camera gave up after {health[-1]['reconnect_attempts']} attempts; the files went on")
EOF
