#!/bin/sh
# Runs on the board, from the unpacked deploy tarball (board/deploy.sh): the requested samples, then
# every test binary. POSIX sh only: the boards' images ship busybox or dash.
#   sh kestrel/run-on-board.sh [--run "kes-info args"]... [--tests]
# KES_BOARD_RUNNER prefixes every command (board/tests/fake_remote.sh sets it to the qemu emulator).
pkg=$(cd "$(dirname "$0")" && pwd)
runner=${KES_BOARD_RUNNER:-}
failed=0
tests=0
export LD_LIBRARY_PATH="$pkg/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
while [ $# -gt 0 ]; do
  case "$1" in
    --run)
      # Without a command, `shift 2` fails: bash looped here for ever, dash ran the bin/ folder.
      if [ $# -lt 2 ] || [ -z "$2" ]; then echo "run-on-board.sh: --run needs a command (--help for usage)" >&2; exit 2; fi
      echo "-- $2"
      # shellcheck disable=SC2086
      if $runner "$pkg/bin/"$2; then echo "-- ok: $2"; else echo "-- FAILED: $2"; failed=1; fi
      shift 2 ;;
    --tests) tests=1; shift ;;
    -h|--help)
      # The header above, up to the first line that is not a comment.
      awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "run-on-board.sh: unknown option $1 (--help for usage)" >&2; exit 2 ;;
  esac
done
if [ "$tests" = 1 ]; then
  for t in "$pkg"/tests/kes_*_tests; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    if $runner "$t" --gtest_brief=1 > "$pkg/$name.log" 2>&1; then
      echo "-- ok: $name ($(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$pkg/$name.log") tests passed)"
    else
      echo "-- FAILED: $name (log: $pkg/$name.log)"; tail -20 "$pkg/$name.log"; failed=1
    fi
  done
fi
exit $failed
