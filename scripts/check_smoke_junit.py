#!/usr/bin/env python3
"""Reads a `bedrud-bot smoke --junit` file back with junitparser (an independent JUnit
reader, as CI pages use) and checks it against what a test expects.

usage: check_smoke_junit.py FILE [--failed STAGE --message TEXT]

Checks: one suite with one testcase per stage, in order; with --failed, exactly that
stage failed, its failure message contains TEXT, stages before it passed and those after
it (but `leave`) were skipped; without, every stage passed. Prints what it found; exit 0
when everything matched, 1 otherwise.
"""
from __future__ import annotations

import argparse
import sys

from junitparser import Failure, JUnitXml, Skipped

STAGES = ["api", "auth", "token", "signalling", "ice", "dtls", "publish", "receive", "quality", "chat", "leave"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--failed")
    ap.add_argument("--message", default="")
    a = ap.parse_args()
    xml = JUnitXml.fromfile(a.file)
    suites = list(xml)
    problems: list[str] = []
    if len(suites) != 1:
        problems.append(f"{len(suites)} suites, expected 1")
    cases = [c for s in suites for c in s]
    names = [c.name.split(":")[0] for c in cases]
    if names != STAGES:
        problems.append(f"testcases {names}, expected {STAGES}")
    failed_at = STAGES.index(a.failed) if a.failed else None
    for i, c in enumerate(cases):
        kinds = [type(r).__name__ for r in c.result]
        fail = next((r for r in c.result if isinstance(r, Failure)), None)
        skipped = any(isinstance(r, Skipped) for r in c.result)
        stage = names[i] if i < len(names) else "?"
        print(f"{stage}: {kinds or ['passed']} {fail.message if fail is not None else ''}")
        if failed_at is None or i < failed_at or (stage == "leave" and i != failed_at):
            if c.result:
                problems.append(f"{stage} should have passed: {kinds}")
        elif i == failed_at:
            if fail is None:
                problems.append(f"{stage} should have failed: {kinds}")
            elif a.message not in (fail.message or ""):
                problems.append(f"{stage}'s failure message {fail.message!r} lacks {a.message!r}")
        elif not skipped:
            problems.append(f"{stage} should be skipped: {kinds}")
    total_failures = sum(s.failures for s in suites)
    if total_failures != (0 if failed_at is None else 1):
        problems.append(f"suite counts {total_failures} failures")
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
