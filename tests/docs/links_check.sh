#!/usr/bin/env bash
# links_check.sh <dir> — every relative link in <dir>/*.md (README.md, THIRD-PARTY.md) and <dir>/docs/*.md
# resolves: the file (or directory) it names exists, relative to the document, as on GitHub. Run on the
# source tree and on an install tree's share/doc/kestrel (same layout: README.md, LICENSE, NOTICE,
# THIRD-PARTY.md, docs/*.md), so a link that works in a clone also works in the release tarball. A link
# to an anchor (#name) must name a heading of its page; web links (scheme:) are not checked. Fenced code
# blocks and `code spans` are not markdown, so what looks like a link there is skipped.
#   links_check.sh <dir>                            e.g. the source tree, or <prefix>/share/doc/kestrel
#   links_check.sh --install <build dir> <scratch>  installs the build's docs (cmake --install --component
#                                                   docs) into <scratch> and checks <scratch>/share/doc/kestrel
set -euo pipefail
if [ "${1:-}" = "--install" ]; then
  build=${2:?usage: links_check.sh --install <build dir> <scratch dir>} scratch=${3:?usage: links_check.sh --install <build dir> <scratch dir>}
  rm -rf "$scratch"
  cmake --install "$build" --component docs --prefix "$scratch" >/dev/null
  set -- "$scratch/share/doc/kestrel"
fi
dir=${1:?usage: links_check.sh <dir holding README.md and docs/> | --install <build dir> <scratch dir>}
[ -f "$dir/README.md" ] || { echo "links_check: $dir/README.md is missing" >&2; exit 1; }

# GitHub's anchor of a heading: lower case, punctuation other than - and _ dropped, spaces to -.
anchors() {
  awk '/^```/ { fence = !fence; next } !fence && /^#+ / { sub(/^#+ +/, ""); print }' "$1" |
    tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}

bad=0 n=0
for doc in "$dir"/*.md "$dir"/docs/*.md; do
  [ -f "$doc" ] || continue
  # Targets of [text](target) and ![alt](target), outside code, one per line as "line<TAB>target".
  while IFS=$'\t' read -r line target; do
    target=${target%% *}           # [t](path "title")
    target=${target#<}; target=${target%>}
    n=$((n + 1))
    case "$target" in
      *:*) continue ;;             # http:, https:, mailto:
    esac
    path=${target%%#*} frag=""
    [[ "$target" == *#* ]] && frag=${target#*#}
    if [ -z "$path" ]; then
      file=$doc
    else
      file="$(dirname "$doc")/$path"
      if [ ! -e "$file" ]; then
        echo "${doc#"$dir"/}:$line: link to '$target': no such file ${file#"$dir"/}"
        bad=1
        continue
      fi
    fi
    if [ -n "$frag" ] && [ -f "$file" ] && [[ "$file" == *.md ]] && ! anchors "$file" | grep -qxF "$frag"; then
      echo "${doc#"$dir"/}:$line: link to '$target': ${file#"$dir"/} has no heading #$frag"
      bad=1
    fi
  done < <(awk '/^```/ { fence = !fence; next } !fence {
                  s = $0; gsub(/`[^`]*`/, "", s)
                  while (match(s, /\]\([^)]+\)/)) {
                    printf "%d\t%s\n", NR, substr(s, RSTART + 2, RLENGTH - 3)
                    s = substr(s, RSTART + RLENGTH)
                  }
                }' "$doc")
done
if [ "$bad" = 0 ]; then
  echo "links_check: $n links in $dir/*.md and docs/*.md: OK"
fi
exit "$bad"
