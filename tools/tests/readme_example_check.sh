#!/usr/bin/env bash
# ctest Docs.ReadmeExampleCompiles: the C example in README.md (between <!-- c-example:begin --> and
# <!-- c-example:end -->) compiles against the public headers, warnings as errors, so it never drifts
# from the API.
#   readme_example_check.sh README.md WORK_DIR CC -I... [-I...]
set -euo pipefail
readme=$1 work=$2 cc=$3
shift 3
mkdir -p "$work"
sed -n '/<!-- c-example:begin -->/,/<!-- c-example:end -->/p' "$readme" | sed '/^<!--/d; /^```/d' >"$work/readme_example.c"
[ -s "$work/readme_example.c" ] || { echo "FAIL: no c-example block in $readme"; exit 1; }
"$cc" -std=c11 -Wall -Wextra -Werror -fsyntax-only "$@" "$work/readme_example.c"
echo "README example: $(wc -l <"$work/readme_example.c") lines compile"
