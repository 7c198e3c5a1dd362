#!/usr/bin/env bash
# Footprint (issue 14 §4): the size of the aarch64 face-search sample, stripped, as a board would get it.
#   bench/footprint.sh [build dir]        (default build/h-pkg-arm/footprint; -j KES_JOBS, default 2)
# Builds face-search with the aarch64 toolchain (Release, armv8-a baseline) in one build dir, three ways:
#   without FFmpeg, -static     -DKES_WITH_FFMPEG=OFF: Kestrel, libjpeg-turbo, libpng, zlib, libstdc++ and
#                               glibc all in one file (the goal: <= 8 MB).
#   without FFmpeg, glibc shared  the same with -static-libstdc++ -static-libgcc: what the NPU path needs
#                               (a -static program cannot really dlopen libascendcl.so).
#   with FFmpeg                 Debian's arm64 libav*.a need dozens of static libraries Debian does not ship
#                               (x264, x265, dav1d, aom, vpx, gnutls, X11, VA-API, ...): no -static link is
#                               possible. Measured: static but glibc and FFmpeg, plus the shared FFmpeg
#                               libraries it loads, plus what Debian's FFmpeg loads in turn (without glibc).
# Every binary is started on the emulated board (board/emulate.sh) to show it runs. Prints a table;
# bench/README.md (Footprint) records the numbers.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build/h-pkg-arm/footprint}
jobs=${KES_JOBS:-2}
multiarch=aarch64-linux-gnu
libdir=/usr/lib/$multiarch
strip=${multiarch}-strip
mkdir -p "$dir"

for a in libturbojpeg.a libpng16.a libz.a; do
  [ -f "$libdir/$a" ] || { echo "footprint: $libdir/$a missing (apt-get install libturbojpeg0-dev:arm64 libpng-dev:arm64)" >&2; exit 2; }
done

# The static archives for the libraries dvpp finds with pkg-config (pkg_check_modules keeps a library it
# was given in its cache variable); zlib (libpng's dependency) at the end of every link line.
common=(-DKES_BUILD_TESTS=OFF -DKES_BUILD_BENCH=OFF -DKES_BUILD_SAMPLES=ON -DKES_BUILD_ASCEND_SIM=OFF
  -DCMAKE_BUILD_TYPE=Release
  -Dpkgcfg_lib_TURBOJPEG_turbojpeg="$libdir/libturbojpeg.a" -Dpkgcfg_lib_LIBPNG_png16="$libdir/libpng16.a"
  "-DCMAKE_C_STANDARD_LIBRARIES=$libdir/libz.a -lm" "-DCMAKE_CXX_STANDARD_LIBRARIES=$libdir/libz.a -lm")

# measure <label>: strips a copy of face-search, checks it starts on the emulated board.
measure() {
  local bin="$dir/face-search.$1"
  "$strip" -o "$bin" "$dir/samples/face-search/face-search"
  local out rc=0
  out=$(bash "$root/board/emulate.sh" "$bin" d.kom e.kom g.jpg --threshold abc 2>&1) || rc=$?
  if [ "$rc" != 2 ] || ! grep -q -- "--threshold must be" <<<"$out"; then
    echo "footprint: $bin did not run on the emulated board (exit $rc): $out" >&2
    exit 1
  fi
}

echo "== face-search, aarch64, without FFmpeg, -static"
cmake --preset aarch64 -B "$dir" --no-warn-unused-cli "${common[@]}" -DKES_WITH_FFMPEG=OFF -DCMAKE_EXE_LINKER_FLAGS=-static >/dev/null
cmake --build "$dir" -j "$jobs" --target face-search >/dev/null
measure static-no-ffmpeg

# glibc's static dlopen needs, at run time, the very glibc it was linked with: the NPU path wants it shared.
echo "== face-search, aarch64, without FFmpeg, static but glibc"
cmake --preset aarch64 -B "$dir" --no-warn-unused-cli "${common[@]}" -DKES_WITH_FFMPEG=OFF \
  "-DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++ -static-libgcc" >/dev/null
cmake --build "$dir" -j "$jobs" --target face-search >/dev/null
measure glibc-shared-no-ffmpeg

echo "== face-search, aarch64, with FFmpeg (static but glibc and FFmpeg)"
cmake --preset aarch64 -B "$dir" --no-warn-unused-cli "${common[@]}" -DKES_WITH_FFMPEG=ON \
  "-DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++ -static-libgcc" >/dev/null
cmake --build "$dir" -j "$jobs" --target face-search >/dev/null
measure ffmpeg-shared

# The shared libraries face-search loads, and those they load, glibc's and the loader left out (every
# board has them; the -static binary carries its own share of glibc).
is_glibc() { [[ $1 =~ ^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-aarch64)\.so ]]; }
resolve() { local p; for p in "$libdir/$1" "/lib/$multiarch/$1"; do [ -e "$p" ] && { readlink -f "$p"; return; }; done; }
needed() { "$multiarch-readelf" -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
declare -A seen=()
queue=()
for n in $(needed "$dir/face-search.ffmpeg-shared"); do is_glibc "$n" || queue+=("$n"); done
while [ ${#queue[@]} -gt 0 ]; do
  n=${queue[0]}
  queue=("${queue[@]:1}")
  [ -n "${seen[$n]:-}" ] && continue
  f=$(resolve "$n")
  [ -n "$f" ] || { echo "footprint: $n (needed by FFmpeg) not found in $libdir" >&2; exit 1; }
  seen[$n]=$f
  for m in $(needed "$f"); do is_glibc "$m" || queue+=("$m"); done
done
ff_bytes=0 dep_bytes=0 ff_names="" ndeps=0
for n in "${!seen[@]}"; do
  s=$(stat -c %s "${seen[$n]}")
  if [[ $n =~ ^lib(avformat|avcodec|avutil|swscale|swresample)\.so ]]; then
    ff_bytes=$((ff_bytes + s)) ff_names+="${n%%.so*}.so "
  else
    dep_bytes=$((dep_bytes + s)) ndeps=$((ndeps + 1))
  fi
done
# How many of the libraries Debian's libav*.a need have no static archive (why there is no -static row).
missing=0
for l in $(PKG_CONFIG_LIBDIR="$libdir/pkgconfig:/usr/share/pkgconfig" pkg-config --static --libs-only-l \
             libavformat libavcodec libavutil libswscale | tr ' ' '\n' | sort -u); do
  n=${l#-l}
  [[ $n =~ ^(m|pthread|dl|rt|stdc\+\+|atomic|avformat|avcodec|avutil|swscale|swresample)$ ]] && continue
  [ -f "$libdir/lib$n.a" ] || missing=$((missing + 1))
done

mb() { awk -v b="$1" 'BEGIN { printf "%.2f MB (%.2f MiB)", b / 1e6, b / 1048576 }'; }
no_ff=$(stat -c %s "$dir/face-search.static-no-ffmpeg")
no_ff_glibc=$(stat -c %s "$dir/face-search.glibc-shared-no-ffmpeg")
with_ff=$(stat -c %s "$dir/face-search.ffmpeg-shared")
echo
echo "face-search, aarch64 (armv8-a), Release, stripped ($(${multiarch}-gcc -dumpfullversion), $(date +%F))"
printf '%-62s %20s\n' "without FFmpeg, -static (one file, goal <= 8 MB)" "$(mb "$no_ff")"
printf '%-62s %20s\n' "without FFmpeg, static but glibc (can dlopen the NPU runtime)" "$(mb "$no_ff_glibc")"
printf '%-62s %20s\n' "with FFmpeg: binary (static but glibc + FFmpeg)" "$(mb "$with_ff")"
printf '%-62s %20s\n' "  + FFmpeg's shared libraries (see below)" "$(mb "$ff_bytes")"
printf '%-62s %20s\n' "  = binary + FFmpeg" "$(mb $((with_ff + ff_bytes)))"
printf '%-62s %20s\n' "  + what Debian's FFmpeg loads ($ndeps libs, no glibc)" "$(mb "$dep_bytes")"
printf '%-62s %20s\n' "  = binary + FFmpeg + its Debian dependencies" "$(mb $((with_ff + ff_bytes + dep_bytes)))"
echo "(FFmpeg's libraries: $(tr ' ' '\n' <<<"${ff_names% }" | sort | tr '\n' ' ')as Debian 12 ships them, stripped)"
echo "(a -static link with FFmpeg: Debian's libav*.a need $missing libraries that have no .a in $libdir)"
if [ "$no_ff" -le 8000000 ]; then echo "goal <= 8 MB without FFmpeg: met"; else echo "goal <= 8 MB without FFmpeg: NOT met"; fi
