#!/usr/bin/python3
"""Fails on a stoker command in README.md or docs/ that names an option its subcommand lacks.

    scripts/check_doc_commands.py STOKER_PROGRAM [REPOSITORY_ROOT]

Reads every `stoker SUBCOMMAND ...` line of a fenced code block and every code span that starts
with one (with or without ./build/src/ before it; docs/lab/, the measurements' log, is left
out), and checks each option before a `--` against what `stoker SUBCOMMAND --help` lists (its
names and "also" names; a snake_case name as its dashed form, a --no-NAME as --NAME, as the
program takes them). Prints one line per unknown option or subcommand and exits 1 if there
is any.
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path

COMMAND = re.compile(r"^\s*(?:\$\s+)?(?:\./)?(?:build/src/)?stoker\s+([a-z][^\n#]*)")
FENCED = re.compile(r"^```[\w-]*\n(.*?)^```", re.M | re.S)
SPAN = re.compile(r"`([^`\n]+)`")
OPTION = re.compile(r"^(--?[a-zA-Z][\w-]*)")
NESTED = {"bench": ("loader", "generate"), "help": ("data",)}


def commands(root):
    """(page, command after `stoker `) for each command the pages show."""
    pages = [root / "README.md"] + sorted(p for p in (root / "docs").rglob("*.md") if "lab" not in p.parts)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        lines = [line for block in FENCED.finditer(text) for line in block.group(1).splitlines()]
        lines += SPAN.findall(FENCED.sub("", text))
        for line in lines:
            match = COMMAND.match(line)
            if match:
                yield page.relative_to(root), match.group(1).strip()


USAGE = "usage: scripts/check_doc_commands.py STOKER_PROGRAM [REPOSITORY_ROOT]   (STOKER_PROGRAM: ./build/src/stoker)"


def main(argv):
    if len(argv) > 1 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if not 2 <= len(argv) <= 3:
        print(f"check_doc_commands.py: {len(argv) - 1} arguments given; {USAGE}", file=sys.stderr)
        return 2
    program = argv[1]
    if shutil.which(program) is None:
        print(f"check_doc_commands.py: {program} is not the stoker program (build it first: bash scripts/build.sh "
              f"build); {USAGE}", file=sys.stderr)
        return 2
    root = Path(argv[2] if len(argv) > 2 else Path(__file__).resolve().parents[1])
    top = subprocess.run([program, "--help"], capture_output=True, text=True, check=True).stdout
    subcommands = set(re.findall(r"^  ([a-z]+)\s", top, re.M))
    helps = {}
    problems = []
    for page, command in commands(root):
        words = command.replace("…", "").split()
        path, rest = tuple(words[:1]), words[1:]
        if path[0] not in subcommands:
            problems.append(f"{page}: `stoker {command}`: no subcommand {path[0]} (stoker --help lists them)")
            continue
        if rest and rest[0] in NESTED.get(path[0], ()):
            path, rest = path + (rest[0],), rest[1:]
        if path not in helps:
            shown = subprocess.run([program, *path, "--help"], capture_output=True, text=True).stdout
            helps[path] = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", shown))
        for word in rest:
            if word == "--":  # what follows is another program's command line
                break
            match = OPTION.match(word.strip("[]|"))
            if not match:
                continue
            option = match.group(1)
            dashed = option.replace("_", "-")
            if dashed not in helps[path] and not (dashed.startswith("--no-") and "--" + dashed[5:] in helps[path]):
                problems.append(f"{page}: `stoker {command}`: {' '.join(path)} has no option {option} "
                                f"(stoker {' '.join(path)} --help lists them)")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
