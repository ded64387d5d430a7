#!/usr/bin/python3
"""Fails on a relative link in README.md or docs/ that leads nowhere.

    scripts/check_doc_links.py [REPOSITORY_ROOT]

Checks every Markdown link and image ([text](target), ![alt](target)) whose target is not a
URL or a mail address: the file or folder must exist, and a #fragment in another Markdown file
(or in the same one) must name one of its headings, as GitHub makes anchors of them. Links
inside code spans and fenced code blocks are not links and are skipped. Prints one line per
dead link and exits 1 if there is any.
"""
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def anchors(path):
    """GitHub's heading anchors of a Markdown file."""
    seen = {}
    result = set()
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            text = re.sub(r"[^\w\- ]", "", m.group(1).lower(), flags=re.UNICODE).replace(" ", "-")
            n = seen.get(text, 0)
            seen[text] = n + 1
            result.add(text if n == 0 else f"{text}-{n}")
    return result


def markdown_files(root):
    yield os.path.join(root, "README.md")
    for folder, _, files in os.walk(os.path.join(root, "docs")):
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(folder, name)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    dead = []
    for path in markdown_files(root):
        in_fence = False
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if FENCE.match(line):
                    in_fence = not in_fence
                    continue
                if in_fence:
                    continue
                for m in LINK.finditer(CODE_SPAN.sub("", line)):
                    target = m.group(1)
                    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
                        continue
                    file_part, _, fragment = target.partition("#")
                    resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                    where = f"{os.path.relpath(path, root)}:{number}"
                    if not os.path.exists(resolved):
                        dead.append(f"{where}: {target} (no such file)")
                    elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
                        dead.append(f"{where}: {target} (no heading #{fragment} in {os.path.relpath(resolved, root)})")
    for line in dead:
        print(line)
    if dead:
        print(f"{len(dead)} dead relative link{'s' if len(dead) != 1 else ''} in README.md and docs/")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
