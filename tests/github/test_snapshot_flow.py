"""Fetching a pull request over the API with the App's real client (gidgethub on aiohttp)."""

from __future__ import annotations

from bot.core.surfaces import classify, surface_table
from bot.github.pull import fetch_config, fetch_snapshot
from tests.fakegithub import FakeGitHub, PullFile

from .kit import NAME, OWNER, REPO, app_side, file_entry, new_fake, push, run, sole, workflow

TABLE = surface_table()


def in_scope(path: str) -> bool:
    return classify(path, TABLE) is not None


def test_pagination_past_100_files_and_contents_only_for_in_scope_files() -> None:
    fake = new_fake()
    files: dict[str, tuple[str | None, str | None]] = {
        f"docs/page_{i:03}.md": ("old\n", "new\n") for i in range(120)
    }
    files.update({f".github/workflows/w{i}.yml": (workflow(), workflow(silenced=True))
                  for i in range(5)})
    files[".github/workflows/added.yml"] = (None, workflow())
    files[".github/workflows/removed.yml"] = (workflow(), None)
    head = push(fake, 7, files, tag="h1")

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            snapshot = await app.run(fetch_snapshot(OWNER, NAME, 7, wants_contents=in_scope))
            assert len(snapshot.files) == 127
            assert snapshot.head_sha == head and snapshot.repo == REPO and snapshot.number == 7
            by_path = {f.path: f for f in snapshot.files}
            modified = by_path[".github/workflows/w3.yml"]
            # The base is the head with the patch undone: no second contents call.
            assert modified.base_text == workflow() and modified.head_text == workflow(
                silenced=True)
            assert by_path[".github/workflows/added.yml"].base_text is None
            assert by_path[".github/workflows/added.yml"].head_text == workflow()
            assert by_path[".github/workflows/removed.yml"].head_text is None
            assert by_path[".github/workflows/removed.yml"].base_text == workflow()
            assert by_path["docs/page_000.md"].head_text is None

    run(scenario())
    # 127 files, all with patches: one comparison instead of two pages of list-files.
    assert fake.count("pulls/list-files") == 0
    compare = sole(fake.calls_to("repos/compare-commits-with-basehead"))
    assert compare.path.endswith(f"/compare/{fake.state.pulls[(REPO, 7)].base_sha}...{head}")
    # Only the five modified workflows need their head text (added/removed come from the
    # patch, docs are out of scope), all in one GraphQL query, with no contents call.
    assert fake.count("repos/get-content") == 0
    assert fetched_texts(fake) == {(f".github/workflows/w{i}.yml", head) for i in range(5)}
    assert fake.violations == []


def fetched_texts(fake: FakeGitHub) -> set[tuple[str, str]]:
    """(path, revision) of every file asked for, over GraphQL or the contents API
    (directory listings for the repository view left out)."""
    asked = {(c.path.split("/contents/")[1], c.query["ref"])
             for c in fake.calls_to("repos/get-content")}
    for call in fake.calls_to("graphql"):
        answered = call.response["data"]["repository"]
        for name, value in call.body["variables"].items():
            found = answered.get(f"o{name[1:]}") if name.startswith("e") else None
            if name.startswith("e") and (found or {}).get("__typename") != "Tree":
                rev, _, path = value.partition(":")
                asked.add((path, rev))
    return asked


def test_missing_patch_and_renamed_file_fetch_both_sides() -> None:
    fake = new_fake()
    head = push(fake, 8, {}, tag="h1")
    pr = fake.state.pulls[(REPO, 8)]
    fake.add_file(REPO, ".github/workflows/old.yml", workflow(), ref=pr.base_sha)
    fake.add_file(REPO, ".github/workflows/new.yml", workflow(silenced=True), ref=head)
    fake.add_file(REPO, ".github/workflows/big.yml", workflow(), ref=pr.base_sha)
    fake.add_file(REPO, ".github/workflows/big.yml", workflow(silenced=True), ref=head)
    pr.files = [
        file_entry(".github/workflows/new.yml", workflow(), workflow(silenced=True),
                   previous=".github/workflows/old.yml", keep_patch=False),
        PullFile(".github/workflows/big.yml", None, additions=5000),
    ]

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            snapshot = await app.run(fetch_snapshot(OWNER, NAME, 8, wants_contents=in_scope))
            renamed, big = snapshot.files
            assert renamed.previous_path == ".github/workflows/old.yml"
            assert renamed.base_text == workflow()
            assert renamed.head_text == workflow(silenced=True)
            assert big.patch_missing and big.base_text == workflow()
            # Rules still see the change: hunks are synthesized from the two texts.
            assert any("continue-on-error" in line.text for line in big.added_lines)

    run(scenario())
    # A file without a patch: the comparison cannot stand in, list-files is read.
    assert fake.count("repos/compare-commits-with-basehead") == 1
    assert fake.count("pulls/list-files") == 1
    assert fetched_texts(fake) == {
        (".github/workflows/new.yml", head), (".github/workflows/old.yml", pr.base_sha),
        (".github/workflows/big.yml", head), (".github/workflows/big.yml", pr.base_sha),
    }
    assert fake.violations == []


def test_text_cap_and_binary_become_notices() -> None:
    fake = new_fake()
    push(fake, 9, {".github/workflows/huge.yml": ("a: 1\n", "a: 2\n" + "#" * 5000 + "\n"),
                   ".github/workflows/bin.yml": ("x\n", "x\n\0y\n")}, tag="h1")

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            snapshot = await app.run(
                fetch_snapshot(OWNER, NAME, 9, wants_contents=in_scope, text_cap=1024)
            )
            problems = dict(snapshot.notices)
            assert "larger than 1 KiB" in problems[".github/workflows/huge.yml"]
            assert problems[".github/workflows/bin.yml"] == "binary file"
            assert all(f.head_text is None for f in snapshot.files)

    run(scenario())
    assert fake.violations == []


def test_config_comes_from_the_default_branch_never_the_head() -> None:
    fake = new_fake()
    head = push(fake, 10, {".github/ci-stability.yml": ("fail_on: error\n", "rules: {}\n")},
                tag="h1")
    fake.add_file(REPO, ".github/ci-stability.yml", "fail_on: warning\n")

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            assert await app.run(fetch_config(OWNER, NAME, "main")) == "fail_on: warning\n"
            fake.state.repos[REPO].files["main"].clear()
            assert await app.run(fetch_config(OWNER, NAME, "main")) is None

    run(scenario())
    assert [c.query["ref"] for c in fake.calls_to("repos/get-content")] == ["main", "main"]
    assert head not in {c.query["ref"] for c in fake.calls_to("repos/get-content")}
    assert fake.violations == []


def test_githubs_3000_file_cap_is_reported_not_hidden() -> None:
    fake = new_fake()
    fake.add_pull(REPO, 11, files=[PullFile(f"src/f{i}.py", "@@ -1 +1 @@\n-a\n+b")
                                   for i in range(3005)])

    async def scenario() -> None:
        async with fake, app_side(fake) as app:
            snapshot = await app.run(fetch_snapshot(OWNER, NAME, 11, wants_contents=in_scope))
            assert len(snapshot.files) == 3000
            assert snapshot.notices == (
                (None, "GitHub lists only the first 3000 of 3005 changed files; the rest "
                       "were not reviewed"),)

    run(scenario())
    assert fake.count("pulls/list-files") == 30 and fake.count("repos/get-content") == 0
