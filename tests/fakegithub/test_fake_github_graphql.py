"""The fake's GraphQL endpoint and compare API, driven by the App's real client."""

from __future__ import annotations

from typing import Any

from bot.github.calls import ApiCall, graphql
from bot.github.compare import compare_call
from bot.github.graphql import objects_query
from tests.github.kit import NAME, OWNER, REPO, app_side, new_fake, push, run, workflow

from .graphql_api import TEXT_LIMIT


def _ask(fake: Any, *calls: ApiCall, **options: Any) -> list[Any]:
    answers: list[Any] = []

    async def scenario() -> None:
        async with fake, app_side(fake, **options) as app:
            for call in calls:
                answers.append(await app.driver.call(call))

    run(scenario())
    return answers


def _objects(*expressions: str) -> ApiCall:
    variables = {"owner": OWNER, "name": NAME}
    variables.update({f"e{i}": e for i, e in enumerate(expressions)})
    return graphql(objects_query(len(expressions)), variables)


def test_blobs_trees_missing_paths_binary_and_truncated_text() -> None:
    fake = new_fake()
    fake.add_file(REPO, "ci/a.yml", "a: 1\n", ref="main")
    fake.add_file(REPO, "ci/b.bin", b"\x00\x01", ref="main")
    fake.add_file(REPO, "ci/sub/c.txt", "c\n", ref="main")
    fake.add_file(REPO, "big.txt", "x" * (TEXT_LIMIT + 10), ref="main")
    answer = _ask(fake, _objects("main:ci/a.yml", "main:ci", "main:nope", "nobranch:ci/a.yml",
                                 "main:ci/b.bin", "main:big.txt"))[0]
    assert answer.status == 200 and "errors" not in answer.data
    got = answer.data["data"]["repository"]
    assert got["o0"] == {"__typename": "Blob", "byteSize": 5, "isBinary": False,
                         "isTruncated": False, "text": "a: 1\n"}
    assert got["o1"]["__typename"] == "Tree"
    assert got["o1"]["entries"] == [{"name": "a.yml", "type": "blob"},
                                    {"name": "b.bin", "type": "blob"},
                                    {"name": "sub", "type": "tree"}]
    assert got["o2"] is None and got["o3"] is None
    assert got["o4"]["isBinary"] is True and got["o4"]["text"] is None
    assert got["o5"]["isTruncated"] is True and len(got["o5"]["text"]) == TEXT_LIMIT
    assert answer.header("x-ratelimit-resource") == "graphql"
    assert fake.calls_to("graphql")[0].is_write is False


def test_errors_in_githubs_shape_with_http_200() -> None:
    fake = new_fake()
    unknown_repo = graphql(objects_query(1), {"owner": OWNER, "name": "gone", "e0": "main:x"})
    bad_field = graphql("query { repository(owner: \"octo-org\", name: \"ml-repo\") "
                        "{ object(expression: \"main:x\") { ... on Blob { colour } } } }", {})
    broken = graphql("query { repository(", {})
    missing_variable = graphql(objects_query(1), {"owner": OWNER, "name": NAME})
    answers = _ask(fake, unknown_repo, bad_field, broken, missing_variable)
    assert all(a.status == 200 for a in answers)
    gone = answers[0].data
    assert gone["data"] == {"repository": None}
    assert gone["errors"][0]["type"] == "NOT_FOUND"
    assert gone["errors"][0]["path"] == ["repository"]
    assert "Could not resolve to a Repository with the name 'octo-org/gone'" in (
        gone["errors"][0]["message"])
    for answer in answers[1:]:
        assert "data" not in answer.data and answer.data["errors"][0]["message"]
    assert "colour" in answers[1].data["errors"][0]["message"]


def test_unauthenticated_rate_limited_and_no_contents_permission() -> None:
    fake = new_fake()
    fake.set_rate_limit("graphql", remaining=0, reset_in=3600)
    limited = _ask(fake, _objects("main:x"))[0]
    assert limited.status == 200 and limited.data["errors"][0]["type"] == "RATE_LIMITED"

    fake = new_fake()
    fake.state.installations[next(iter(fake.state.installations))].permissions.pop(
        "contents", None)
    forbidden = _ask(fake, _objects("main:x"))[0]
    assert forbidden.data["errors"][0]["type"] == "FORBIDDEN"
    assert forbidden.data["data"] == {"repository": None}


def test_compare_serves_the_prs_files_on_the_first_page_only() -> None:
    fake = new_fake()
    files = {f".github/workflows/w{i}.yml": (workflow(), workflow(silenced=True))
             for i in range(3)}
    head = push(fake, 7, files, tag="h1")
    base = fake.state.pulls[(REPO, 7)].base_sha
    call = compare_call(OWNER, NAME, base, head)
    second_page = ApiCall("GET", call.url, {"per_page": 1, "page": 2},
                          operation=call.operation)
    unknown = compare_call(OWNER, NAME, base, "f" * 40)
    first, later, missing = _ask(fake, call, second_page, unknown)
    assert first.status == 200 and first.data["status"] == "ahead"
    assert [f["filename"] for f in first.data["files"]] == sorted(files)
    assert all("patch" in f for f in first.data["files"])
    assert len(first.data["commits"]) == 1
    assert "files" not in later.data
    assert missing.status == 404
    assert fake.violations == [] and fake.response_problems == []
