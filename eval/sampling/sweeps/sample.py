"""The sweep sampler (the rule of eval/sweep4.md and eval/sweep5.md), kept to make the samples
reproducible; it reads local mirrors (/work/.mirror/OWNER+NAME/repo) and the steering holdout
list (/work/shared/eval-holdout.txt), which a clone of this project does not have.

Usage: sample.py OUT.json [KEEP_MD_BASENAMES...]
  KEEP: eval/*.md files whose named shas are *not* skipped (to regenerate an earlier sweep:
  sweep 4 = sample.py s4.json sweep4.md sweep4-gates4.md sweep4-intent4.md sweep4-knobs4.md
  sweep4-silenced4.md). EXCLUDE=s4.json in the environment also skips every commit of an earlier
  sample (sweep 5 = EXCLUDE=s4.json sample.py s5.json sweep5.md); several files are separated by
  colons (sweep 6 = EXCLUDE=s4.json:s5.json sample.py s6.json). Pins added to the corpus after a
  sweep shift a regenerated earlier sample further down the history, so a regenerated s4/s5 is a
  superset of the original's unnamed commits: excluding it can only skip more.
"""

import glob
import json
import os
import re
import subprocess
import sys
from pathlib import Path

MAIN = "/work/main"
REPOS = [
    "vllm-project/vllm-ascend",
    "vllm-project/vllm-gaudi",
    "vllm-project/tpu-inference",
    "sgl-project/sglang-jax",
    "ROCm/ATOM",
    "vllm-project/vllm-omni",
]
CI_FIX = re.compile(
    r"(?i)(\[ci\]|\bci\b|flak|oom|out of memory|timeout|skip|xfail|disable|tolerance"
    r"|threshold|accuracy|nightly|e2e|unit.?test|gsm8k|lm.?eval)"
)
TEST_PATH = re.compile(
    r"(^|/)(tests?|testing)(/|_)|test_[^/]*\.py$|_test\.py$|conftest\.py$|(^|/)ci/|eval"
)
CI_PREFIXES = (
    ".github/workflows/",
    ".github/actions/",
    ".github/scripts/",
    ".github/benchmark/",
    ".buildkite/",
    ".jenkins/",
    ".gitlab-ci.yml",
    ".circleci/",
    "ci/",
    ".ci/",
    "scripts/ci/",
    "tests/test_suites/",
)


def ci_path(p):
    return p.startswith(CI_PREFIXES) or (p.startswith("tests/") and p.endswith(".sh"))


def main():
    out = sys.argv[1]
    keep = set(sys.argv[2:])
    hold = set()
    holdpr = set()
    for line in Path("/work/shared/eval-holdout.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "@" in line:
            hold.add(line)
        elif "#" in line:
            holdpr.add(line)
    corpus = set()
    for f in glob.glob(f"{MAIN}/eval/prs/*/*.json"):
        d = json.loads(Path(f).read_text())
        corpus.add(d["id"])
    named = set()
    for f in glob.glob(f"{MAIN}/eval/*.md") + glob.glob(f"{MAIN}/eval/sampling/*.md"):
        if os.path.basename(f) in keep:
            continue
        named |= set(re.findall(r"\b[0-9a-f]{12}\b", Path(f).read_text()))
    excl = set()
    if os.environ.get("EXCLUDE"):
        samples = os.environ["EXCLUDE"].split(":")
        excl = {c["sha"] for f in samples for c in json.loads(Path(f).read_text())}
    picked = []
    for repo in REPOS:
        git = f"/work/.mirror/{repo.replace('/', '+')}/repo"
        log = subprocess.run(
            [
                "git",
                "-C",
                git,
                "log",
                "--first-parent",
                "--no-merges",
                "--no-renames",
                "--format=%x00%H%x01%cI%x01%s",
                "--name-only",
                "HEAD",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        commits = []
        for chunk in log.split("\x00")[1:]:
            head, _, rest = chunk.partition("\n")
            sha, date, subj = head.split("\x01", 2)
            files = [name for name in rest.splitlines() if name.strip()]
            if not ("2025-01-01" <= date[:10] <= "2026-11-30") or len(files) > 60 or not files:
                continue
            commits.append((sha, subj, files))
        commits.sort(key=lambda c: c[0], reverse=True)
        ordinary, fixes = [], []
        for sha, subj, files in commits:
            if f"{repo}@{sha}" in hold or sha in excl:
                continue
            m = re.search(r"\(#(\d+)\)\s*$", subj)
            if m and f"{repo}#{m.group(1)}" in holdpr:
                continue
            if f"{repo}@{sha[:12]}" in corpus or sha[:12] in named:
                continue
            is_ci = any(ci_path(p) for p in files)
            if is_ci and len(ordinary) < 12:
                ordinary.append(dict(repo=repo, sha=sha, subject=subj, sample="ordinary"))
                continue
            if (
                CI_FIX.search(subj)
                and (is_ci or any(TEST_PATH.search(p) for p in files))
                and len(fixes) < 8
            ):
                fixes.append(dict(repo=repo, sha=sha, subject=subj, sample="ci-fix"))
            if len(ordinary) >= 12 and len(fixes) >= 8:
                break
        picked += ordinary + fixes
        print(repo, len(ordinary), len(fixes), file=sys.stderr)
    Path(out).write_text(json.dumps(picked, indent=1))


main()
