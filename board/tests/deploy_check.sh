#!/usr/bin/env bash
# ctest board.DeployToEmulatedBoard: board/deploy.sh against the fake remote (a local folder, binaries
# under qemu) — packages the build, copies it, runs kes-info and the sdk tests "on the board".
set -euo pipefail
build_dir=${1:?build dir}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export KES_FAKE_BOARD_HOME="$build_dir/test-tmp/fake-board"
rm -rf "$KES_FAKE_BOARD_HOME"
export KES_SSH="$here/fake_remote.sh ssh" KES_SCP="$here/fake_remote.sh scp"
out=$("$here/../deploy.sh" --host tester@emulated --build-dir "$build_dir" --run kes-info \
      --tests-matching 'kes_sdk_tests' 2>&1) || { echo "$out"; exit 1; }
echo "$out"
grep -q -- "-- ok: kes-info" <<<"$out"
grep -q -- "-- ok: kes_sdk_tests" <<<"$out"
test -f "$KES_FAKE_BOARD_HOME/kestrel/kestrel/lib/libkestrel.a"  # --dir kestrel, then the tarball's kestrel/
