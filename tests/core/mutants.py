"""Mutated PR JSON files and configs for fuzzing the CLI (tests/core/test_fuzz_cli.py
runs a few hundred; bench/fuzz_cli.py runs thousands). Deterministic per seed."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from bot.cli import main

CONFIG_SEED = """\
version: 1
fail_on: warning
rules:
  knob-rationale: false
  runtime-download: warning
  silenced-test:
    severity: error
    enabled: true
surfaces:
  eval-config: ["benchmarks/accuracy/**"]
extra_knobs: [my_knob]
dedup_heading: "(?im)^## Related work"
ignore:
  - rule: silenced-test
    paths: ["test/legacy/**"]
    reason: legacy suite, tracked in #123
review_drafts: true
min_confidence: high
"""

_ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 2**70, 1.5, float("1e308"), "", "x" * 5000, "\u202e\x00é",
    [], {}, [None], {"name": None}, {"name": 3}, {"login": []}, ["a", 1, None],
    {"filename": "a.py", "status": ["x"]}, "modified", "renamed", "../../etc/passwd",
]
_YAML_SNIPPETS = [
    "&a [*a]", "*nope", "!!python/object:os.system [ls]", "!!binary zz", "{[1]: 2}",
    "~", "0x1F", "2024-99-99", "!!timestamp 2024-99-99", "!!int abc", "&b x", "<<: *b",
    "[" * 300 + "]" * 300, "{a: " * 200 + "1" + "}" * 200, "'unterminated", '"\\xZZ"',
    "!!set {a, b}", "!!omap [a: 1]", "\t- tab", "---\n---", "? [a]\n: b", "- [x, *b]",
    "&c {k: *c}", "\x00", "\ufeff", "|\n  block", ">-", "!custom x", "null", "yes",
    "[*a, *a, *a, *a]", "1e999", ".nan", "-.inf",
]


def _deep(depth: int) -> Any:
    node: Any = []
    for _ in range(depth):
        node = [node]
    return node


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if len(prefix) > 20:  # inside a deep mutant: nothing more to find
        return
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node[:50]):
            yield from _paths(value, (*prefix, index))


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = root
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return root


def _mutate_tree(rng: random.Random, data: Any) -> Any:
    paths = list(_paths(data))
    path = rng.choice(paths)
    roll = rng.random()
    if roll < 0.55:
        value = copy.deepcopy(rng.choice(_ODD_VALUES))
    elif roll < 0.65:
        value = _deep(rng.choice([10, 500, 5000]))
    elif roll < 0.8:
        try:
            value = copy.deepcopy(_get(data, rng.choice(paths)))  # a node of another place
        except RecursionError:
            value = None
    else:
        parent = _get(data, path[:-1]) if path else None
        if isinstance(parent, dict) and path:
            del parent[path[-1]]
            return data
        value = None
    return _set(data, path, value)


def _get(root: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        root = root[step]
    return root


def _mutate_bytes(rng: random.Random, raw: bytes) -> bytes:
    roll = rng.random()
    cut = rng.randrange(max(1, len(raw)))
    if roll < 0.3:
        return raw[:cut]
    if roll < 0.6:
        flipped = bytearray(raw)
        for _ in range(rng.randint(1, 8)):
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        return bytes(flipped)
    return raw[:cut] + rng.choice([b"[" * 100_000, b'"\\ud800"', b"\xff\xfe", b"}", b",,"]) \
        + raw[cut:]


def mutated_pr_json(rng: random.Random, seed: bytes) -> bytes:
    """One mutant: mostly well-formed JSON with hostile values, sometimes broken bytes."""
    if rng.random() < 0.15:
        return _mutate_bytes(rng, seed)
    data = json.loads(seed)
    for _ in range(rng.randint(1, 3)):
        data = _mutate_tree(rng, data)
    try:
        return json.dumps(data).encode()
    except (RecursionError, ValueError):  # a mutant json itself cannot write
        return seed


def mutated_config(rng: random.Random, seed: str = CONFIG_SEED) -> str:
    lines = seed.splitlines()
    for _ in range(rng.randint(1, 3)):
        index = rng.randrange(len(lines))
        roll = rng.random()
        key, sep, _ = lines[index].partition(":")
        if roll < 0.6 and sep:
            lines[index] = f"{key}: {rng.choice(_YAML_SNIPPETS)}"
        elif roll < 0.75:
            lines.insert(index, lines[rng.randrange(len(lines))])
        elif roll < 0.85:
            lines[index] = " " * rng.randint(0, 6) + lines[index].lstrip()
        elif roll < 0.95:
            del lines[index]
            lines = lines or ["{}"]
        else:
            lines.append(rng.choice(_YAML_SNIPPETS))
    return "\n".join(lines) + "\n"


@dataclass
class Tally:
    runs: int = 0
    by_exit: dict[int, int] = field(default_factory=dict)
    internal: list[str] = field(default_factory=list)  # exit 3 or a traceback: what broke
    hangs: list[str] = field(default_factory=list)
    slowest: float = 0.0


class _Hang(Exception):
    pass


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise _Hang


def run_cli(argv: list[str], tally: Tally, label: str, timeout_s: int = 20) -> None:
    """Run `ci-stability argv` in this process; record its exit and anything internal."""
    import time  # Deliberately lazy: only the fuzz runners time inputs.
    err, out = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout_s)
    started = time.perf_counter()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(argv)
    except _Hang:
        tally.hangs.append(label)
        code = -1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    tally.slowest = max(tally.slowest, time.perf_counter() - started)
    tally.runs += 1
    tally.by_exit[code] = tally.by_exit.get(code, 0) + 1
    text = err.getvalue()
    if code == 3 or "Traceback" in text or "internal error" in text:
        tally.internal.append(f"{label}: exit {code}: {text[-300:]}")


def fuzz(pr_seeds: list[Path], work: Path, n_pr: int, n_config: int, seed: int) -> Tally:
    """`n_pr` mutated PR JSON files and `n_config` mutated configs through the CLI."""
    rng = random.Random(seed)
    tally = Tally()
    seeds = [p.read_bytes() for p in pr_seeds]
    work.mkdir(parents=True, exist_ok=True)
    pr_file, config_file = work / "pr.json", work / "ci-stability.yml"
    for i in range(n_pr):
        pr_file.write_bytes(mutated_pr_json(rng, rng.choice(seeds)))
        run_cli(["review", "--pr", str(pr_file), "--format", "json", "--fail-level", "none"],
                tally, f"pr#{i}")
    pr_file.write_bytes(seeds[0])
    for i in range(n_config):
        config_file.write_bytes(mutated_config(rng).encode("utf-8", "surrogatepass"))
        run_cli(["review", "--pr", str(pr_file), "--config", str(config_file),
                 "--format", "json", "--fail-level", "none"], tally, f"config#{i}")
        run_cli(["config", "check", str(config_file)], tally, f"config-check#{i}")
    return tally
