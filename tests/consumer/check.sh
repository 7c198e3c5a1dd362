#!/usr/bin/env bash
# Builds and runs tests/consumer, an outside app, against Kestrel the way an app would: with CMake's
# find_package(Kestrel) (everything, and COMPONENTS fv alone, tests/consumer/components) and with plain
# cc + pkg-config; checks that the install tree carries the licence, the notices, the docs (with every
# relative link resolving there, tests/docs/links_check.sh) and fetch_models.sh.
#   tests/consumer/check.sh <build dir>
#       installs the build tree into a scratch prefix (cmake --install) and checks that.
#   tests/consumer/check.sh --package <build dir> [<build dir> ...]
#       makes each build's release tarball (--target package, CPack), checks what it holds, unpacks it
#       somewhere else, and builds the consumer and the shipped samples against it. A cross build (one
#       configured with a toolchain file, e.g. the aarch64 preset) is consumed with the same toolchain
#       and run on the emulated board (board/emulate.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

die() { echo "consumer: $*" >&2; exit 1; }
cache_get() { sed -n "s/^$2:[A-Z]*=//p" "$1/CMakeCache.txt" | head -1; }
# What CMake found out about the C compiler (a toolchain file's settings are not in the cache).
compiler_get() { sed -n "s/^set($2 \"\(.*\)\")$/\1/p" "$1"/CMakeFiles/*/CMakeCCompiler.cmake | head -1; }

# What every install tree must hold, and must not: Kestrel's internal headers (sdk/internal, kes/*.hpp).
check_tree() {
  local prefix=$1 what=$2
  for f in include/kestrel/kestrel.h include/kestrel/version.h include/kestrel/config.h lib/libkestrel.a \
           lib/libkes_sdk.a lib/cmake/Kestrel/KestrelConfig.cmake lib/pkgconfig/kestrel.pc \
           share/doc/kestrel/README.md share/doc/kestrel/LICENSE share/doc/kestrel/NOTICE \
           share/doc/kestrel/THIRD-PARTY.md share/doc/kestrel/docs/ARCHITECTURE.md \
           share/doc/kestrel/docs/BOARD-RULES.md share/kestrel/fetch_models.sh; do
    [ -e "$prefix/$f" ] || die "$what lacks $f"
  done
  grep -q "Apache License" "$prefix/share/doc/kestrel/LICENSE" || die "$what: LICENSE is not the Apache License"
  # The docs' relative links resolve in the install tree as in the source tree.
  bash "$root/tests/docs/links_check.sh" "$prefix/share/doc/kestrel" || die "$what: broken links in share/doc/kestrel"
  # The demo's models can be fetched from here: the shipped script runs (its usage; a bad argument is
  # refused before anything is fetched).
  [ -x "$prefix/share/kestrel/fetch_models.sh" ] || die "$what: share/kestrel/fetch_models.sh is not executable"
  local usage rc=0
  usage=$("$prefix/share/kestrel/fetch_models.sh" --help) || die "$what: share/kestrel/fetch_models.sh --help failed"
  grep -q "share/kestrel/fetch_models.sh" <<<"$usage" || die "$what: share/kestrel/fetch_models.sh --help: no usage"
  "$prefix/share/kestrel/fetch_models.sh" --no-such-flag 2>/dev/null || rc=$?
  [ "$rc" = 2 ] || die "$what: share/kestrel/fetch_models.sh --no-such-flag exited $rc, expected 2"
  if [ -e "$prefix/include/kes" ] || find "$prefix/include" -name '*.hpp' | grep -q . ||
     grep -rq "sdk/internal" "$prefix/lib/cmake" "$prefix/lib/pkgconfig"; then
    die "internal headers leaked into $what"
  fi
}

# consume <prefix> <label>: the consumer with find_package and with pkg-config, built (cross-built with
# $toolchain and $cross_cc when set) and run (under "${run[@]}" when set).
toolchain="" cross_cc="" multiarch="" run=()
consume() {
  local prefix=$1 b cc=cc pc_env=()
  b=$(mktemp -d "$work/consumer.XXXX")
  if [ -n "$toolchain" ]; then
    cc=$cross_cc
    # Only the target's .pc files (Debian multiarch), as the toolchain file sets for CMake.
    pc_env=(PKG_CONFIG_LIBDIR="/usr/lib/$multiarch/pkgconfig:/usr/share/pkgconfig")
  fi
  cmake -S "$here" -B "$b/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    ${toolchain:+-DCMAKE_TOOLCHAIN_FILE="$toolchain"} >/dev/null
  cmake --build "$b/cmake-build" >/dev/null
  "${run[@]}" "$b/cmake-build/consumer"
  echo "consumer ($2): find_package(Kestrel) OK"

  # One component: COMPONENTS fv gives Kestrel::fv (with Kestrel::sdk); a component Kestrel does not
  # have fails find_package, naming it.
  cmake -S "$here/components" -B "$b/components" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    ${toolchain:+-DCMAKE_TOOLCHAIN_FILE="$toolchain"} >/dev/null
  cmake --build "$b/components" >/dev/null
  "${run[@]}" "$b/components/consumer-fv"
  if cmake -S "$here/components" -B "$b/bogus" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
       -DKES_CONSUMER_COMPONENTS="fv;bogus" ${toolchain:+-DCMAKE_TOOLCHAIN_FILE="$toolchain"} >"$b/bogus.log" 2>&1; then
    die "find_package(Kestrel COMPONENTS fv bogus) succeeded"
  fi
  grep -q "no component 'bogus'" "$b/bogus.log" || { cat "$b/bogus.log" >&2; die "the bogus component is not named"; }
  echo "consumer ($2): find_package(Kestrel COMPONENTS fv) OK; COMPONENTS bogus refused by name"

  local flags
  flags=$(env "${pc_env[@]}" PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs kestrel)
  # shellcheck disable=SC2086  # the flags are words
  "$cc" -std=c11 -Wall -Wextra -Werror -o "$b/consumer-pc" "$here/main.c" $flags
  "${run[@]}" "$b/consumer-pc"
  echo "consumer ($2): pkg-config kestrel OK"
}

if [ "${1:-}" != "--package" ]; then
  build=${1:?usage: check.sh <build dir> | check.sh --package <build dir>...}
  cmake --install "$build" --prefix "$work/prefix" >/dev/null
  check_tree "$work/prefix" "the install tree"
  consume "$work/prefix" install
  exit 0
fi
shift
[ $# -gt 0 ] || die "usage: check.sh --package <build dir>..."

n=0
for build in "$@"; do
  build=$(cd "$build" && pwd)
  n=$((n + 1))
  [ -f "$build/CPackConfig.cmake" ] || die "$build has no CPackConfig.cmake (configure it first)"
  name=$(sed -n 's/^set(CPACK_PACKAGE_FILE_NAME "\([^"]*\)")/\1/p' "$build/CPackConfig.cmake")
  arch=${name##*-}
  cmake --build "$build" -j "${KES_JOBS:-$(nproc)}" --target package >"$work/package.log" 2>&1 || { cat "$work/package.log" >&2; die "package failed"; }
  tarball="$build/$name.tar.gz"
  [ -f "$tarball" ] || die "no $tarball"

  # One top directory named like the tarball; the tools for the target's architecture.
  tops=$(tar tzf "$tarball" | cut -d/ -f1 | sort -u)
  [ "$tops" = "$name" ] || die "$name.tar.gz: top directories '$(tr '\n' ' ' <<<"$tops")', expected '$name'"
  mkdir -p "$work/unpack$n" "$work/moved$n"
  tar xzf "$tarball" -C "$work/unpack$n"
  # Relocatable: it works from wherever it is unpacked, also after it was moved.
  mv "$work/unpack$n/$name" "$work/moved$n/$name"
  pkg="$work/moved$n/$name"
  check_tree "$pkg" "$name.tar.gz"
  for d in lib/cmake/Kestrel lib/pkgconfig share/doc/kestrel share/kestrel/samples; do
    [ -d "$pkg/$d" ] || die "$name.tar.gz lacks $d/"
  done
  [ -f "$pkg/share/doc/kestrel/README.md" ] || die "$name.tar.gz lacks share/doc/kestrel/README.md"
  # Every tool and sample this build links (the presets generate Ninja) ships in bin/; no test, fuzzer or
  # benchmark does.
  for t in kes-info jpeg-to-tensor face-search video-analytics hands pose segment kes-convert kes-model-bench kes-compare kes-fv kes-sim-pack; do
    if grep -q "^build [^:]*/$t: [A-Z]*_EXECUTABLE_LINKER" "$build/build.ninja"; then
      [ -x "$pkg/bin/$t" ] || die "$name.tar.gz lacks bin/$t"
    fi
  done
  if grep -q "^build [^:]*/libascendcl.so: [A-Z]*_SHARED_LIBRARY_LINKER" "$build/build.ninja"; then
    [ -f "$pkg/lib/kestrel/ascend-sim/libascendcl.so" ] || die "$name.tar.gz lacks the AscendCL simulator"
  fi
  extra=$(find "$pkg/bin" -type f \( -name '*test*' -o -name 'fuzz_*' -o -name '*bench-*' -o -name 'kes-bench' \))
  [ -z "$extra" ] || die "$name.tar.gz ships test or bench programs: $extra"
  if grep -rqF -e "$build" -e "$root" "$pkg/lib/cmake" "$pkg/lib/pkgconfig" "$pkg/share/kestrel"; then
    die "$name.tar.gz names the build machine's paths (not relocatable)"
  fi
  machine=$(readelf -h "$pkg/bin/kes-info" | sed -n 's/^ *Machine: *//p')
  case "$arch:$machine" in
    x86_64:*X86-64*|aarch64:AArch64) ;;
    *) die "$name.tar.gz: bin/kes-info is for '$machine', not $arch" ;;
  esac
  echo "consumer: $name.tar.gz ($(du -k "$tarball" | cut -f1) KiB): $(cd "$pkg" && find bin -type f | sort | tr '\n' ' ')"

  toolchain=$(cache_get "$build" CMAKE_TOOLCHAIN_FILE)
  run=()
  if [ -n "$toolchain" ]; then
    cross_cc=$(compiler_get "$build" CMAKE_C_COMPILER)
    multiarch=$(compiler_get "$build" CMAKE_C_LIBRARY_ARCHITECTURE)
    run=(bash "$root/board/emulate.sh" --board "$(cache_get "$build" KES_EMULATED_BOARD)")
  fi
  consume "$pkg" "$arch package"

  # The shipped samples build against the package as they are, and the shipped kes-info runs.
  cmake -S "$pkg/share/kestrel/samples" -B "$work/samples$n" -G Ninja -DCMAKE_PREFIX_PATH="$pkg" \
    ${toolchain:+-DCMAKE_TOOLCHAIN_FILE="$toolchain"} >/dev/null
  cmake --build "$work/samples$n" >/dev/null
  for prog in "$work/samples$n/kes-info" "$pkg/bin/kes-info"; do
    "${run[@]}" "$prog" --check >"$work/kes-info.out" 2>&1 || { cat "$work/kes-info.out" >&2; die "$prog --check failed"; }
    grep -q "pool self-check: OK" "$work/kes-info.out" || die "$prog --check did not pass its self-check"
  done
  echo "consumer ($arch package): samples built from share/kestrel/samples; kes-info --check OK (built and shipped)"
done
