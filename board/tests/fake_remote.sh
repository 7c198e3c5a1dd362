#!/usr/bin/env bash
# A stand-in for ssh and scp that makes a local folder the "board", so board/deploy.sh is tested end to
# end on the emulated board: commands run in $KES_FAKE_BOARD_HOME with every binary launched through
# board/emulate.sh (KES_BOARD_RUNNER), and copies land in that folder. `uname -m` answers the emulated
# board's architecture, KES_FAKE_BOARD_MACHINE (aarch64 by default), not the build machine's.
#   fake_remote.sh ssh HOST COMMAND     |     fake_remote.sh scp SRC HOST:DST
set -euo pipefail
home=${KES_FAKE_BOARD_HOME:?set KES_FAKE_BOARD_HOME}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$home"
case "${1:-}" in
  ssh)
    shift 2  # the host
    cd "$home"
    machine=${KES_FAKE_BOARD_MACHINE:-aarch64}
    KES_BOARD_RUNNER="$here/emulate.sh" exec sh -c "uname() { if [ \"\$1\" = -m ]; then echo $machine; else command uname \"\$@\"; fi; }; $*"
    ;;
  scp)
    src=$2 dst=${3#*:}
    cp "$src" "$home/$dst"
    ;;
  *) echo "fake_remote.sh: ssh or scp" >&2; exit 2 ;;
esac
