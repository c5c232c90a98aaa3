#!/usr/bin/env python3
"""Queries over files of JSON lines (the output of `p2p ... --json`), for the e2e scripts.

usage:
  jsonl.py wait TIMEOUT FILE COND...     wait until a line matches every COND; print it (exit 1 on timeout)
  jsonl.py count FILE COND...            print how many lines match
  jsonl.py get FILE FIELD COND...        print FIELD of the first matching line (exit 1 if none)

COND is one of
  key=value    the field equals value (numbers compare by their decimal text, null as "null")
  key!=value   the field is missing or differs
  key~value    the field contains value (substring of a string, element of a list)
  key?         the field is present
Lines that are not JSON objects (warnings on stdout, half-written lines) are skipped.
"""
import json
import sys
import time


def text(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def matches(obj, cond):
    if cond.endswith("?"):
        return cond[:-1] in obj
    if "!=" in cond:
        key, value = cond.split("!=", 1)
        return key not in obj or text(obj[key]) != value
    if "~" in cond and ("=" not in cond or cond.index("~") < cond.index("=")):
        key, value = cond.split("~", 1)
        field = obj.get(key)
        if isinstance(field, list):
            return any(text(item) == value for item in field)
        return isinstance(field, str) and value in field
    key, value = cond.split("=", 1)
    return key in obj and text(obj[key]) == value


def objects(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            data = f.read()
    except FileNotFoundError:
        return
    # Only complete lines: the writer may be in the middle of the last one.
    for line in data.split("\n")[:-1]:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield line, obj


def find(path, conds):
    for line, obj in objects(path):
        if all(matches(obj, c) for c in conds):
            yield line, obj


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    cmd = argv[1]
    if cmd == "wait":
        timeout, path, conds = float(argv[2]), argv[3], argv[4:]
        end = time.monotonic() + timeout
        while True:
            for line, _ in find(path, conds):
                print(line)
                return 0
            if time.monotonic() >= end:
                return 1
            time.sleep(0.1)
    if cmd == "count":
        print(sum(1 for _ in find(argv[2], argv[3:])))
        return 0
    if cmd == "get":
        path, field, conds = argv[2], argv[3], argv[4:]
        for _, obj in find(path, conds):
            if field in obj:
                print(text(obj[field]))
                return 0
        return 1
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
