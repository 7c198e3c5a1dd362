# shellcheck shell=bash
# bench/engine/qemu_count.sh — sourced by qemu_insns.sh and qemu_ort_insns.sh: the one way both count
# aarch64 instructions. qemu logs every block it translates (in_asm) and every block it runs (exec,
# nochain so that none is skipped) into a pipe that qemu_count.c reads, so the log (GBs for a large
# model) never reaches the disk; a block's run counts its instructions. Callers count a program with 1
# and with 3 inferences and take half the difference, so start-up and loading cancel out.
#
#   qemu_count_init WORKDIR              builds the counter (the host's cc) into WORKDIR
#   qemu_count [--dfilter RANGES] COMMAND [ARGS...]
#       runs COMMAND (qemu-aarch64-static, directly, through board/emulate.sh or a shell function) with the log on, and
#       prints the instructions executed; COMMAND's stdout is dropped, its stderr kept in
#       WORKDIR/qemu_count.err and shown if it fails (then the function returns 1). --dfilter passes
#       qemu's -dfilter (QEMU_DFILTER): only blocks whose pc is in RANGES are logged, so counted.

qemu_count_init() {
  _qemu_count_work=$1
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  command -v cc >/dev/null || { echo "qemu_count.sh: no C compiler (cc) to build the counter" >&2; return 1; }
  cc -O2 -o "$_qemu_count_work/qemu_count" "$here/qemu_count.c" ||
    { echo "qemu_count.sh: cannot build $here/qemu_count.c" >&2; return 1; }
}

qemu_count() {
  local dfilter="" fifo="$_qemu_count_work/qemu_log" reader rc=0 hold
  if [ "$1" = --dfilter ]; then dfilter=$2; shift 2; fi
  rm -f "$fifo"
  mkfifo "$fifo"
  # This shell holds the pipe open for writing while the command runs: the reader's open does not wait
  # for qemu's, and the reader sees the end only once the command is over (also one that failed
  # before qemu opened the log).
  exec {hold}<>"$fifo"
  "$_qemu_count_work/qemu_count" "$fifo" >"$_qemu_count_work/qemu_count.out" {hold}>&- &
  reader=$!
  (
    export QEMU_LOG=in_asm,exec,nochain QEMU_LOG_FILENAME="$fifo"
    [ -z "$dfilter" ] || export QEMU_DFILTER="$dfilter"
    "$@"
  ) >/dev/null 2>"$_qemu_count_work/qemu_count.err" || rc=$?
  exec {hold}>&-
  wait "$reader" || { [ "$rc" != 0 ] || rc=1; }
  rm -f "$fifo"
  if [ "$rc" != 0 ]; then
    echo "qemu_count: $* failed (exit $rc):" >&2
    tail -n 5 "$_qemu_count_work/qemu_count.err" >&2
    return 1
  fi
  cat "$_qemu_count_work/qemu_count.out"
}
