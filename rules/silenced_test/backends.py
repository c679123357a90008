"""Which backends a PR brings to the repository, and which platform a gate names.

A PR that adds a backend (`HPU support`, a new `is_hpu_available()`) gates tests off
it (`@require_non_hpu`, `skip_if_hpu`): those tests never ran there, and still run on
every CI that ran them before, so the gate silences nothing. A gate that takes a test
off a platform the repository already ran (`@skip_if_rocm` with a flaky reason) is not
covered by this and stays a silencing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.core.snapshot import ChangedFile, LineKind

PLATFORMS = frozenset({
    "rocm", "hip", "cuda", "npu", "tpu", "xpu", "hpu", "mps", "mlu", "musa", "gaudi",
    "neuron", "ascend", "xla", "ipu", "dcu", "sdaa", "cpu", "gpu", "metal", "vulkan",
})
_WORD_RE = re.compile(r"[a-z0-9]+")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SUPPORT_RE = re.compile(
    r"\b(?:support\w*|enabl\w*|add\w*|backend|port\w*|integrat\w*|initial|bring[- ]?up|"
    r"introduc\w*|onboard\w*)\b", re.I)
_AVAILABLE_DEF_RE = re.compile(r"^\s*def\s+is_(?:torch_)?(?P<name>[a-z0-9]+)_available\b")
_MAX_LINES = 50_000


def platforms_named(text: str) -> frozenset[str]:
    """The platforms a gate's text names (`require_non_hpu`, `skipIfRocm`, `is_xpu()`)."""
    words = _WORD_RE.findall(_CAMEL_RE.sub("_", text).lower().replace("_", " "))
    return frozenset(w for w in words if w in PLATFORMS)


def new_backends(title: str, files: Iterable[ChangedFile]) -> frozenset[str]:
    """Platforms this PR adds: named in a title that says it adds or supports them, or
    given an availability check (`def is_hpu_available`) that the base did not have."""
    found = set(platforms_named(title)) if _SUPPORT_RE.search(title) else set()
    added: set[str] = set()
    removed: set[str] = set()
    budget = _MAX_LINES
    for changed in files:
        for line in (ln for h in changed.hunks for ln in h.lines):
            budget -= 1
            if budget < 0:
                break
            if line.kind == LineKind.CONTEXT or "def is_" not in line.text:
                continue
            match = _AVAILABLE_DEF_RE.match(line.text)
            if match is not None and match.group("name") in PLATFORMS:
                (added if line.kind == LineKind.ADDED else removed).add(match.group("name"))
    return frozenset(found | (added - removed))
