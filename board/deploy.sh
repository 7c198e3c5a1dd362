#!/usr/bin/env bash
# Deploys a cross-compiled Kestrel build to a dev board over ssh and runs it there: the samples, and
# (with --tests) every GoogleTest binary of the build, reporting one pass/fail line per binary.
#
#   board/deploy.sh --host USER@BOARD [--build-dir build/atlas200dk] [--dir kestrel] [--tests]
#                   [--tests-matching 'kes_sdk_*'] [--run "kes-info"] [--keep]
#
# What happens: the build tree's install (bin/, lib/, include/) and its test binaries are packed into
# one tarball with a runner script (run-on-board.sh), copied with scp, unpacked under --dir in the
# board user's home, and run with ssh. Nothing is installed system-wide. Test binaries that need
# source-tree data find it in the tarball's data/ folder (KES_SOURCE_DIR is baked in at build time,
# so on a real board the tests that read committed files (fuzz seeds, configs) pass only when the
# build's source path exists there too; the others run anywhere).
#
# KES_SSH / KES_SCP replace the ssh and scp commands (e.g. "ssh -p 2222", or the fake remote of
# board/tests/fake_remote.sh that the CI uses to run this script against the emulated board).
# Exit status: 0 when every run passed, 1 when something failed on the board, 2 for a usage or
# local error.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

host="" build_dir="$root/build/atlas200dk" remote_dir="kestrel" tests=0 keep=0 pattern='kes_*_tests'
runs=()
# The header above, up to the first line that is not a comment (a fixed line range printed the
# `set -euo pipefail` below it). --help exits 0, a bad option 2.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit "${1:-2}"; }
# An option's value, or a usage error naming the option (${2:?} exited 1 with "parameter null or not set").
value() { [ -n "${2:-}" ] || { echo "deploy.sh: $1 needs a value" >&2; usage; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --host) value "$@"; host=$2; shift 2 ;;
    --build-dir) value "$@"; build_dir=$2; shift 2 ;;
    --dir) value "$@"; remote_dir=$2; shift 2 ;;
    --tests) tests=1; shift ;;
    --tests-matching) value "$@"; tests=1; pattern=$2; shift 2 ;;
    --run) value "$@"; runs+=("$2"); shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage 0 ;;
    *) echo "deploy.sh: unknown option '$1'" >&2; usage ;;
  esac
done
[ -n "$host" ] || { echo "deploy.sh: --host USER@BOARD is required" >&2; exit 2; }
[ -f "$build_dir/CMakeCache.txt" ] || { echo "deploy.sh: '$build_dir' is not a configured build (cmake --preset atlas200dk && cmake --build --preset atlas200dk)" >&2; exit 2; }
ssh_cmd=${KES_SSH:-ssh}
scp_cmd=${KES_SCP:-scp}
[ ${#runs[@]} -gt 0 ] || runs=("kes-info")

stage=$(mktemp -d "${TMPDIR:-/tmp}/kestrel-deploy.XXXXXX")
[ "$keep" = 1 ] || trap 'rm -rf "$stage"' EXIT
pkg="$stage/kestrel"
mkdir -p "$pkg/tests"
echo "== staging $build_dir"
cmake --install "$build_dir" --prefix "$pkg" >/dev/null
if [ "$tests" = 1 ]; then
  find "$build_dir" -type f -name "$pattern" -perm -u+x -exec cp {} "$pkg/tests/" \;
  [ -n "$(ls "$pkg/tests")" ] || { echo "deploy.sh: no test binary matches '$pattern' in $build_dir" >&2; exit 2; }
fi
# The board must be able to run what ships: an x86-64 build copied to an arm board failed only there,
# program by program ("Exec format error"). The ELF machine (e_machine, offset 18) of every program
# against the board's `uname -m`.
elf_machine_of() {  # uname -m → ELF e_machine
  case "$1" in
    aarch64|arm64|armv8b|aarch64_be) echo 183 ;;
    x86_64|amd64) echo 62 ;;
    i?86) echo 3 ;;
    arm*) echo 40 ;;
    riscv64) echo 243 ;;
    *) echo "" ;;
  esac
}
board_arch=$($ssh_cmd "$host" "uname -m" | tr -d '\r\n') || { echo "deploy.sh: cannot reach $host (ssh ... uname -m failed)" >&2; exit 2; }
want=$(elf_machine_of "$board_arch")
[ -n "$want" ] || { echo "deploy.sh: $host reports an unknown architecture '$board_arch' (uname -m)" >&2; exit 2; }
for f in "$pkg"/bin/* "$pkg"/tests/*; do
  [ -f "$f" ] && [ "$(od -An -c -N4 "$f" | tr -d ' ')" = '177ELF' ] || continue
  got=$(od -An -tu2 -j18 -N2 "$f" | tr -d ' ')
  if [ "$got" != "$want" ]; then
    name=$(case "$got" in 183) echo aarch64 ;; 62) echo x86_64 ;; 40) echo arm ;; 3) echo i386 ;; *) echo "ELF machine $got" ;; esac)
    echo "deploy.sh: $build_dir holds $name programs (${f#"$pkg"/}) but $host is $board_arch (uname -m):" \
         "cross-build for the board (cmake --preset atlas200dk or atlas200idka2) and deploy that" >&2
    exit 2
  fi
done
cp "$here/run-on-board.sh" "$pkg/"
tar czf "$stage/kestrel.tar.gz" -C "$stage" kestrel
echo "== copying $(du -h "$stage/kestrel.tar.gz" | cut -f1) to $host:$remote_dir"
$ssh_cmd "$host" "mkdir -p '$remote_dir'"
$scp_cmd "$stage/kestrel.tar.gz" "$host:$remote_dir/kestrel.tar.gz"
args=()
for r in "${runs[@]}"; do args+=(--run "'$r'"); done
[ "$tests" = 1 ] && args+=(--tests)
echo "== running on $host"
set +e
$ssh_cmd "$host" "cd '$remote_dir' && tar xzf kestrel.tar.gz && sh kestrel/run-on-board.sh ${args[*]}"
status=$?
set -e
[ "$status" = 0 ] && echo "== all passed on $host" || echo "== failures on $host (status $status)"
[ "$status" = 0 ] || exit 1
