#!/usr/bin/env bash
# The emulated dev board: runs an aarch64 program under qemu user mode with the CPU model closest to
# the board and Debian's arm64 multiarch runtime (libc6:arm64, libstdc++6:arm64; no binfmt_misc needed).
# The cross toolchain's own runtime (-L /usr/aarch64-linux-gnu) is not used by default: under qemu
# 7.2 its threads hang at start-up. KES_AARCH64_SYSROOT=<dir> selects another sysroot.
#   board/emulate.sh [--board generic|atlas200dk|atlas200idka2] program [args...]
# The board can also come from KES_EMULATED_BOARD. CMake uses this as CMAKE_CROSSCOMPILING_EMULATOR,
# so `ctest --preset aarch64` runs every test on the emulated board.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The header above, up to the first line that is not a comment: --help must not reach qemu (it
# printed qemu's own help, which says nothing about this script).
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
board=${KES_EMULATED_BOARD:-generic}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
if [ "${1:-}" = "--board" ]; then
  [ -n "${2:-}" ] || { echo "emulate.sh: --board needs a name (generic, atlas200dk or atlas200idka2)" >&2; exit 2; }
  board=$2
  shift 2
fi
case "${1:-}" in -h|--help) usage; exit 0 ;; esac
profile="$here/profiles/$board.env"
if [ ! -f "$profile" ]; then
  echo "emulate.sh: unknown board '$board' (profiles: $(cd "$here/profiles" && ls ./*.env | sed 's|./||;s|\.env||' | tr '\n' ' '))" >&2
  exit 2
fi
# shellcheck source=/dev/null
. "$profile"
[ $# -gt 0 ] || { echo "usage: emulate.sh [--board NAME] program [args...]" >&2; exit 2; }
# qemu says nothing useful (exit 1, no message) for a program that is not there, an empty file, or
# one that is no aarch64 program: each is named here.
[ -f "$1" ] || { echo "emulate.sh: no such program '$1'" >&2; exit 2; }
[ -s "$1" ] || { echo "emulate.sh: '$1' is an empty file, not a program (an interrupted build or copy?)" >&2; exit 2; }
# ELF magic, then e_machine (offset 18, little-endian): 183 is aarch64.
magic=$(od -An -c -N4 "$1" | tr -d ' ')
machine=$(od -An -tu2 -j18 -N2 "$1" | tr -d ' ')
if [ "$magic" != '177ELF' ]; then
  echo "emulate.sh: '$1' is not an ELF program (a script runs as itself, without emulate.sh)" >&2
  exit 2
fi
[ "$machine" = 183 ] || { echo "emulate.sh: '$1' is not an aarch64 program (ELF machine $machine; aarch64 is 183)" >&2; exit 2; }
command -v qemu-aarch64-static >/dev/null || { echo "emulate.sh: qemu-aarch64-static missing (apt-get install qemu-user-static)" >&2; exit 2; }
if [ ! -e /lib/ld-linux-aarch64.so.1 ] && [ -z "${KES_AARCH64_SYSROOT:-}" ]; then
  echo "emulate.sh: no arm64 runtime (dpkg --add-architecture arm64 && apt-get install libc6:arm64 libstdc++6:arm64)" >&2
  exit 2
fi
exec qemu-aarch64-static -cpu "${KES_QEMU_CPU:-$BOARD_QEMU_CPU}" ${KES_AARCH64_SYSROOT:+-L "$KES_AARCH64_SYSROOT"} "$@"
