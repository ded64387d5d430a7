#!/usr/bin/env python3
"""The last top-level JSON object holding KEY in a run's output (a program may print lines of
text around it, or several objects).

    python3 bench/last_json.py FILE KEY     prints it on one line; exit 1 when there is none
"""
import json
import sys


def last_json(path, key):
    text = open(path, encoding="utf-8", errors="replace").read()
    found = None
    for i, ch in enumerate(text):
        if ch != "{":
            continue
        try:
            obj, _ = json.JSONDecoder().raw_decode(text[i:])
        except ValueError:
            continue
        if isinstance(obj, dict) and key in obj:
            found = obj
    return found


if __name__ == "__main__":
    found = last_json(sys.argv[1], sys.argv[2])
    if found is None:
        sys.exit(1)
    print(json.dumps(found))
