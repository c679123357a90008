"""The events and actions the App acts on: the one table intake, routes and app.yaml share.

Intake acknowledges and drops everything else without storing it; `routes.py` maps
each event here to its handler (a test checks both, and that `app.yaml` subscribes to
exactly these events).
"""

from __future__ import annotations

from collections.abc import Mapping

# Actions that start a review of the PR's head.
REVIEW_ACTIONS = frozenset({"opened", "synchronize", "reopened", "ready_for_review"})

# Event → the actions handled. `installation*` events are accepted whatever the action.
HANDLED_ACTIONS: Mapping[str, frozenset[str]] = {
    "pull_request": REVIEW_ACTIONS | {"edited"},
    "issue_comment": frozenset({"created"}),
    "check_run": frozenset({"rerequested", "requested_action"}),
    "check_suite": frozenset({"rerequested"}),
    "workflow_job": frozenset({"completed"}),
    "workflow_run": frozenset({"completed"}),
}

# Sent to every App whatever it subscribes to, so they are not in the manifest.
IMPLICIT_EVENTS = frozenset({"installation", "installation_repositories"})

# What `app.yaml` must list under `default_events`.
SUBSCRIBED_EVENTS = frozenset(HANDLED_ACTIONS)


def accepts(event: str, action: str | None) -> bool:
    """The events and actions the bot acts on; the rest is acknowledged and dropped."""
    if event.startswith("installation"):  # installation, installation_repositories, …
        return True
    return action is not None and action in HANDLED_ACTIONS.get(event, frozenset())
