"""Which entry of a data config a setting belongs to, read from one side of a hunk.

A hunk of a YAML or JSON config may hold several entries setting the same knob: a new
`perf_warmup:` case (`num_prompts: 16`) inserted above the kept `perf:` case
(`num_prompts: 256`), or catalog objects whose `model_name` changed because other
models' entries were inserted where the old ones were. Pairing by name and order alone
then reads "256 → 16" across two entries. An entry is known here by the key of the
mapping holding the setting (`perf`) and by the identity keys among its siblings
(`model_name`, `model_path`…, as `model_identity` reads a one-model file); two
settings whose known entries differ are different knobs, never an old and a new value.

Only the lines the hunk shows are read: a parent or sibling outside it is unknown, and
unknown never tells two entries apart (the pairing then falls back to name and order).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rules.analysis.lines import SideLine, indent_width

# The keys naming the model an entry serves (a catalog's). A step's or case's `name` is
# not one: workflow steps are renamed while restructured and keep their limits.
_IDENTITY_RE = re.compile(
    r"""^\s*(?:-\s+)?["']?(model|model_name|model_id|model_path"""
    r"""|model_name_or_path)["']?\s*:\s*["']?([^"'#,{}\[\]]{1,200}?)["']?\s*,?\s*(?:#.*)?$""")
# A key opening a nested mapping or list (`perf:`, `"gsm8k": {`, `cases: [`).
_OPENER_RE = re.compile(r"""^\s*(?:-\s+)?["']?([^"':#{}\[\]\s][^"':#{}\[\]]{0,120}?)["']?"""
                        r"""\s*:\s*[{\[]?\s*(?:#.*)?$""")
_CHECKPOINT_KEYS = ("model_path", "model_name_or_path", "model_id", "model")
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
_MAX_WALK = 400

Entry = tuple[str, str]  # (the key of the mapping holding it, its identity), "" unknown


def _item(text: str) -> bool:
    return text.lstrip().startswith("- ")


def _column(text: str) -> int:
    """Where a line's key starts: after the dash of a list item."""
    return indent_width(text) + (2 if _item(text) else 0)


def _skip(text: str) -> bool:
    stripped = text.strip()
    return not stripped or stripped.startswith(("#", "//"))


def _name(value: str) -> str:
    """A model moved to another directory (`/mnt/a/M` → `/mnt/b/M`) is the same model."""
    value = value.strip()
    return "" if any(c in value for c in "${<%") else value.rstrip("/").rsplit("/", 1)[-1].lower()


def entry_of(side: Sequence[SideLine], pos: int) -> Entry:
    """The entry of the setting on side[pos] (its value line)."""
    own = side[pos][1]
    column = _column(own)
    identity: dict[str, str] = {}
    parent = ""

    def sibling(text: str) -> None:
        match = _IDENTITY_RE.match(text[:400])
        if match and (value := _name(match.group(2))):
            identity.setdefault(match.group(1), value)

    sibling(own)
    started = _item(own)  # the setting opens its list item: nothing above is in it
    for j in range(pos - 1, max(-1, pos - _MAX_WALK), -1):
        text = side[j][1]
        if _skip(text):
            continue
        indent = indent_width(text)
        if started:
            if indent < indent_width(own):
                parent = _opener(text)
                break
            continue
        if indent > column:
            continue  # a sibling's child
        if indent == column and not _item(text):
            sibling(text)
            continue
        if _item(text) and _column(text) == column:
            sibling(text)  # the item's first key, a sibling
            started = True
            own = text
            continue
        parent = _opener(text)
        break
    for j in range(pos + 1, min(len(side), pos + _MAX_WALK)):
        text = side[j][1]
        if _skip(text):
            continue
        indent = indent_width(text)
        if indent > column:
            continue
        if indent < column or _item(text):
            break
        sibling(text)
    # A top-level key is the file's own (a one-model config moved to another model is
    # `model_identity`'s case): only an entry nested in a collection has an identity.
    return parent, _checkpoint(identity) if column else ""


def _checkpoint(identity: dict[str, str]) -> str:
    """The checkpoint an entry serves; its display name only when it names none (an
    entry renamed for its new parallelism, `… MTP TP8` → `… MTP TP4`, keeps its model)."""
    for key in _CHECKPOINT_KEYS:
        if key in identity:
            return identity[key]
    return identity.get("model_name", "")


def _opener(text: str) -> str:
    """The key a mapping is opened with, its numbers left out: an entry named by the
    value it sets (`"… TP8": {` holding `--tensor-parallel-size 8`) is renamed with it."""
    match = _OPENER_RE.match(text[:400])
    return _NUMBER_RE.sub("#", match.group(1).strip()) if match else ""


def differ(old: Entry, new: Entry) -> bool:
    """Whether two known entries are different ones (unknown parts tell nothing)."""
    return any(a and b and a != b for a, b in zip(old, new, strict=True))
