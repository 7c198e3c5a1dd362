#!/usr/bin/env bash
# ctest Docs.ReadmeExampleNamesZoeInPhoto3: the C example in README.md (between <!-- c-example:begin -->
# and <!-- c-example:end -->) gives the right answer, not only compiles (issue 23 §1: it compiled and
# named the wrong person). The example, wrapped by tests/integration/readme_example_main.c, is built
# against an installed Kestrel (cmake --install of BUILD_DIR, then cc + pkg-config, as README.md says);
# the models are converted as README.md's "Converting and running a model" says (MobileFaceNet with
# --dynamic-batch 1,2,4,8), the five people enrolled as the demo enrolls them, with the installed tools.
# It must name zoe in photo 3 with face-search's cosine, name the three people of photo 1 in it, and
# print kes_last_error() for a photo that does not exist.
# Every other C block in README.md and docs/*.md must be a fragment: a line that is just "...".
# Exits 77 (skipped) when the models are not in the cache (engine/tests/models/fetch_models.sh).
#   readme_example_check.sh BUILD_DIR WORK_DIR
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$root/cmake/test_dependency.sh"
build=$1 work=$2
cache=${KES_MODEL_CACHE:-$HOME/.cache/kestrel/models}/files
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# C blocks: the marked example, or fragments.
for doc in "$root/README.md" "$root"/docs/*.md; do
  awk -v doc="${doc#"$root"/}" '
    /<!-- c-example:begin -->/ { marked = 1 }
    /<!-- c-example:end -->/ { marked = 0 }
    /^```c$/ { inside = 1; start = NR; fragment = 0; next }
    inside && /^```$/ { inside = 0; if (!marked && !fragment) { print doc ":" start ": a C block that is neither the c-example nor a fragment (a line \"...\")"; bad = 1 } next }
    inside && /^\.\.\.$/ { fragment = 1 }
    END { exit bad }' "$doc" || fail "mark the block as a fragment, or make it the tested example"
done

rm -rf "$work"
mkdir -p "$work"
sed -n '/<!-- c-example:begin -->/,/<!-- c-example:end -->/p' "$root/README.md" | sed '/^<!--/d; /^```/d' \
  >"$work/readme_example.c"
[ -s "$work/readme_example.c" ] || fail "no c-example block in README.md"

for f in blazeface_256.onnx mobilefacenet.tflite photo1.ppm photo2.ppm photo3.ppm; do
  [ -f "$cache/$f" ] || skip_missing "README example: $cache/$f missing (run engine/tests/models/fetch_models.sh)"
done
command -v cjpeg >/dev/null || skip_missing "README example: needs cjpeg (libjpeg-turbo-progs)"

# The install tree, and the example built against it the way README.md says an app is.
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install"; }
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs kestrel)
# shellcheck disable=SC2086  # the flags are words
cc -std=c11 -Wall -Wextra -Werror -I"$work" -o "$work/readme_example" "$root/tests/integration/readme_example_main.c" $flags

# The demo's data and models, as README.md and samples/face-search/demo.sh make them.
for i in 1 2 3; do cjpeg -quality 92 -outfile "$work/photo$i.jpg" "$cache/photo$i.ppm"; done
aipp=$root/samples/face-search/aipp_rgb_centered.cfg
"$prefix/bin/kes-convert" "$cache/blazeface_256.onnx" --output "$work/bf.kom" --insert-op-conf "$aipp" >/dev/null
"$prefix/bin/kes-convert" "$cache/mobilefacenet.tflite" --output "$work/mfn.kom" --dynamic-batch 1,2,4,8 \
  --insert-op-conf "$aipp" >/dev/null
"$prefix/bin/face-search" "$work/bf.kom" "$work/mfn.kom" \
  --enroll ava="$work/photo1.jpg:0" --enroll mia="$work/photo1.jpg:1" --enroll zoe="$work/photo1.jpg:2" \
  --enroll lea="$work/photo2.jpg:0" --enroll ivy="$work/photo2.jpg:1" --save "$work/faces.db" >/dev/null 2>&1 ||
  fail "face-search could not enroll the demo's people"

run() { "$work/readme_example" "$1" "$work/bf.kom" "$work/mfn.kom" "$work/faces.db"; }
out3=$(run "$work/photo3.jpg") || fail "the example failed on photo 3: $out3"
echo "photo 3:"
echo "$out3"
zoe=$(sed -n 's/.*: zoe, cosine \([0-9.]*\)$/\1/p' <<<"$out3")
[ -n "$zoe" ] || fail "the example did not name zoe in photo 3"
# face-search's cosine for her, to the example's two decimals.
want=$("$prefix/bin/face-search" "$work/bf.kom" "$work/mfn.kom" --load "$work/faces.db" --no-annotate \
  "$work/photo3.jpg" 2>/dev/null | sed -n 's/.*: zoe, cosine \([0-9.]*\)$/\1/p')
[ -n "$want" ] || fail "face-search did not name zoe in photo 3"
[ "$zoe" == "$(printf '%.2f' "$want")" ] || fail "zoe at cosine $zoe; face-search says $want"
[ "$(grep -c ': [a-z]*, cosine' <<<"$out3")" -eq 1 ] || fail "photo 3 has one enrolled person, zoe"

out1=$(run "$work/photo1.jpg") || fail "the example failed on photo 1: $out1"
for who in ava mia zoe; do grep -q ": $who, cosine" <<<"$out1" || fail "$who not named in photo 1, her enrolment photo: $out1"; done

# Errors come back with kes_last_error()'s reason, and a status.
if err=$(run "$work/no-such-photo.jpg" 2>&1); then fail "a missing photo passed: $err"; fi
grep -q "kes_jpeg_decode_file(.*): .*no-such-photo.jpg" <<<"$err" || fail "the error does not say what failed: $err"
echo "README example: built against the install tree; zoe in photo 3 at cosine $zoe, as face-search says"
