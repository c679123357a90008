"""GitHub App authentication: the App JWT and cached installation tokens.

gidgethub mints the JWT (RS256, `iat` backdated 60 s, `exp` under 10 minutes) and
exchanges it for an installation token. Tokens live one hour; one is reused until
`refresh_margin` before its `expires_at`. Neither tokens nor the key are ever put
into messages, reprs or logs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import aiohttp
import gidgethub
import gidgethub.aiohttp
from gidgethub import apps
from gidgethub.abc import GitHubAPI

from bot.errors import PermanentError, RetryableError

REFRESH_MARGIN_SECONDS = 5 * 60


@dataclass(frozen=True)
class InstallationToken:
    token: str
    expires_at: float  # epoch seconds

    def __repr__(self) -> str:
        return f"InstallationToken(expires_at={self.expires_at})"


def _epoch(value: object) -> float:
    if not isinstance(value, str):
        raise PermanentError("installation token answer has no expires_at")
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


class AppAuth:
    """Mints and caches installation tokens for one GitHub App."""

    def __init__(
        self,
        app_id: int | str,
        private_key: str,
        *,
        clock: Callable[[], float] = time.time,
        refresh_margin: float = REFRESH_MARGIN_SECONDS,
    ) -> None:
        self.app_id = str(app_id)
        self._private_key = private_key
        self._clock = clock
        self._margin = refresh_margin
        self._tokens: dict[int, InstallationToken] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    def __repr__(self) -> str:
        return f"AppAuth(app_id={self.app_id!r})"

    def app_jwt(self) -> str:
        return apps.get_jwt(app_id=self.app_id, private_key=self._private_key)

    async def app_slug(self, session: aiohttp.ClientSession, api_url: str) -> str:
        """The App's slug from `GET /app` (its bot posts as "<slug>[bot]")."""
        gh = gidgethub.aiohttp.GitHubAPI(session, "ci-stability-bot", base_url=api_url)
        try:
            answer = await asyncio.wait_for(gh.getitem("/app", jwt=self.app_jwt()), 15)
        except gidgethub.HTTPException as exc:
            raise PermanentError(f"GET /app: GitHub answered {exc.status_code}") from None
        slug = answer.get("slug") if isinstance(answer, dict) else None
        if not isinstance(slug, str) or not slug:
            raise PermanentError("GET /app: the answer has no slug")
        return slug

    def forget(self, installation_id: int) -> None:
        """Drop a cached token (after GitHub answered 401 to it)."""
        self._tokens.pop(installation_id, None)

    def cached(self, installation_id: int) -> InstallationToken | None:
        token = self._tokens.get(installation_id)
        if token is None or token.expires_at - self._margin <= self._clock():
            return None
        return token

    async def installation_token(self, gh: GitHubAPI, installation_id: int) -> str:
        """A valid token for the installation; `gh` needs no credentials of its own."""
        token = self.cached(installation_id)
        if token is not None:
            return token.token
        lock = self._locks.setdefault(installation_id, asyncio.Lock())
        async with lock:  # concurrent jobs of one installation mint one token
            token = self.cached(installation_id)
            if token is None:
                token = await self._mint(gh, installation_id)
                self._tokens[installation_id] = token
        return token.token

    async def _mint(self, gh: GitHubAPI, installation_id: int) -> InstallationToken:
        try:
            answer = await apps.get_installation_access_token(
                gh, installation_id=str(installation_id), app_id=self.app_id,
                private_key=self._private_key,
            )
        except gidgethub.HTTPException as exc:
            status = int(exc.status_code)
            if status >= 500 or status == 429 or isinstance(exc, gidgethub.RateLimitExceeded):
                raise RetryableError(
                    f"installation token for {installation_id}: GitHub answered {status}"
                ) from None
            raise PermanentError(
                f"installation token for {installation_id}: GitHub answered {status} "
                f"({exc}); check the App id, private key and that the App is installed"
            ) from None
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise RetryableError(
                f"installation token for {installation_id}: {type(exc).__name__}"
            ) from None
        if not isinstance(answer, dict) or not isinstance(answer.get("token"), str):
            raise PermanentError(f"installation token for {installation_id}: malformed answer")
        return InstallationToken(answer["token"], _epoch(answer.get("expires_at")))
