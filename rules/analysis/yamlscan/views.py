"""The scanned YAML of a changed file, shared by every rule that reads it.

The line types and per-line helpers live in `yaml_lines`, the scanner in
`scanner`; this module decides which files are YAML and how a changed file
(whole head text, or only its hunks) becomes one cached `YamlView`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from bot.core.snapshot import ChangedFile
from rules.analysis.memo import memoized
from rules.analysis.yamlscan.scanner import scan
from rules.analysis.yamlscan.yaml_lines import YamlLine

YAML_SUFFIXES = (".yml", ".yaml")


@dataclass
class YamlView:
    """The scanned lines of one file, by head line number.

    `view()` shares one instance between all rules: treat it as read-only.
    """

    lines: dict[int, YamlLine] = field(default_factory=dict)
    full: bool = False  # built from the whole head text (paths are exact)

    def get(self, number: int) -> YamlLine | None:
        return self.lines.get(number)

    def __iter__(self) -> Iterator[YamlLine]:
        return iter(self.lines.values())


def is_yaml(path: str) -> bool:
    return path.lower().endswith(YAML_SUFFIXES)


@memoized
def view(changed: ChangedFile) -> YamlView:
    """Scan a changed file: its head text when known, else each hunk's visible lines.

    Several rules scan the same YAML file, so the view is computed once per file and
    kept with it; callers must not modify it.
    """
    return fresh_view(changed)


@memoized
def base_view(changed: ChangedFile) -> dict[int, YamlLine] | None:
    """The whole base text scanned, by base line number; None when the base text is
    unknown. Shared like `view` (several rules pair head lines with the base's):
    read-only."""
    lines = changed.base_lines
    if lines is None:
        return None
    return {line.number: line for line in scan(enumerate(lines, start=1), full=True)}


def fresh_view(changed: ChangedFile) -> YamlView:
    """`view` without the per-file cache."""
    lines = changed.head_lines
    if lines is not None:
        scanned = scan(enumerate(lines, start=1), full=True)
        return YamlView({line.number: line for line in scanned}, full=True)
    result = YamlView(full=False)
    for hunk in changed.hunks:
        visible = [(line.new_no, line.text) for line in hunk.lines if line.new_no is not None]
        for line in scan(visible, full=False, section=hunk.section):
            result.lines[line.number] = line
    return result


@memoized
def base_side(changed: ChangedFile) -> dict[int, YamlLine]:
    """The base side scanned, by base line number: the whole base text when known, else
    each hunk's base lines (a patch-only snapshot). Shared like `view`: read-only."""
    whole = base_view(changed)
    if whole is not None:
        return whole
    out: dict[int, YamlLine] = {}
    for hunk in changed.hunks:
        visible = [(line.old_no, line.text) for line in hunk.lines if line.old_no is not None]
        out.update((line.number, line) for line in scan(visible, full=False,
                                                        section=hunk.section))
    return out
