"""A bounded ETag cache for gidgethub, one per installation.

gidgethub takes any MutableMapping as its conditional-request cache; a plain dict
would grow with every URL the App ever fetched.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, MutableMapping
from typing import Any

CacheEntry = tuple[str | None, str | None, Any, str | None]


class BoundedCache(MutableMapping[str, CacheEntry]):
    def __init__(self, maxsize: int = 512) -> None:
        self._data: OrderedDict[str, CacheEntry] = OrderedDict()
        self._maxsize = maxsize

    def __getitem__(self, key: str) -> CacheEntry:
        value = self._data[key]
        self._data.move_to_end(key)
        return value

    def __setitem__(self, key: str, value: CacheEntry) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self._maxsize:
            self._data.popitem(last=False)

    def __delitem__(self, key: str) -> None:
        del self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)
