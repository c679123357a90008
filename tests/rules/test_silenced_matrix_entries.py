"""`says_taken_out`: where a PR says it takes a failing test out of a CI matrix."""

from __future__ import annotations

import pytest

from rules.silenced_test.matrix_entries import says_taken_out
from rules.silenced_test.silencing_detectors import SILENCE_REASON_RE


@pytest.mark.parametrize("body", [
    "The newly added case did not pass the test and has been temporarily\ntaken offline.",
    "qwen-longctx keeps failing on A3, so it is removed from the nightly for now.",
    "Disable the kimi entry until the driver regression is fixed.",
    "Take some unstable test cases offline: test_custom_op, hy3-preview.",
    "The case could not pass on the new image, so we took it out of the matrix.",
])
def test_a_short_description_taking_a_failing_test_out_covers_every_entry(body: str) -> None:
    assert says_taken_out("[CI] nightly update", body, SILENCE_REASON_RE).everywhere


@pytest.mark.parametrize("body", [
    "The Qwen2 checkpoint was retired upstream, so its nightly entry is removed.",
    "Move the long-context case to the weekly workflow.",
    "Rename the glm entry to match its config file name.",
    "Add the new DeepSeek V4 nightly entry.",
    "Remove the `tee` pipeline for logs, which will lead to hang issue.",
])
def test_maintenance_wording_takes_nothing_out(body: str) -> None:
    assert not says_taken_out("[CI] nightly update", body, SILENCE_REASON_RE)


def test_a_long_description_covers_only_the_entries_it_names() -> None:
    body = "\n\n".join([
        "This PR reorganises the nightly workflows of the A3 cluster into three files.",
        "The schedules of the weekly jobs move to Sunday so they do not overlap.",
        "The image tag is now read from one variable shared by every job.",
        "The runner labels follow the new naming of the cluster's node pools.",
        "The report upload step now keeps the artifacts for fourteen days.",
        "Also, the qwen_longctx case fails since the driver update and is temporarily removed.",
    ])
    found = says_taken_out("[CI] reorganise the nightly workflows", body, SILENCE_REASON_RE)
    assert not found.everywhere
    assert found.about(["qwen-longctx"]) and not found.about(["kimi-k2"])
