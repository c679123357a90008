"""Values paired within one YAML entry: the same key path, the same named list item.

A restructured map of benchmark cases (`acc:` renamed `acc_aime2025:`, `perf_1:`
replaced by `acc_GPQA:`) lines up one case's `threshold` with another's in the diff;
"threshold 0.97 → 5" is then no change anyone made. A pair is kept only when both
values sit at the same key path, list items told apart by their name (`- name: …`,
or a `name:` after a merge key); a head value whose old counterpart was in another
entry is dropped rather than reported with a wrong old value (or as new, when the
entry was only restructured).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.snapshot import ChangedFile, Hunk
from rules.analysis.knobs import Change
from rules.analysis.memo import memoized
from rules.analysis.yamlscan import ITEM, YamlLine, base_view, is_yaml, scan, view

# Keys whose value names a list item (a test case, a model, a job).
_NAME_KEYS = frozenset({"name", "model", "model_name", "id", "key", "label", "case", "task",
                        "test", "test_name", "case_name", "job", "dataset"})
_Path = tuple[str, ...]


def split_across_entries(changed: ChangedFile, hunk: Hunk,
                         changes: Sequence[Change]) -> list[Change]:
    """The changes re-paired so that old and new values share an entry (YAML only)."""
    if not is_yaml(changed.path) or not any(
            c.old is not None and c.new is not None for c in changes):
        return list(changes)
    if _within_one_run(hunk, changes):
        return list(changes)  # no entry boundary between any pair: nothing to re-pair
    base, head = _paths(changed, hunk, False), _paths(changed, hunk, True)
    crossing = {c.setting.name for c in changes if c.old is not None and c.new is not None
                and _differ(base.get(c.old.line), head.get(c.new.line))}
    if not crossing:
        return list(changes)
    out = [c for c in changes if c.setting.name not in crossing]
    for name in crossing:
        mine = [c for c in changes if c.setting.name == name]
        olds = [c.old for c in mine if c.old is not None]
        taken: set[int] = set()
        for change in mine:
            new = change.new
            if new is None:
                continue
            where = head.get(new.line)
            match = next((k for k, old in enumerate(olds) if k not in taken
                          and not _differ(base.get(old.line), where)), None)
            if match is not None:
                taken.add(match)
                out.append(Change(olds[match], new))
            elif change.old is None:
                out.append(change)  # added, and never paired: as before
            # else: its counterpart was in another entry (restructured): say nothing
        out += [Change(old, None) for k, old in enumerate(olds) if k not in taken]
    return out


def _within_one_run(hunk: Hunk, changes: Sequence[Change]) -> bool:
    """Every pair's two lines sit in one run of changed lines, at one indentation, and
    no changed line above either of them on its side, at its indentation or less,
    opens a list item or a block or renames an item: their entry is the same on both
    sides (a path depends only on the lines above it), so the (costly) scan of the
    hunk's sides can be skipped."""
    # Only lines up to the last paired line of their side matter: an opener below it is
    # never above a pair's line. Both sides' numbers grow down the hunk.
    last_old = max((c.old.line for c in changes if c.old is not None and c.new is not None),
                   default=0)
    last_new = max((c.new.line for c in changes if c.old is not None and c.new is not None),
                   default=0)
    run = 0
    old_done = new_done = False  # the side's last paired line is behind
    openers: list[tuple[bool, int, int]] = []  # (base side, position, indentation)
    olds: dict[int, tuple[int, int, int]] = {}  # line → (run, indentation, position)
    news: dict[int, tuple[int, int, int]] = {}
    for k, line in enumerate(hunk.lines):
        old_no, new_no = line.old_no, line.new_no
        if old_no is not None and new_no is not None:  # context ends a run
            if old_no >= last_old and new_no >= last_new:
                break
            run += 1
            continue
        if old_done if old_no is not None else new_done:
            continue  # below its side's last paired line: neither a pair nor an opener
        text = line.text
        stripped = text.strip()
        indent = len(text) - len(text.lstrip())
        if stripped.startswith("-") or stripped.endswith(":") or _renames(stripped):
            openers.append((old_no is not None, k, indent))
        if old_no is not None:
            olds[old_no] = (run, indent, k)
            old_done = old_no >= last_old
        elif new_no is not None:
            news[new_no] = (run, indent, k)
            new_done = new_no >= last_new
        if old_done and new_done:
            break
    for change in changes:
        if change.old is None or change.new is None:
            continue
        old, new = olds.get(change.old.line), news.get(change.new.line)
        if old is None or new is None or old[:2] != new[:2]:
            return False
        indent = old[1]
        if any(depth <= indent and k < (old[2] if base else new[2])
               for base, k, depth in openers):
            return False
    return True


def _renames(stripped: str) -> bool:
    """Whether a changed line sets a key that names a list item (`name: …`)."""
    key = stripped.removeprefix("-").lstrip().split(":", 1)[0].strip().strip("\"'")
    return ":" in stripped and key.lower() in _NAME_KEYS


def _differ(a: _Path | None, b: _Path | None) -> bool:
    return a is not None and b is not None and a != b


def _paths(changed: ChangedFile, hunk: Hunk, head: bool) -> dict[int, _Path]:
    """Key paths (items named) of one side's lines visible in the hunk."""
    scanned = _scanned_side(changed, head)
    if scanned is None:
        visible = [(n, line.text) for line in hunk.lines
                   if (n := line.new_no if head else line.old_no) is not None]
        scanned = _named(scan(visible, full=False, section=hunk.section))
    return scanned


@memoized
def _scanned_side(changed: ChangedFile, head: bool) -> dict[int, _Path] | None:
    if head:
        if changed.head_lines is None:
            return None
        return _named(list(view(changed)))  # the head's scan, shared by every rule
    whole = base_view(changed)
    return None if whole is None else _named(list(whole.values()))


def _named(lines: list[YamlLine]) -> dict[int, _Path]:
    names = _item_names(lines)
    out: dict[int, _Path] = {}
    for line in lines:
        path = line.path
        if ITEM in path:
            path = tuple(names.get(anchor, ITEM) if part == ITEM else part
                         for part, anchor in zip(path, _padded(line), strict=False))
        out[line.number] = path
    return out


def _padded(line: YamlLine) -> tuple[int, ...]:
    anchors = line.anchors
    return anchors + (0,) * (len(line.path) - len(anchors))


def _item_names(lines: list[YamlLine]) -> dict[int, str]:
    """List items (by the line that opens them) named by their first name key: the
    opener's own (`- name: perf_1`) or, after a merge key or other keys (`- <<: *base`
    then `name: …`), the first naming key directly in the item."""
    names: dict[int, str] = {}
    for line in lines:
        key = line.key
        if key is None or key.lower() not in _NAME_KEYS:
            continue
        if line.item:
            opener = line.number
        elif line.path and line.path[-1] == ITEM and len(line.anchors) == len(line.path):
            opener = line.anchors[-1]
        else:
            continue
        if opener and opener not in names:
            names[opener] = f"{ITEM}{key}={line.value.strip().strip(chr(34) + chr(39))}"
    return names

