"""Score a sweep run (run.py's JSON) against the lead's verdicts of that sweep.

Usage: score.py VERDICTS.tsv RUN.json [--list]

VERDICTS.tsv has one row per judged finding and per miss: repo, sha (12), rule, path ('-' for a
PR-level finding), line ('-'), verdict (TP, FP, FN; a parenthesised note such as FN(borderline)
is kept in the listing), why. A finding of the run takes the verdict of the row with its sha,
rule, path and line; failing that, a miss (FN row) of the same sha and rule (and path) counts as
found; failing that, a TP/FP row of the same path within 3 lines (the line moved). Findings that
match nothing are *unjudged* and listed: a lead must judge them before the figures are quoted.
A TP row no finding matches is a miss again.
"""

import csv
import json
import sys
from collections import Counter
from pathlib import Path


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    listing = "--list" in sys.argv
    lines = Path(args[0]).read_text().splitlines()
    rows = [r for r in csv.reader(lines, delimiter="\t") if r and not r[0].startswith("#")]
    run = json.loads(Path(args[1]).read_text())
    sample = {e["sha"]: e["sample"] for e in run}
    used, tally, unjudged, notes = set(), Counter(), [], []

    def take(i, kind, rule, sha):
        used.add(i)
        tally[(rule, kind)] += 1
        if kind == "FP" and sample.get(sha) == "ordinary":
            tally[("ordinary", "FP")] += 1

    for e in run:
        for f in e["findings"]:
            path, line = f["path"] or "-", str(f["line"]) if f["line"] else "-"
            cands = [
                (i, r)
                for i, r in enumerate(rows)
                if i not in used and r[1] == e["sha"] and r[2] == f["rule"]
            ]
            exact = [
                i for i, r in cands if r[3] == path and r[4] == line and not r[5].startswith("FN")
            ]
            miss = [i for i, r in cands if r[5].startswith("FN") and (r[3] in ("-", path))]
            near = [
                i
                for i, r in cands
                if r[3] == path
                and not r[5].startswith("FN")
                and r[4] != "-"
                and line != "-"
                and abs(int(r[4]) - int(line)) <= 3
            ]
            if exact:
                i = exact[0]
                take(i, rows[i][5][:2], f["rule"], e["sha"])
            elif miss:
                i = miss[0]
                take(i, "TP", f["rule"], e["sha"])
                notes.append(f"found {e['repo']}@{e['sha']} {f['rule']} {path}:{line}")
            elif near:
                i = near[0]
                take(i, rows[i][5][:2], f["rule"], e["sha"])
            else:
                unjudged.append(
                    f"{e['repo']}@{e['sha']} {f['rule']} {path}:{line} "
                    f"({f['confidence']}) {f['message'][:200]}"
                )
    for i, r in enumerate(rows):
        if i in used or r[5].startswith("FP"):
            continue
        tally[(r[2], "FN")] += 1
        if r[5].startswith("TP"):
            notes.append(f"lost {r[0]}@{r[1]} {r[2]} {r[3]}:{r[4]}")
    rules = sorted({r for r, _ in tally if r != "ordinary"})
    tp = fp = fn = 0
    for rule in rules:
        t, p, n = (tally[(rule, k)] for k in ("TP", "FP", "FN"))
        tp += t
        fp += p
        fn += n
        print(f"{rule:22} {t:3} / {p:3} / {n:3}")
    prec = tp / (tp + fp) if tp + fp else float("nan")
    rec = tp / (tp + fn) if tp + fn else float("nan")
    ordinary = sum(1 for e in run if e["sample"] == "ordinary")
    false_ordinary = tally[("ordinary", "FP")]
    print(
        f"{'all':22} {tp:3} / {fp:3} / {fn:3}  P {prec:.2f} R {rec:.2f}; "
        f"false per 20 ordinary {20 * false_ordinary / max(ordinary, 1):.2f} "
        f"({false_ordinary} in {ordinary})"
    )
    print(f"unjudged: {len(unjudged)}")
    for u in unjudged:
        print("  ?", u)
    if listing:
        for n in notes:
            print("  ", n)


main()
