#!/usr/bin/env bash
# ctest Engine.ConverterIsItsOwnLibrary: the converter (importers, passes, .kom writer) lives in
# libkes_convert.a, and libkes_engine.a neither defines nor needs any of it, so an app that only runs
# models links no converter code (issue 12 §3).
#   library_split_check.sh NM LIBKES_ENGINE LIBKES_CONVERT
set -euo pipefail
nm=$1 engine=$2 convert=$3
# Converter symbols: the C API (kes_convert_*) and the C++ internals (kes::ir, kes::convert).
pattern='kes_convert_file|_ZN3kes2ir|_ZN3kes7convert'
# grep reads all of nm's output (no -q): under pipefail, grep -q's early exit would kill nm with
# SIGPIPE on a large (sanitizer) library and the pipeline would fail though the symbol was found.
if "$nm" --defined-only "$engine" 2>/dev/null | grep -E " [TtWw] " | grep -E "$pattern" >/dev/null; then
  echo "FAIL: libkes_engine.a defines converter code:"; "$nm" --defined-only "$engine" | grep -E "$pattern" | head; exit 1
fi
if "$nm" -u "$engine" 2>/dev/null | grep -E "$pattern" >/dev/null; then
  echo "FAIL: libkes_engine.a needs converter code:"; "$nm" -u "$engine" | grep -E "$pattern" | head; exit 1
fi
"$nm" --defined-only "$convert" | grep -E " T kes_convert_file$" >/dev/null ||
  { echo "FAIL: libkes_convert.a does not define kes_convert_file"; exit 1; }
echo "engine/convert split: the engine library holds no converter code"
