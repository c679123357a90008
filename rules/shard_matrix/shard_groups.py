"""Shard matrices as data: parse a matrix safely, group its shard ids, find coverage gaps.

Used by the shard-matrix rule on full texts (and on whole matrix blocks seen in a patch).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

from rules.analysis.knobs import normalize

_MAX_NODES = 20_000  # YAML nodes visited per matrix (aliases share nodes: no bombs)
MAX_SHARDS = 10_000
_GROUP_KEYS = ("config", "suite")  # include entries shard separately per test config


class _Budget(Exception):
    pass


def _plain(node: yaml.Node, budget: list[int]) -> Any:
    import yaml  # lazy (start-up time): most reviews parse no matrix
    budget[0] -= 1
    if budget[0] < 0:
        raise _Budget
    if isinstance(node, yaml.MappingNode):
        return {str(_plain(k, budget)): _plain(v, budget) for k, v in node.value}
    if isinstance(node, yaml.SequenceNode):
        return [_plain(item, budget) for item in node.value]
    if node.tag.endswith(":int") and str(node.value).lstrip("+-").isdecimal():
        return int(node.value)
    return str(node.value)


def parse_yaml(text: str) -> Any:
    import yaml  # lazy (start-up time): most reviews parse no matrix
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        return None if node is None else _plain(node, [_MAX_NODES])
    except (yaml.YAMLError, _Budget, RecursionError, ValueError, TypeError):
        return None


@dataclass(frozen=True)
class ShardOptions:
    ids: frozenset[str]
    sizes: frozenset[str]
    one_based: frozenset[str]
    size_flag: re.Pattern[str]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_Group = tuple[str, list[int], int | None, str]  # id key, ids, shard count, which jobs


def shard_groups(data: Any, opts: ShardOptions) -> list[_Group]:
    """The sets of shard ids that must each cover a range, with the shard count if stated."""
    if not isinstance(data, dict):
        return []
    sized = [v[0] if isinstance(v, list) and len(v) == 1 else v
             for k, v in data.items() if normalize(k) in opts.sizes]
    top = next((v for v in sized if _is_int(v)), None)
    groups: list[_Group] = [(k, v, top, "") for k, v in data.items() if normalize(k) in opts.ids
                            and isinstance(v, list) and v and all(_is_int(x) for x in v)]
    dims = {k for k, _, _, _ in groups}
    exclude = data.get("exclude")
    for key, ids, size, _ in list(groups):
        # `exclude: [{box: gnr, part: 2}]` leaves the gnr jobs without part 2.
        hidden: dict[str, set[int]] = {}
        for entry in exclude if isinstance(exclude, list) else []:
            if isinstance(entry, dict) and _is_int(entry.get(key)):
                label = ", ".join(f"{k}={v}" for k, v in entry.items() if k != key)
                hidden.setdefault(label, set()).add(entry[key])
        implied = size or max(ids) - (0 if 0 in ids else 1) + 1
        groups += [(key, [i for i in ids if i not in gone], implied, label)
                   for label, gone in hidden.items()]
    by_group: dict[tuple[Any, ...], _Group] = {}
    include = data.get("include")
    for entry in include if isinstance(include, list) else []:
        if not isinstance(entry, dict):
            continue
        id_key = next((k for k, v in entry.items()
                       if normalize(k) in opts.ids and _is_int(v) and k not in dims), None)
        if id_key is None:
            continue
        count = next((v for k, v in entry.items() if normalize(k) in opts.sizes and _is_int(v)),
                     top)
        slot = (id_key, count, *(str(entry.get(g)) for g in _GROUP_KEYS))
        which = ", ".join(f"{g}={entry[g]}" for g in _GROUP_KEYS if g in entry)
        by_group.setdefault(slot, (id_key, [], count, which))[1].append(entry[id_key])
    return groups + list(by_group.values())


def shard_problem(key: str, ids: list[int], size: int | None, opts: ShardOptions) -> str | None:
    present = set(ids)
    if 0 in present:
        base = 0
    elif (size is not None and max(ids) == size) or (size is None and 1 in present):
        base = 1
    else:
        base = 1 if normalize(key) in opts.one_based else 0
    top = base + size - 1 if size is not None else max(ids)
    if top - base >= MAX_SHARDS:
        return None
    missing = [x for x in range(base, top + 1) if x not in present]
    duplicate = sorted(x for x, n in Counter(ids).items() if n > 1)
    outside = sorted(x for x in present if x < base or x > top)
    parts = [f"{label} {', '.join(map(str, values))}" for label, values in
             (("missing", missing), ("duplicated", duplicate), ("out of range", outside))
             if values]
    return "; ".join(parts) or None
