"""A config for another model: its values are that model's, not the old model's retuned.

A model card or eval config serves one model (`model_name: "Qwen/Qwen3.5-9B"`). When a
PR moves it to another model (`qwen3.5-9b.yaml` → `qwen3.5-35b-a3b.yaml`, git pairing
the two files by their shared keys, or `model_name` alone switched), its gate, sample
count and memory fraction are set for the new model: `value: 0.85 → 0.75` is the bar
another model is held to, as in an added file, not a lowered bar. The same holds for one
entry of a catalog renamed with its checkpoint (knob-rationale's catalogs); this is the
whole-file case, shared by the rules that pair a file's old and new values.

Only data configs (YAML, JSON, TOML) naming exactly one model on each side are read: a
catalog of several models is compared entry by entry, and a workflow or test module that
names a model holds much besides it; a name without a digit is a backend (`model: vllm`),
not a checkpoint. A model moved to another directory (`/mnt/a/M` →
`/mnt/b/M`) is the same model. A renamed file naming no model is another model's when
the sizes its name carries differ (`llama-8b.yaml` → `llama-70b.yaml`).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from bot.core.snapshot import ChangedFile
from rules.analysis.memo import memoized

_DATA_SUFFIXES = (".yaml", ".yml", ".json", ".toml")
_MODEL_KEY_RE = re.compile(
    r"""^[ \t]*(?:-[ \t]+)?["']?(?:model|model_name|model_id|model_path|model_name_or_path"""
    r"""|pretrained|hf_model|hf_model_id)["']?[ \t]*[:=][ \t]*["']?([^"'\s,#}\]]{2,300})""",
    re.M)
# A size in a model's name (`9b`, `0.5B`, `350m`, `8x22b`), not a version (`v2`) nor
# an MoE part (`a3b`).
_SIZE_RE = re.compile(r"(?:(?<![a-z0-9.])|(?<=\dx))\d+(?:\.\d+)?[bm](?![a-z0-9])")
_DIGIT_RE = re.compile(r"\d")
_MAX_TEXT = 400_000


def _identity(value: str) -> str | None:
    """The model a value names, or None for a template (`${MODEL}`, `{{ model }}`)."""
    if any(c in value for c in "${<%"):
        return None
    return value.rstrip("/").rsplit("/", 1)[-1].lower()


def _models(text: str) -> frozenset[str | None]:
    # A name without a digit is a backend (`model: vllm`, `hf`), not a checkpoint.
    return frozenset(m for v in _MODEL_KEY_RE.findall(text[:_MAX_TEXT])
                     if (m := _identity(v)) is None or _DIGIT_RE.search(m))


def _side(changed: ChangedFile, head: bool) -> str | None:
    full = changed.head_text if head else changed.base_text
    if full is not None:
        return full
    if changed.status != "renamed":
        return None  # a catalog's other models may sit outside the patch
    return "\n".join(line.text for hunk in changed.hunks for line in hunk.lines
                     if (line.new_no if head else line.old_no) is not None)


def _sizes(path: str) -> frozenset[str]:
    return frozenset(_SIZE_RE.findall(PurePosixPath(path).stem.lower()))


@memoized
def for_another_model(changed: ChangedFile) -> bool:
    """Whether the file, a one-model data config, now configures another model."""
    path = changed.path.lower()
    if not path.endswith(_DATA_SUFFIXES) or path.startswith(".github/"):
        return False
    base, head = _side(changed, False), _side(changed, True)
    if base is None or head is None:
        return False
    before, after = _models(base), _models(head)
    if before or after:
        if len(before) != 1 or len(after) != 1 or None in before | after:
            return False  # a catalog, a template, or a model only on one side
        return before != after
    previous = changed.previous_path
    if changed.status != "renamed" or not previous:
        return False
    old, new = _sizes(previous), _sizes(changed.path)
    return bool(old) and bool(new) and old != new
