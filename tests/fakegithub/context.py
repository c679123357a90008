"""Everything an operation handler needs about one validated, authenticated request."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from .auth import Principal
from .errors import Reply, not_found
from .shapes import Shapes
from .state import PullRequest, Repo, State
from .traffic import page_bounds

T = TypeVar("T")


@dataclass
class Ctx:
    state: State
    shapes: Shapes
    now: datetime
    base_url: str
    principal: Principal
    operation_id: str
    params: dict[str, str]
    query: dict[str, Any]
    body: Any
    accept: str
    repo: Repo | None

    @property
    def full_name(self) -> str:
        assert self.repo is not None
        return self.repo.full_name

    def int_param(self, name: str) -> int:
        return int(self.params[name])

    def pull(self, number: int | None = None) -> PullRequest:
        number = self.int_param("pull_number") if number is None else number
        found = self.state.pulls.get((self.full_name, number))
        if found is None:
            raise not_found()
        return found

    def page(self, items: Sequence[T]) -> tuple[list[T], int]:
        per_page, page = page_bounds(self.query)
        start = (page - 1) * per_page
        return list(items[start : start + per_page]), len(items)

    def paged_reply(
        self, items: Sequence[T], render: Callable[[T], Any], wrap: str | None = None
    ) -> Reply:
        chunk, total = self.page(items)
        rendered = [render(item) for item in chunk]
        payload: Any = {"total_count": total, wrap: rendered} if wrap else rendered
        return Reply(json=payload, paginated_total=total)

    def acting_user(self) -> tuple[str, str]:
        return self.principal.login, self.principal.user_type


Handler = Callable[[Ctx], Reply]
