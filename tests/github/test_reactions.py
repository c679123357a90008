"""Reading 👎 on the bot's inline comments (bot/github/reactions.py) through the App's
real client stack against the fake GitHub: whose, which comments, and which calls."""

from __future__ import annotations

from bot.github.reactions import ThumbsDown, read_thumbs_down
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Review, ReviewComment
from tests.github.kit import REPO, app_side, new_fake, run

BOT = "ci-stability-bot[bot]"
OWNER, NAME = REPO.split("/")
BODY = "⚠️ **`silenced-test`**: the job may fail silently\n\n<!-- ci-stability:fp=abcdef12 -->"


def seed(fake: FakeGitHub) -> tuple[int, int, int]:
    """The bot's comment, its comment without a fingerprint, and a person's copy."""
    fake.add_pull(REPO, 7)
    ids = []
    for user, user_type, body in ((BOT, "Bot", BODY), (BOT, "Bot", "⚠️ **`x`**: no marker"),
                                  ("mallory", "User", BODY)):
        review_id, comment_id = fake.state.ids.next("review"), fake.state.ids.next("review_comment")
        fake.state.reviews[review_id] = Review(
            review_id, REPO, 7, user, user_type, "", "COMMENTED", "a" * 40, fake.now(),
            [ReviewComment(comment_id, review_id, "ci.yml", body, 3, "RIGHT", None, None, None)])
        ids.append(comment_id)
        for who in ("maint", "reader"):
            fake.react_to_review_comment(comment_id, who, "-1")
    return ids[0], ids[1], ids[2]


def test_only_writers_on_the_bots_marked_comments_and_only_changed_counts() -> None:
    fake = new_fake()
    ours, unmarked, theirs = seed(fake)
    fake.set_permission(REPO, "maint", "maintain")
    fake.set_permission(REPO, "reader", "triage")

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            first = await app.run(read_thumbs_down(OWNER, NAME, 7, BOT, {}, set()))
            assert first.verdicts == [ThumbsDown(ours, "maint", "silenced-test")]
            assert first.counts == {ours: 2}
            fetched = fake.calls_to("reactions/list-for-pull-request-review-comment")
            assert [c.query.get("content") for c in fetched] == ["-1"]
            assert str(ours) in fetched[0].path and unmarked and theirs
            # Recorded and unchanged: the listing only.
            again = await app.run(read_thumbs_down(OWNER, NAME, 7, BOT, first.counts,
                                                   {(ours, "maint")}))
            assert again.verdicts == [] and again.counts == {ours: 2}
            assert len(fake.calls_to("reactions/list-for-pull-request-review-comment")) == 1
            # Withdrawn: the count read drops to 0, so a later 👎 is read again.
            (comment,) = [c for r in fake.state.reviews.values() for c in r.comments
                          if c.id == ours]
            comment.reactions.clear()
            gone = await app.run(read_thumbs_down(OWNER, NAME, 7, BOT, again.counts,
                                                  {(ours, "maint")}))
            assert gone.counts == {ours: 0} and gone.verdicts == []
    run(scenario())
    assert fake.violations == []
    assert fake.count("repos/get-collaborator-permission-level") == 2  # maint, reader once
