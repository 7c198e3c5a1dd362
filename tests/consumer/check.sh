#!/usr/bin/env bash
# Installs a configured Kestrel build tree into a scratch prefix, then builds and runs tests/consumer
# against it twice: with CMake's find_package(Kestrel) and with plain cc + pkg-config.
# usage: tests/consumer/check.sh <kestrel build dir>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?kestrel build dir}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in include/kestrel/kestrel.h include/kestrel/version.h include/kestrel/config.h lib/libkestrel.a \
         lib/libkes_sdk.a lib/cmake/Kestrel/KestrelConfig.cmake lib/pkgconfig/kestrel.pc; do
  [ -e "$work/prefix/$f" ] || { echo "consumer: install tree lacks $f" >&2; exit 1; }
done
if [ -e "$work/prefix/include/kes" ] || grep -rq "sdk/internal" "$work/prefix/lib/cmake"; then
  echo "consumer: internal headers leaked into the install tree" >&2; exit 1
fi

cmake -S "$here" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer"
echo "consumer: find_package(Kestrel) OK"

PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" cc -std=c11 -Wall -Wextra -Werror -o "$work/consumer-pc" \
  "$here/main.c" $(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs kestrel)
"$work/consumer-pc"
echo "consumer: pkg-config kestrel OK"
