#!/usr/bin/env bash
# tools/x86_cpu.sh — runs an x86-64 program as another x86-64 CPU would: the host half of the CPU matrix.
#   KES_X86_CPU=haswell|nehalem|<qemu model> tools/x86_cpu.sh program [args...]
#   haswell   AVX2 + FMA + F16C without AVX-512: most laptops (Intel client chips since Alder Lake, AMD
#             before Zen 4)
#   nehalem   x86-64-v2: SSE4.2, no AVX at all
# Debian 12's qemu-x86_64-static (7.2) implements AVX2/FMA/F16C and raises SIGILL on AVX-512, so a table
# chosen without its CPU check, or ISA code run at load time, fails here as on those CPUs. Without
# KES_X86_CPU (or with "native") the program runs directly: host builds use this script as their test
# emulator (CMAKE_CROSSCOMPILING_EMULATOR), so ctest runs natively unless the matrix asks. A program the
# test starts in turn runs natively (qemu user mode does not follow execve into other programs).
set -euo pipefail
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  "") usage >&2; exit 2 ;;
esac
cpu=${KES_X86_CPU:-native}
case "$cpu" in
  native) exec "$@" ;;
  # Haswell-v4 minus what TCG cannot emulate and would warn about on every start (system features only).
  haswell) model=Haswell-v4,-pcid,-x2apic,-tsc-deadline,-invpcid,-spec-ctrl ;;
  nehalem) model=Nehalem ;;
  *) model=$cpu ;;
esac
[ -f "$1" ] || { echo "x86_cpu.sh: no such program '$1'" >&2; exit 2; }
command -v qemu-x86_64-static >/dev/null ||
  { echo "x86_cpu.sh: qemu-x86_64-static missing (apt-get install qemu-user-static)" >&2; exit 2; }
exec qemu-x86_64-static -cpu "$model" "$@"
