"""Streaming a log into the extractor: size cap, async hand-over, mention collection."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator

from bot.evidence.extract import RootCause
from bot.evidence.logstream import MentionCollector, analyse_chunks, analyse_read
from tests.evidence.factories import GLM_CONFIG, pcp_oom_log


async def _chunks(data: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start:start + size]


def test_async_chunks_give_the_same_answer_as_a_file() -> None:
    log = pcp_oom_log()
    expected = analyse_read(io.BytesIO(log).read)
    for size in (1, 7, 4096):
        found = asyncio.run(analyse_chunks(_chunks(log, size)))
        assert found == expected
    assert isinstance(expected.result, RootCause) and expected.result.category == "cuda-oom"
    assert GLM_CONFIG in expected.mentions
    fields = expected.job_fields()
    assert fields["category"] == "cuda-oom" and fields["log_note"] is None
    assert "Server failed to start" in fields["surface"]


def test_the_size_cap_stops_reading_and_says_so() -> None:
    filler = b"INFO nothing to see here\n" * 200_000  # ~5 MB before the failure
    log = filler + pcp_oom_log()
    pulled = 0

    async def counting() -> AsyncIterator[bytes]:
        nonlocal pulled
        async for chunk in _chunks(log, 64 * 1024):
            pulled += len(chunk)
            yield chunk

    analysis = asyncio.run(analyse_chunks(counting(), max_bytes=1024 * 1024))
    assert analysis.truncated and analysis.bytes_read == 1024 * 1024
    assert pulled < len(log)  # the download stopped early
    assert analysis.job_fields()["log_note"].endswith(
        "only the first 1048576 bytes of the log were read (the byte cap); "
        "the rest was not examined")


def test_by_default_nothing_is_capped() -> None:
    log = b"INFO nothing to see here\n" * 200_000 + pcp_oom_log()
    analysis = asyncio.run(analyse_chunks(_chunks(log, 64 * 1024)))
    assert not analysis.truncated and analysis.bytes_read == len(log)
    assert isinstance(analysis.result, RootCause) and analysis.result.category == "cuda-oom"


def test_no_root_cause_is_a_note_not_a_crash() -> None:
    analysis = analyse_read(io.BytesIO(b"\x00\x01\xff binary \x00\n" * 100).read)
    fields = analysis.job_fields()
    assert "category" not in fields and fields["log_note"].startswith("no root cause found")


def test_mentions_across_chunk_boundaries_and_the_budget() -> None:
    collector = MentionCollector(limit=3)
    text = (b"run tests/evals/gsm8k/test_gsm8k_correctness.py::test_x[GLM-5.2] now\n"
            b"/usr/lib/python3.11/site-packages/torch/nn/module.py noise\n"
            b"configs/a.yaml configs/b.yaml configs/c.yaml configs/d.yaml\n"
            b"FAILED tests/test_late.py::test_y - AssertionError\n")
    for start in range(0, len(text), 5):
        collector.feed(text[start:start + 5])
    found = collector.finish()
    assert found[0] == "tests/evals/gsm8k/test_gsm8k_correctness.py::test_x[GLM-5.2]"
    assert not any("site-packages" in m for m in found)
    assert "configs/c.yaml" not in found  # over the budget
    assert "tests/test_late.py::test_y" in found  # pytest verdicts are kept anyway
