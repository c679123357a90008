"""GitHub App and token authentication, as strict as github.com's."""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass
from datetime import datetime, timedelta

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from .errors import ApiError
from .state import App, Installation, State, Token

TOKEN_LIFETIME = timedelta(hours=1)
# gidgethub backdates `iat` by 60 s and adds 10 min; GitHub accepts that.
MAX_JWT_SPAN_SECONDS = 11 * 60
MAX_JWT_AHEAD_SECONDS = 10 * 60 + 30
ALLOWED_IAT_SKEW_SECONDS = 60

# operation id -> alternatives of (permission, minimal level); any alternative suffices.
REQUIRED_PERMISSIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "pulls/list": (("pull_requests", "read"),),
    "pulls/get": (("pull_requests", "read"),),
    "pulls/list-files": (("pull_requests", "read"),),
    "pulls/list-commits": (("pull_requests", "read"),),
    "pulls/list-reviews": (("pull_requests", "read"),),
    "pulls/create-review": (("pull_requests", "write"),),
    "pulls/list-review-comments": (("pull_requests", "read"),),
    "reactions/list-for-pull-request-review-comment": (("pull_requests", "read"),),
    "repos/get-content": (("contents", "read"),),
    "repos/compare-commits-with-basehead": (("contents", "read"),),
    "repos/create-or-update-file-contents": (("contents", "write"),),
    "issues/list-comments": (("issues", "read"), ("pull_requests", "read")),
    "issues/create-comment": (("issues", "write"), ("pull_requests", "write")),
    "issues/update-comment": (("issues", "write"), ("pull_requests", "write")),
    "reactions/create-for-issue-comment": (("issues", "write"), ("pull_requests", "write")),
    "checks/create": (("checks", "write"),),
    "checks/update": (("checks", "write"),),
    "checks/list-for-ref": (("checks", "read"),),
    "repos/get-collaborator-permission-level": (("metadata", "read"),),
    "actions/list-workflow-runs-for-repo": (("actions", "read"),),
    "actions/list-workflow-runs": (("actions", "read"),),
    "actions/list-jobs-for-workflow-run": (("actions", "read"),),
    "actions/download-job-logs-for-workflow-run": (("actions", "read"),),
    "search/issues-and-pull-requests": (("metadata", "read"),),
}
_LEVELS = {"read": 1, "write": 2, "admin": 3}
# Only GitHub Apps may write check runs; personal tokens get this 403.
APP_ONLY_OPERATIONS = {"checks/create", "checks/update"}


def generate_rsa_keypair(bits: int = 2048) -> tuple[str, str]:
    """(private PEM, public PEM), as a GitHub App's downloadable key and its public half."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()
    return private_pem, public_pem


@dataclass(frozen=True)
class Principal:
    kind: str  # "app" | "installation" | "personal"
    login: str
    user_type: str
    token: Token | None = None

    def can_see(self, state: State, full_name: str) -> bool:
        if self.token is None:
            return False
        if self.token.repos is not None and full_name not in self.token.repos:
            return False
        if self.token.installation_id is None:
            return True
        installation = state.installations.get(self.token.installation_id)
        return installation is not None and installation.covers(full_name)

    @property
    def rate_limit_key(self) -> str:
        if self.token and self.token.installation_id is not None:
            return f"installation ID {self.token.installation_id}"
        return f"user ID {self.login}"


def split_authorization(header: str | None) -> tuple[str, str] | None:
    if not header or " " not in header.strip():
        return None
    scheme, _, credential = header.strip().partition(" ")
    return scheme.lower(), credential.strip()


def verify_app_jwt(encoded: str, app: App | None, now: datetime) -> None:
    if app is None:
        raise ApiError(401, "A JSON web token could not be decoded")
    try:
        claims = jwt.decode(
            encoded,
            app.public_key_pem,
            algorithms=["RS256"],
            options={"verify_exp": False, "verify_iat": False, "require": ["iat", "exp", "iss"]},
        )
    except jwt.PyJWTError as exc:
        raise ApiError(401, "A JSON web token could not be decoded") from exc
    iat, exp, iss = claims["iat"], claims["exp"], claims["iss"]
    if str(iss) != str(app.app_id):
        raise ApiError(401, "A JSON web token could not be decoded")
    if not isinstance(iat, int) or iat > now.timestamp() + ALLOWED_IAT_SKEW_SECONDS:
        raise ApiError(
            401,
            "'Issued at' claim ('iat') must be an Integer representing the time that the "
            "assertion was issued",
        )
    if not isinstance(exp, int) or exp <= now.timestamp():
        raise ApiError(
            401,
            "'Expiration time' claim ('exp') must be a numeric value representing the future "
            "time at which the assertion expires",
        )
    if exp - iat > MAX_JWT_SPAN_SECONDS or exp > now.timestamp() + MAX_JWT_AHEAD_SECONDS:
        raise ApiError(401, "'Expiration time' claim ('exp') is too far in the future")


def new_token_value() -> str:
    alphabet = string.ascii_letters + string.digits
    return "ghs_" + "".join(secrets.choice(alphabet) for _ in range(36))


def mint_installation_token(
    state: State,
    installation: Installation,
    now: datetime,
    repos: frozenset[str] | None = None,
    permissions: dict[str, str] | None = None,
) -> Token:
    assert state.app is not None
    token = Token(
        value=new_token_value(),
        kind="installation",
        login=state.app.bot_login,
        user_type="Bot",
        expires_at=now + TOKEN_LIFETIME,
        installation_id=installation.id,
        repos=repos,
        permissions=dict(permissions or installation.permissions),
    )
    state.tokens[token.value] = token
    return token


def resolve_token(state: State, credential: str, now: datetime) -> Principal:
    token = state.tokens.get(credential)
    if token is None or (token.expires_at is not None and token.expires_at <= now):
        raise ApiError(401, "Bad credentials")
    if token.installation_id is not None:
        installation = state.installations.get(token.installation_id)
        if installation is None:
            raise ApiError(401, "Bad credentials")
        if installation.suspended:
            raise ApiError(403, "This installation has been suspended")
    return Principal(token.kind, token.login, token.user_type, token)


def check_permission(principal: Principal, operation_id: str) -> None:
    if principal.kind == "personal" and operation_id in APP_ONLY_OPERATIONS:
        raise ApiError(403, "You must authenticate via a GitHub App.")
    granted = principal.token.permissions if principal.token else None
    if granted is None:
        return
    for permission, level in REQUIRED_PERMISSIONS.get(operation_id, ()):
        if _LEVELS.get(granted.get(permission, ""), 0) >= _LEVELS[level]:
            return
    if REQUIRED_PERMISSIONS.get(operation_id):
        raise ApiError(403, "Resource not accessible by integration")
