#!/usr/bin/env python3
"""Validates event transcripts against docs/events.schema.json (JSON Schema 2020-12).

    scripts/validate-events PATH...     files (events.jsonl, or saved 'join --json' output)
                                        or folders searched for events.jsonl; '-' is stdin

Every line must be one JSON object that the schema accepts. Prints one line per problem
(`file:line: what`) and a count per file; exits 0 when every line is valid, 1 when any
is not, 2 when there was nothing to check or a path cannot be read. Runs with the
project's .venv (jsonschema from scripts/requirements.txt).
"""
import json
import os
import sys

import jsonschema

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def transcripts(paths):
    for p in paths:
        if p == "-" or os.path.isfile(p):
            yield p
        elif os.path.isdir(p):
            for folder, _, names in sorted(os.walk(p)):
                if "events.jsonl" in names:
                    yield os.path.join(folder, "events.jsonl")
        else:
            raise FileNotFoundError(p)


def check(path, validator):
    """Returns (lines, problems) for one transcript."""
    fh = sys.stdin if path == "-" else open(path, encoding="utf-8")
    lines, problems = 0, []
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                problems.append(f"{path}:{n}: empty line")
                continue
            lines += 1
            try:
                obj = json.loads(line)
            except ValueError as e:
                problems.append(f"{path}:{n}: not JSON: {e}")
                continue
            for err in sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path)):
                where = "/".join(str(p) for p in err.absolute_path) or "(line)"
                kind = obj.get("type") if isinstance(obj, dict) else None
                problems.append(f"{path}:{n}: {kind or '?'}: {where}: {err.message}")
    return lines, problems


def main(argv):
    args = argv[1:]
    schema_path = os.path.join(ROOT, "docs", "events.schema.json")
    if len(args) >= 2 and args[0] == "--schema":
        schema_path, args = args[1], args[2:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(schema_path, encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    try:
        files = list(transcripts(args))
    except FileNotFoundError as e:
        print(f"validate-events: no such file or folder: {e}", file=sys.stderr)
        return 2
    if not files:
        print("validate-events: no events.jsonl found in " + " ".join(args), file=sys.stderr)
        return 2
    bad = 0
    for f in files:
        lines, problems = check(f, validator)
        for p in problems:
            print(p)
        if problems or lines == 0:
            bad += 1
        print(f"{f}: {lines} lines, {len(problems)} invalid" + (" (empty)" if lines == 0 else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
