"""A switch the description names: the hunk changes a setting's value to one the PR's
title or description talks about ("spin up lm-eval with vLLM": `model: hf` → `vllm`).

Knobs added in the same hunk come with that switch (the new backend needs
`max_model_len`), and the description's account of the switch is their reason.
"""

from __future__ import annotations

import re

from bot.core.snapshot import Hunk, LineKind

# `key: value`, `key = value`, `key: type = "value"`, `- key: value`; the value's first token.
_ASSIGN_RE = re.compile(
    r"""^\s*(?:-\s+)?["']?([A-Za-z_][\w.-]{0,60})["']?\s*(?::\s*[\w\[\], .|]{0,40}?=|:|=)\s*"""
    r"""["']?([A-Za-z][\w./-]{1,80})"""
)
_TOKEN_RE = re.compile(r"[a-z][a-z0-9]{2,}")
_MAX_LINES = 400  # a switch is a short edit; a huge hunk is read only at its start


def _assignments(hunk: Hunk, kind: LineKind) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in hunk.lines[:_MAX_LINES]:
        if line.kind == kind:
            match = _ASSIGN_RE.match(line.text)
            if match:
                found.setdefault(match.group(1).lower(), match.group(2).lower())
    return found


def named_switch(hunk: Hunk, pr_text: str) -> str | None:
    """`key: old → new` when the hunk changes a key's value to one whose distinctive word
    the PR text names (as a word), else None."""
    removed = _assignments(hunk, LineKind.REMOVED)
    if not removed:
        return None
    text = pr_text[:200_000].lower()
    for key, new in _assignments(hunk, LineKind.ADDED).items():
        old = removed.get(key)
        if old is None or old == new:
            continue
        fresh = set(_TOKEN_RE.findall(new)) - set(_TOKEN_RE.findall(old))
        if any(re.search(rf"(?<![a-z0-9]){re.escape(t)}(?![a-z0-9])", text) for t in fresh):
            return f"{key}: {old} → {new}"
    return None
