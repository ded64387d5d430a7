"""stoker train's recommendations in the words of a Python script: its flags become the
DataLoader's arguments."""
import math
import re

_FLAGS = [
    (re.compile(r"--workers (\d+)"), lambda m, reason: f"num_workers={m.group(1)}"),
    (re.compile(r"--prefetch-factor (\d+)( \(or more\))?"), lambda m, reason: f"prefetch_factor={m.group(1)}"
     + (m.group(2) or "")),
    (re.compile(r"--cache decoded"), lambda m, reason: "cache_decoded_gb=" + _needed_gb(reason)),
]


def _needed_gb(reason):
    found = re.search(r"needs ([\d.]+) GB", reason)
    return str(math.ceil(float(found.group(1)))) if found else "N"


def pythonic(line):
    """A report line with the trainer's flags written as DataLoader arguments."""
    if not line.startswith("try: "):
        return line
    changes = []
    for change in line[len("try: "):].split("  or  "):
        for pattern, word in _FLAGS:
            m = pattern.match(change)
            if m:
                change = word(m, change) + change[m.end():]
                break
        changes.append(change)
    return "try: " + "  or  ".join(changes)
