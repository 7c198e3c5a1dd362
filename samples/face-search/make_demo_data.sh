#!/usr/bin/env bash
# The face-search demo's data, from the photos engine/tests/models/fetch_models.sh caches (the face-api
# sample photos at half size, photo1.ppm .. photo6.ppm):
#   OUT_DIR/photo1.jpg .. photo6.jpg   the photos as JPEG (cjpeg, quality 92)
#   OUT_DIR/demo.mp4                   a 640x480 25 fps H.264 slideshow (Debian's ffmpeg, libx264) of
#                                      photos 3, 1 and 6, SECONDS each (default 3), zooming in, panning
#                                      and zooming out, so the faces move and change size
#   make_demo_data.sh CACHE_DIR OUT_DIR [SECONDS]
# Needs cjpeg (libjpeg-turbo-progs) and ffmpeg; exits 2 for bad arguments, 1 when a tool fails.
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: make_demo_data.sh CACHE_DIR OUT_DIR [SECONDS]" >&2
  exit 2
fi
cache=$1 out=$2 seconds=${3:-3}
case "$seconds" in '' | *[!0-9]* | 0) echo "make_demo_data.sh: SECONDS must be a whole number >= 1 (got '$seconds')" >&2; exit 2 ;; esac
for i in 1 2 3 4 5 6; do
  [ -f "$cache/photo$i.ppm" ] || { echo "make_demo_data.sh: $cache/photo$i.ppm missing (run engine/tests/models/fetch_models.sh)" >&2; exit 1; }
done
mkdir -p "$out"
for i in 1 2 3 4 5 6; do cjpeg -quality 92 -outfile "$out/photo$i.jpg" "$cache/photo$i.ppm"; done

# Each photo is cut to 4:3 (no stretching), doubled (zoompan moves in whole pixels: at twice the size the
# steps are half as visible) and turned into SECONDS*25 frames of 640x480 by zoompan; `on` is the output
# frame number, so x, y and zoom are functions of time.
n=$((seconds * 25))
last=$((n - 1))
prep="crop='min(iw,ih*4/3)':'min(ih,iw*3/4)',scale=1280:960,setsar=1"
# Photo 3: zoom in from the whole picture to 1.5x, towards the upper middle (where the faces are).
zoom_in="zoompan=z='1+0.5*on/$last':x='(iw-iw/zoom)*0.55':y='(ih-ih/zoom)*0.2':d=$n:s=640x480:fps=25"
# Photo 1: at 1.4x, pan from the left edge to the right edge.
pan="zoompan=z=1.4:x='(iw-iw/zoom)*on/$last':y='(ih-ih/zoom)*0.3':d=$n:s=640x480:fps=25"
# Photo 6: zoom out from 1.5x to the whole picture.
zoom_out="zoompan=z='1.5-0.5*on/$last':x='(iw-iw/zoom)/2':y='(ih-ih/zoom)*0.3':d=$n:s=640x480:fps=25"
ffmpeg -hide_banner -loglevel error -y \
  -i "$out/photo3.jpg" -i "$out/photo1.jpg" -i "$out/photo6.jpg" \
  -filter_complex "[0:v]$prep,$zoom_in[a];[1:v]$prep,$pan[b];[2:v]$prep,$zoom_out[c];[a][b][c]concat=n=3:v=1:a=0,format=yuv420p[v]" \
  -map "[v]" -c:v libx264 -preset veryfast -crf 20 -g 25 -bf 0 -movflags +faststart "$out/demo.mp4"
echo "make_demo_data.sh: $out/photo1.jpg .. photo6.jpg and $out/demo.mp4 ($((3 * n)) frames, 640x480, 25 fps)"
