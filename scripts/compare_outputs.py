"""Compares two captures of scripts/compare-outputs, numbers and ids aside.

Every JSON document (a .json file, each line of a .jsonl file) is parsed; every number
becomes 0 and every string has its ids (PA_…, TR_…, RM_…, UUIDs), the capture's own
folder and its digits rewritten. events.jsonl and --json lines are compared as a multiset
(their order between participants is timing). Other files are compared as text with the
same rewrites. Prints each difference; exit status 1 if there is any."""
import difflib
import json
import os
import re
import sys
from collections import Counter


def main(a_root, b_root):
    rewrites = [
        (re.compile(r"\b(PA|TR|RM|SR|EG)_[A-Za-z0-9]+"), r"\1_X"),
        (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "UUID"),
        (re.compile(re.escape(a_root.rstrip("/")) + "|" + re.escape(b_root.rstrip("/"))), "CAPTURE"),
        (re.compile(r"\d"), "0"),
    ]

    def text(s):
        for pattern, replacement in rewrites:
            s = pattern.sub(replacement, s)
        return s

    def norm(v):
        if isinstance(v, bool) or v is None:
            return v
        if isinstance(v, (int, float)):
            return 0
        if isinstance(v, str):
            return text(v)
        if isinstance(v, list):
            return [norm(x) for x in v]
        return {text(k): norm(x) for k, x in v.items()}

    def canon(v):
        return json.dumps(norm(v), sort_keys=True, ensure_ascii=False)

    def walk(x, y, path, out):
        if type(x) is not type(y):
            out.append(f"{path}: {json.dumps(x)[:120]} vs {json.dumps(y)[:120]}")
        elif isinstance(x, dict):
            for k in sorted(set(x) | set(y)):
                if k not in x or k not in y:
                    out.append(f"{path}.{k}: only in {'old' if k in x else 'new'}")
                else:
                    walk(x[k], y[k], f"{path}.{k}", out)
        elif isinstance(x, list):
            if len(x) != len(y):
                out.append(f"{path}: {len(x)} items vs {len(y)}")
            for i, (p, q) in enumerate(zip(x, y)):
                walk(p, q, f"{path}[{i}]", out)
        elif x != y:
            out.append(f"{path}: {x!r} vs {y!r}")

    def lines_of(t):
        out = []
        for line in t.splitlines():
            if line.strip():
                try:
                    out.append(canon(json.loads(line)))
                except ValueError:
                    out.append("NOT JSON: " + text(line))
        return out

    differences = 0
    for folder, dirs, files in os.walk(a_root):
        dirs[:] = [d for d in dirs if d not in ("home", "bad-home", "rec")]
        for name in sorted(files):
            if name in ("dev.log", "dev.out", "pw"):
                continue
            pa = os.path.join(folder, name)
            rel = os.path.relpath(pa, a_root)
            pb = os.path.join(b_root, rel)
            found = []
            if not os.path.exists(pb):
                found.append("missing in new")
            else:
                ta = open(pa, encoding="utf-8", errors="replace").read()
                tb = open(pb, encoding="utf-8", errors="replace").read()
                if name.endswith(".jsonl"):
                    ca, cb = Counter(lines_of(ta)), Counter(lines_of(tb))
                    found += [f"only in old ({n}x): {l[:300]}" for l, n in (ca - cb).items()]
                    found += [f"only in new ({n}x): {l[:300]}" for l, n in (cb - ca).items()]
                elif name.endswith(".json"):
                    try:
                        ja, jb = json.loads(ta), json.loads(tb)
                        walk(norm(ja), norm(jb), "", found)
                    except ValueError:
                        if text(ta) != text(tb):
                            found.append("differs (not JSON)")
                elif text(ta) != text(tb):
                    diff = difflib.unified_diff(text(ta).splitlines(), text(tb).splitlines(), "old", "new", lineterm="", n=0)
                    found.append("\n".join(list(diff)[2:22]))
            for f in found:
                differences += 1
                print(f"{rel}: {f}")
    print(f"{differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: compare_outputs.py OLD-CAPTURE NEW-CAPTURE", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
