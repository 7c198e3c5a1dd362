#!/usr/bin/env bash
# ctest board.DeployRefusesABuildOfAnotherArchitecture: deploy.sh checks the ELF machine of what it ships
# against the board's `uname -m` before copying anything (an x86-64 build went to an arm board, and
# failed there program by program). The "build" is a stand-in whose install holds this machine's
# /bin/true as bin/kes-info; the fake remote answers the other architecture.
set -euo pipefail
work=${1:?work dir}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work"
mkdir -p "$work/build"
: >"$work/build/CMakeCache.txt"
printf 'file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/bin" TYPE PROGRAM RENAME kes-info FILES "%s")\n' \
  "$(readlink -f /bin/true)" >"$work/build/cmake_install.cmake"
case "$(uname -m)" in
  x86_64) board=aarch64 ours=x86_64 ;;
  aarch64) board=x86_64 ours=aarch64 ;;
  *) echo "deploy arch check: runs on x86_64 or aarch64 build machines"; exit 77 ;;
esac
export KES_FAKE_BOARD_HOME="$work/board" KES_FAKE_BOARD_MACHINE=$board
export KES_SSH="$here/fake_remote.sh ssh" KES_SCP="$here/fake_remote.sh scp"
rc=0
out=$("$here/../deploy.sh" --host tester@emulated --build-dir "$work/build" --run kes-info 2>&1) || rc=$?
echo "$out"
[ "$rc" = 2 ] || { echo "FAIL: deploy.sh exited $rc, not 2"; exit 1; }
grep -q "deploy.sh: $work/build holds $ours programs (bin/kes-info) but tester@emulated is $board (uname -m)" <<<"$out" ||
  { echo "FAIL: no message naming both architectures"; exit 1; }
[ ! -e "$KES_FAKE_BOARD_HOME/kestrel/kestrel.tar.gz" ] || { echo "FAIL: the build was copied anyway"; exit 1; }
# The same stand-in to a board of this machine's architecture passes the check and is copied.
export KES_FAKE_BOARD_MACHINE=$ours
out=$("$here/../deploy.sh" --host tester@emulated --build-dir "$work/build" --run kes-info 2>&1) || true
grep -q "holds .* programs" <<<"$out" && { echo "$out"; echo "FAIL: a matching build was refused"; exit 1; }
[ -e "$KES_FAKE_BOARD_HOME/kestrel/kestrel.tar.gz" ] || { echo "$out"; echo "FAIL: a matching build was not copied"; exit 1; }
echo "deploy.sh refuses a $ours build for a $board board before copying it"
