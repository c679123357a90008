"""PyTorch caching-allocator settings (`PYTORCH_CUDA_ALLOC_CONF` and kin): validation.

The option names and value rules follow PyTorch's `c10/core/AllocatorConfig` and
`CUDAAllocatorConfig` parsers, which refuse a bad value at start-up: a CI job then dies
before running a single test.
"""

from __future__ import annotations

import difflib
import re

_BOOL = "bool"
OPTIONS: dict[str, str] = {
    "max_split_size_mb": "mb20", "max_non_split_rounding_mb": "mb20",
    "garbage_collection_threshold": "fraction_open", "roundup_power2_divisions": "roundup",
    "expandable_segments": _BOOL, "release_lock_on_cudamalloc": _BOOL,
    "release_lock_on_hipmalloc": _BOOL, "pinned_use_cuda_host_register": _BOOL,
    "pinned_use_hip_host_register": _BOOL, "pinned_use_background_threads": _BOOL,
    "graph_capture_record_stream_reuse": _BOOL, "pinned_num_register_threads": "threads",
    "pinned_reserve_segment_size_mb": "positive", "backend": "backend",
    "per_process_memory_fraction": "fraction",
}
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}

def check_value(value: str, known: dict[str, str] | None) -> tuple[list[str], str | None]:
    """Problems PyTorch's parser would reject, and the corrected value when exact."""
    problems: list[str] = []
    fixed_pairs: list[str] = []
    exact = True
    pairs = _split_top(value)
    if pairs and not pairs[-1].strip():
        pairs = pairs[:-1]  # a trailing comma is accepted
    for pair in pairs:
        item = pair.strip()
        if not item:
            problems.append("empty entry (stray comma)")
            continue
        if ":" not in item:
            if "=" in item:
                fixed = item.replace("=", ":", 1)
                problems.append(f"`{item}` uses `=`; pairs are `key:value`")
                sub, _ = check_value(fixed, known)
                exact = exact and not sub
                fixed_pairs.append(fixed)
            else:
                problems.append(f"`{item}` is not a `key:value` pair")
                exact = False
            continue
        key, val = (part.strip() for part in item.split(":", 1))
        if known is None:
            fixed_pairs.append(f"{key}:{val}")
            continue
        if key not in known:
            guesses = [k for k in known if k.lower() == key.lower()] or difflib.get_close_matches(
                key, list(known), n=2, cutoff=0.8)
            hint = f" (did you mean `{guesses[0]}`?)" if guesses else ""
            problems.append(f"unknown option `{key}`{hint}")
            if len(guesses) != 1:
                exact = False
                continue
            key = guesses[0]
        problem, fixed_val = _check_option(known[key], key, val)
        if problem:
            problems.append(problem)
            exact = exact and fixed_val is not None
        fixed_pairs.append(f"{key}:{fixed_val if fixed_val is not None else val}")
    return problems, (",".join(fixed_pairs) if problems and exact else None)


def _check_option(kind: str, key: str, val: str) -> tuple[str | None, str | None]:
    if kind == _BOOL:
        if val in ("True", "False"):
            return None, None
        fix = "True" if val.lower() in _TRUE else "False" if val.lower() in _FALSE else None
        return f"`{key}` takes `True` or `False`, not `{val}`", fix
    if kind in ("mb20", "positive", "threads"):
        digits = re.match(r"\d+", val)
        if digits is None:
            return f"`{key}` needs a number, not `{val}`", None
        number = int(digits.group(0))
        if kind == "mb20" and number < 20:
            return f"`{key}` must be at least 20 (MB), not {number}", None
        if kind == "positive" and number <= 0:
            return f"`{key}` must be greater than 0", None
        if kind == "threads" and (number & (number - 1) or number == 0 or number > 128):
            return f"`{key}` must be a power of 2 up to 128, not {number}", None
        return None, None
    if kind in ("fraction", "fraction_open"):
        try:
            number_f = float(val)
        except ValueError:
            return f"`{key}` needs a number between 0 and 1, not `{val}`", None
        inside = 0 < number_f < 1 if kind == "fraction_open" else 0 <= number_f <= 1
        if not inside:
            return f"`{key}` must be between 0 and 1, not {val}", None
        return None, None
    if kind == "backend":
        names = ("native", "cudaMallocAsync", "hipMallocAsync")
        if val in names:
            return None, None
        fix = next((n for n in names if n.lower() == val.lower()), None)
        return f"`backend` is `native` or `cudaMallocAsync`, not `{val}`", fix
    if kind == "roundup":
        return _check_roundup(val), None
    return None, None


def _check_roundup(val: str) -> str | None:
    def power2(text: str) -> bool:
        return text.isdigit() and int(text) > 0 and not int(text) & (int(text) - 1)

    if not val.startswith("["):
        return None if power2(val) else (
            f"`roundup_power2_divisions` must be a power of 2, not `{val}`")
    if not val.endswith("]"):
        return "`roundup_power2_divisions` list is missing its closing `]`"
    for entry in filter(None, (e.strip() for e in val[1:-1].split(","))):
        interval, _, divisions = entry.partition(":")
        if not (interval.strip() == ">" or power2(interval.strip())) or not (
                divisions.strip() == "0" or power2(divisions.strip())):
            return f"`roundup_power2_divisions` entry `{entry}` needs power-of-2 `size:divisions`"
    return None


def _split_top(value: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(value):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            parts.append(value[start:i])
            start = i + 1
    parts.append(value[start:])
    return parts
