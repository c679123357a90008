"""A stateful fake of the GitHub REST API, validated against GitHub's OpenAPI description.

See README.md in this folder for what it emulates and what it does not.
"""

from .auth import generate_rsa_keypair
from .errors import ApiError, RecordedCall, Violation
from .server import FakeGitHub
from .state import (
    App,
    CheckRun,
    Commit,
    Installation,
    IssueComment,
    Job,
    PullFile,
    PullRequest,
    Reaction,
    Repo,
    Review,
    ReviewComment,
    WorkflowRun,
)
from .sync import running_fake_github
from .traffic import SECONDARY_RATE_LIMIT_MESSAGE
from .webhooks import load_payload, sign, signed_delivery, webhook_headers

__all__ = [
    "SECONDARY_RATE_LIMIT_MESSAGE",
    "ApiError",
    "App",
    "CheckRun",
    "Commit",
    "FakeGitHub",
    "Installation",
    "IssueComment",
    "Job",
    "PullFile",
    "PullRequest",
    "Reaction",
    "RecordedCall",
    "Repo",
    "Review",
    "ReviewComment",
    "Violation",
    "WorkflowRun",
    "generate_rsa_keypair",
    "load_payload",
    "running_fake_github",
    "sign",
    "signed_delivery",
    "webhook_headers",
]
