"""One memo for the analyses rules share: computed once per hunk or file, kept with it.

Rules run one after another over the same snapshot and ask the same questions of the
same hunks and files (a hunk's two sides, a file's YAML scan). The answer is stored in
the object's `derived` dict, so it is freed with the snapshot instead of outliving the
review, and keyed by the function that computes it: no name to keep unique by hand,
and no rule can read another analysis's entry by spelling its key.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TypeVar, TypeVarTuple, cast

from bot.core.snapshot import ChangedFile, Hunk

_Obj = TypeVar("_Obj", Hunk, ChangedFile)
_Args = TypeVarTuple("_Args")
_T = TypeVar("_T")


def memoized(fn: Callable[[_Obj, *_Args], _T]) -> Callable[[_Obj, *_Args], _T]:
    """`fn(obj, *args)` computed once per hunk or file and per `args`.

    Further arguments are part of the key, so they must be hashable, and cheap to
    hash (a path, a filter compared by identity): not a file or a hunk.
    """

    @wraps(fn)
    def cached(obj: _Obj, *args: *_Args) -> _T:
        # `derived` is typed for the snapshot's own string keys; a function (or a
        # tuple starting with one) can never be equal to one of those.
        store = cast("dict[object, object]", obj.derived)
        key = (fn, *args) if args else fn
        if key in store:
            return cast(_T, store[key])
        value = store[key] = fn(obj, *args)
        return value

    return cached
