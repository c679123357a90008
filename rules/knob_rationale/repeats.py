"""One retune repeated across a file's jobs or cases is one change, asked about once.

A workflow that sets `HF_HUB_DOWNLOAD_TIMEOUT: 300` in each of its seven jobs, or a
pipeline that lowers `gpu_memory_utilization` 0.9 → 0.88 in two steps, made one
decision; seven identical notices on one file is the noise that gets a bot uninstalled.
The repeats are folded into the first notice, which counts them (`(×7)`).
"""

from __future__ import annotations

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import Change
from rules.knob_rationale.sweeps import signature

Ask = tuple[ChangedFile, list[Change]]


def fold_repeats(asks: list[Ask]) -> list[Ask]:
    """The asks with every change whose old → new already appears in an earlier ask of
    the same file moved into that ask; asks left empty are dropped."""
    folded: list[Ask] = []
    first: dict[tuple[str, tuple[str, str, str]], list[Change]] = {}
    for changed, changes in asks:
        own: list[Change] = []
        for change in changes:
            key = (changed.path, signature(change.setting, change))
            earlier = first.get(key)
            if earlier is not None and earlier is not own:
                earlier.append(change)
                continue
            first.setdefault(key, own)
            own.append(change)
        if own:
            folded.append((changed, own))
    return folded
