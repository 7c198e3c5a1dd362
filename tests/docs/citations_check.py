#!/usr/bin/env python3
"""citations_check.py <source dir> — Kestrel cites only documents it ships.

Fails (exit 1, naming file, line and text) when
  - an installed header (every .h under */include/kestrel/) cites a document that ships nowhere:
    "spec §…", "../shared", "shared/spec", or the names of those documents;
  - a string literal in any C/C++ source (error messages, logs) does the same, or cites a numbered
    section ("§2.4") of a document it does not name;
  - any file cites a section of docs/BOARD-RULES.md ("BOARD-RULES §JPEGD", "docs/BOARD-RULES.md §VPC")
    that the document does not have.
Adjacent string literals are joined first, so a citation split over two literals is still found.
"""
import os
import re
import sys

UNSHIPPED = re.compile(r"spec\s*§|\.\./shared|shared/spec|ascend-semantics\.md|ascend-backend\.md|"
                       r"anchors\.md|resources\.md")
NUMBERED = re.compile(r"(?<![Ii]ssue )(?<![Ii]ssue \d)(?<![Ii]ssue \d\d)(?<![Ii]ssue \d\d\d)§\s?\d")
CITATION = re.compile(r"BOARD-RULES(?:\.md)?((?:[ ,]*(?:and )?§[A-Za-z][A-Za-z0-9-]*)+)")
SOURCE_EXT = (".c", ".h", ".cpp", ".hpp")
SKIP_DIRS = {".git", "build", ".cache", "node_modules"}


def literals(text):
    """(line, joined text) of each run of adjacent C string literals; comments and chars skipped."""
    out, i, n = [], 0, len(text)
    run, run_line = None, 0
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == '"' or (c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum())):
            if c == "R":
                m = re.match(r'R"([^(\s]*)\(', text[i:])
                end = text.find(")" + m.group(1) + '"', i)
                body, i = text[i + len(m.group(0)):end], end + len(m.group(1)) + 2
            else:
                j = i + 1
                while j < n and text[j] != '"' and text[j] != "\n":
                    j += 2 if text[j] == "\\" else 1
                body, i = text[i + 1:j], j + 1
            line = text.count("\n", 0, i) + 1
            if run is None:
                run, run_line = body, line
            else:
                run += body
            continue
        elif c.isspace():
            i += 1
            continue
        else:
            i += 1
        if run is not None and not c.isspace():
            out.append((run_line, run))
            run = None
    if run is not None:
        out.append((run_line, run))
    return out


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    rules_path = os.path.join(root, "docs", "BOARD-RULES.md")
    sections = set()
    if os.path.exists(rules_path):
        for line in open(rules_path, encoding="utf-8"):
            m = re.match(r"#{2,3} (\S+)", line)
            if m:
                sections.add(m.group(1))
    bad, headers, sources = [], 0, 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            try:
                text = open(path, encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            if rel.startswith("docs" + os.sep) and name == "BOARD-RULES.md":
                continue
            for m in CITATION.finditer(text):
                for sec in re.findall(r"§([A-Za-z][A-Za-z0-9-]*)", m.group(1)):
                    if sec not in sections:
                        line = text.count("\n", 0, m.start()) + 1
                        bad.append(f"{rel}:{line}: cites BOARD-RULES §{sec}, which docs/BOARD-RULES.md does not have")
            if not name.endswith(SOURCE_EXT):
                continue
            installed = name.endswith(".h") and os.sep + os.path.join("include", "kestrel") + os.sep in os.sep + rel
            if installed:
                headers += 1
                for no, line in enumerate(text.split("\n"), 1):
                    if UNSHIPPED.search(line):
                        bad.append(f"{rel}:{no}: installed header cites a document that is not shipped: {line.strip()}")
            sources += 1
            for no, lit in literals(text):
                if UNSHIPPED.search(lit) or NUMBERED.search(lit):
                    bad.append(f"{rel}:{no}: string literal cites a document that is not shipped: \"{lit}\"")
    if not sections:
        bad.append("docs/BOARD-RULES.md is missing or has no sections")
    for b in bad:
        print(b)
    print(f"citations: {headers} installed headers, {sources} C/C++ sources, {len(sections)} BOARD-RULES sections: "
          + ("FAIL" if bad else "OK"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
