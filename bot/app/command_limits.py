"""Rate limits on what slash commands make the bot write.

Per user and per PR, counted per comment (a retried comment is not counted twice);
`/stability review` has its own, smaller, per-PR budget since each re-run costs a
whole review. Over a limit, one reply per window says so and nothing else is written.
"""

from __future__ import annotations

from bot.store import Store

WINDOW_SECONDS = 600.0
PER_USER = 10
PER_PR = 20
REVIEWS_PER_PR = 3

Bucket = tuple[str, int, float]


def rate_buckets(login: str, full_name: str, number: int) -> list[Bucket]:
    return [(f"user:{login.lower()}", PER_USER, WINDOW_SECONDS),
            (f"pr:{full_name.lower()}#{number}", PER_PR, WINDOW_SECONDS)]


def review_bucket(full_name: str, number: int) -> Bucket:
    return (f"review:{full_name.lower()}#{number}", REVIEWS_PER_PR, WINDOW_SECONDS)


def limit_notice(store: Store, comment_id: int, bucket: str, login: str, now: float) -> str:
    """The one reply of the window that says the limit was reached ("" for the others)."""
    if store.take_rate(comment_id, [(f"notice:{bucket}", 1, WINDOW_SECONDS)], now) is not None:
        return ""
    minutes = int(WINDOW_SECONDS // 60)
    if bucket.startswith("user:"):
        return (f"@{login}, you have sent more than {PER_USER} commands in {minutes} "
                "minutes; further commands are ignored for a few minutes (this is the only "
                "notice).")
    return (f"This pull request received more than {PER_PR} commands in {minutes} minutes; "
            "further commands are ignored for a few minutes (this is the only notice).")
