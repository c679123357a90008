"""Maintainers' 👎 on the bot's inline review comments, read back as misfire verdicts.

GitHub sends no webhook for reactions, so the App reads them when it next reviews the
PR. Calls, all reads: the PR's review comments (one per 100 comments); then, only for a
bot comment whose 👎 count is above zero and differs from the count read last time, its
👎 reactions (one per 100); and the permission of each reacting user not recorded yet
for that comment (one per user per read). A PR whose 👎 counts have not changed costs
the one listing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.github.calls import Flow, paginate, repo_path
from bot.github.conversation import permission
from bot.render import markers
from bot.render.review import rule_of

WRITE_LEVELS = frozenset({"admin", "maintain", "write"})


@dataclass(frozen=True)
class ThumbsDown:
    """One user's 👎 on one of the bot's inline comments: a misfire of its rule."""

    comment_id: int
    user: str
    rule: str


@dataclass
class ThumbsRead:
    counts: dict[int, int] = field(default_factory=dict)  # comment id → 👎 count read
    verdicts: list[ThumbsDown] = field(default_factory=list)  # by users with write access


def _login(item: Mapping[str, Any]) -> str:
    user = item.get("user")
    return str(user.get("login") or "") if isinstance(user, Mapping) else ""


def _thumbs_down(comment: Mapping[str, Any]) -> int:
    reactions = comment.get("reactions")
    count = reactions.get("-1") if isinstance(reactions, Mapping) else None
    return count if isinstance(count, int) and count > 0 else 0


def read_thumbs_down(owner: str, repo: str, number: int, bot_login: str,
                     counts_read: Mapping[int, int],
                     recorded: Collection[tuple[int, str]]) -> Flow[ThumbsRead]:
    """The 👎 verdicts on the bot's inline comments not recorded yet, and the counts seen.
    `counts_read`/`recorded`: what earlier reads found (from the store)."""
    base = repo_path(owner, repo)
    comments = yield from paginate(f"{base}/pulls/{number}/comments",
                                   "pulls/list-review-comments")
    read = ThumbsRead()
    levels: dict[str, str] = {}
    for comment in comments:
        if not isinstance(comment, Mapping) or _login(comment).lower() != bot_login.lower():
            continue
        body, comment_id = str(comment.get("body") or ""), comment.get("id")
        rule, count = rule_of(body), _thumbs_down(comment)
        if rule is None or not markers.fingerprints_in(body) or not isinstance(comment_id, int):
            continue
        if count or comment_id in counts_read:  # a withdrawn 👎 resets the count read
            read.counts[comment_id] = count
        if not count or counts_read.get(comment_id) == count:
            continue  # none, or nothing new since the last read
        reactions = yield from paginate(f"{base}/pulls/comments/{comment_id}/reactions",
                                        "reactions/list-for-pull-request-review-comment",
                                        params={"content": "-1"})
        users = {_login(r) for r in reactions if isinstance(r, Mapping)
                 and r.get("content") == "-1"}
        for user in sorted(users - {"", bot_login}):
            if (comment_id, user) in recorded:
                continue
            if user not in levels:
                levels[user] = yield from permission(owner, repo, user)
            if levels[user] in WRITE_LEVELS:
                read.verdicts.append(ThumbsDown(comment_id, user, rule))
    return read
