"""What handlers return or raise, and what the fake records about each request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT_DOCS_URL = "https://docs.github.com/rest"


class ApiError(Exception):
    """An error answer in GitHub's JSON shape.

    `violation` names the kind of client mistake when the request broke the API contract
    (schema, unknown route, a line outside the diff…); such errors are also appended to
    `FakeGitHub.violations`. Ordinary outcomes (404 for a missing PR, 401) leave it None.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: list[Any] | None = None,
        violation: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors
        self.violation = violation
        self.headers = headers or {}

    def body(self, docs_url: str = DEFAULT_DOCS_URL) -> dict[str, Any]:
        payload: dict[str, Any] = {"message": self.message}
        if self.errors is not None:
            payload["errors"] = self.errors
        payload["documentation_url"] = docs_url
        payload["status"] = str(self.status)
        return payload


def not_found() -> ApiError:
    return ApiError(404, "Not Found")


def unprocessable(message: str, *details: Any) -> ApiError:
    """A semantic 422 the real API would give; counts as a client violation."""
    return ApiError(
        422, message, errors=list(details) if details else None, violation="semantic"
    )


@dataclass
class Reply:
    status: int = 200
    json: Any = None
    raw: bytes | None = None
    content_type: str = "application/json; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    paginated_total: int | None = None


@dataclass(frozen=True)
class Violation:
    method: str
    path: str
    operation_id: str | None
    kind: str
    message: str


@dataclass
class RecordedCall:
    method: str
    path: str
    query: dict[str, str]
    operation_id: str | None
    status: int
    body: Any
    headers: dict[str, str]
    response: Any = None
    raw_path: str = ""  # as requested, e.g. /repositories/{id}/… when following a Link

    @property
    def is_write(self) -> bool:
        # A GraphQL query is a POST that writes nothing (mutations are not served).
        return self.method in {"POST", "PATCH", "PUT", "DELETE"} and self.path != "/graphql"
