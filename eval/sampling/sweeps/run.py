"""Review every commit of a sweep sample with the CLI, as a new user would.

Usage: run.py VENV OUT.json CO_ROOT SAMPLE.json [--only sha12,...]
One shared clone of each mirror per repository under CO_ROOT, checked out at each commit C;
`ci-stability review --git C^..C --repo CO --title SUBJECT --body-file BODY --format json`.
"""

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

args = sys.argv[1:]
only = None
if "--only" in args:
    i = args.index("--only")
    only = set(args[i + 1].split(","))
    del args[i : i + 2]
venv, out, root = args[:3]
sample = args[3] if len(args) > 3 else "/work/sweep4/sample.json"
tool = os.path.join(venv, "bin", "ci-stability")
os.makedirs(root, exist_ok=True)
res = []
for c in json.loads(Path(sample).read_text()):
    if only and c["sha"][:12] not in only:
        continue
    repo = c["repo"]
    git = f"/work/.mirror/{repo.replace('/', '+')}/repo"
    co = os.path.join(root, repo.replace("/", "+"))
    if not os.path.isdir(co):
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", git, co], check=True)
        subprocess.run(
            [
                "git",
                "-C",
                co,
                "sparse-checkout",
                "set",
                "--no-cone",
                "/*",
                "!/test/srt/lora/lora_data/",
            ],
            check=True,
        )
    sha = c["sha"]
    r = subprocess.run(
        ["git", "-C", co, "checkout", "-q", "-f", sha], capture_output=True, text=True
    )
    msg = subprocess.run(
        ["git", "-C", co, "log", "-1", "--format=%B", sha], capture_output=True, text=True
    ).stdout
    subj, _, body = msg.partition("\n")
    entry = dict(repo=repo, sha=sha[:12], sample=c["sample"], subject=subj, findings=[], error=None)
    if r.returncode:
        entry["error"] = r.stderr.strip()[-300:]
        res.append(entry)
        continue
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as bf:
        bf.write(body.strip())
        bpath = bf.name
    p = subprocess.run(
        [
            tool,
            "review",
            "--git",
            f"{sha}^..{sha}",
            "--repo",
            co,
            "--title",
            subj,
            "--body-file",
            bpath,
            "--format",
            "json",
            "--fail-level",
            "none",
        ],
        capture_output=True,
        text=True,
    )
    os.unlink(bpath)
    try:
        data = json.loads(p.stdout)
        fs = data["findings"] if isinstance(data, dict) else data
        for f in fs:
            entry["findings"].append(
                {k: f.get(k) for k in ("rule", "path", "line", "confidence", "message")}
            )
    except Exception:
        entry["error"] = (p.stderr or p.stdout).strip()[-300:]
    res.append(entry)
Path(out).write_text(json.dumps(res, indent=1))

cnt = Counter(f["rule"] for e in res for f in e["findings"])
print(dict(cnt), "errors:", sum(1 for e in res if e["error"]))
