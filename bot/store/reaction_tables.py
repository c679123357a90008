"""👎 reactions on the bot's inline comments, kept as misfire verdicts (both backends).
Mixed into `SqlStore`.

GitHub sends no webhook for reactions, so the App reads them when it next reviews the
PR (bot/github/reactions.py). What it read last is kept per comment, so an unchanged
👎 count is not listed again; each (comment, user) becomes one misfire, however often
it is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bot.github.reactions import ThumbsDown
from bot.store.db import Db

# What a 👎 verdict records as its reason (the reaction carries none).
THUMBS_DOWN_REASON = "👎 on the inline comment"


class ReactionTables:
    db: Db

    def reactions_read(self, repo: str, number: int) -> tuple[dict[int, int], set[tuple[int, str]]]:
        """The 👎 count read last per comment of the PR, and the (comment, user) pairs
        already recorded."""
        counts = {int(c): int(n) for c, n in self.db.execute(
            "SELECT comment_id, thumbs_down FROM reaction_reads WHERE repo = ? AND number = ?",
            (repo, number)).fetchall()}
        done: set[tuple[int, str]] = set()
        if counts:
            rows = self.db.execute(
                "SELECT comment_id, by_user FROM reaction_verdicts WHERE repo = ?",
                (repo,)).fetchall()
            done = {(int(c), str(u)) for c, u in rows if int(c) in counts}
        return counts, done

    def record_reactions(self, repo: str, number: int, counts: Mapping[int, int],
                         verdicts: Iterable[ThumbsDown], at: float) -> int:
        """Save the counts read and each verdict not recorded before, together; how many
        misfires were added."""
        added = 0
        with self.db.transaction() as db:
            for verdict in verdicts:
                fresh = db.execute(
                    "INSERT INTO reaction_verdicts (repo, comment_id, by_user) VALUES (?, ?, ?)"
                    " ON CONFLICT (repo, comment_id, by_user) DO NOTHING",
                    (repo, verdict.comment_id, verdict.user)).rowcount
                if fresh:
                    db.execute(
                        "INSERT INTO misfires (repo, number, rule, reason, by_user, at)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        (repo, number, verdict.rule, THUMBS_DOWN_REASON, verdict.user, at))
                    added += 1
            for comment_id, count in counts.items():
                db.execute(
                    "INSERT INTO reaction_reads (repo, comment_id, number, thumbs_down)"
                    " VALUES (?, ?, ?, ?) ON CONFLICT (repo, comment_id)"
                    " DO UPDATE SET thumbs_down = excluded.thumbs_down",
                    (repo, comment_id, number, count))
        return added
