"""`cached_property` as Python 3.12 has it: without the lock 3.11's takes.

Python 3.11's `functools.cached_property` takes an `RLock` on every first read of every
instance, which costs about four times the read itself; a large PR's snapshot has tens
of thousands of hunks and files whose facts (their added lines, their text) are each
read once by some rule. Python 3.12 dropped the lock (it serialized all instances, and
computing a value twice is harmless); this is that descriptor. The value is stored in
the instance's `__dict__`, so later reads never call it, as with functools'.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Self, TypeVar, overload

_T = TypeVar("_T")


class cached_property(Generic[_T]):
    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> _T | Self:
        if instance is None:
            return self
        value = instance.__dict__[self.attrname] = self.func(instance)
        return value
