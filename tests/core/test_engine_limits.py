"""One review's caps: files and bytes, in-scope files first, a notice naming the rest;
the repository's `limits:` lowers them, never past the operator's ceiling."""

from __future__ import annotations

import pytest

from bot.core.config import Config, ConfigError, parse_config
from bot.core.engine import ReviewLimits, review
from bot.core.limits import HARD_MAX_BYTES, HARD_MAX_FILES, LimitsRequest, effective_limits
from bot.sources.patch import snapshot_from_patch
from rules import ALL_RULES, option_specs


def _patch(paths: list[str], lines: int = 3) -> bytes:
    out = []
    for path in paths:
        body = "".join(f"+line {i}\n" for i in range(lines))
        out.append(f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n"
                   f"+++ b/{path}\n@@ -0,0 +1,{lines} @@\n{body}")
    return "".join(out).encode()


def test_over_the_file_cap_in_scope_files_are_kept_and_the_rest_named() -> None:
    paths = [f"docs/page{i}.md" for i in range(5)] + [".github/workflows/ci.yml"]
    report = review(snapshot_from_patch(_patch(paths)), Config(), ALL_RULES,
                    limits=ReviewLimits(max_files=2))
    assert report.files_total == 6 and report.files_in_scope == 1
    notices = [e.message for e in report.errors if e.path is None]
    assert len(notices) == 1
    assert "4 file(s) not reviewed" in notices[0]
    for skipped in ("docs/page1.md", "docs/page4.md"):
        assert f"`{skipped}`" in notices[0]
    assert "`docs/page0.md`" not in notices[0] and ".github/workflows" not in notices[0]


def test_over_the_byte_cap_files_are_skipped_never_silently() -> None:
    paths = [".github/workflows/a.yml", ".github/workflows/b.yml"]
    report = review(snapshot_from_patch(_patch(paths, lines=200)), Config(), ALL_RULES,
                    limits=ReviewLimits(max_bytes=1500))
    notices = [e.message for e in report.errors if e.path is None]
    assert len(notices) == 1 and "`.github/workflows/b.yml`" in notices[0]
    assert report.files_in_scope == 1


def test_within_the_caps_nothing_is_said() -> None:
    report = review(snapshot_from_patch(_patch(["a.py", "b.py"])), Config(), ALL_RULES)
    assert [e for e in report.errors if e.path is None] == []


def test_files_a_source_left_out_are_named_with_the_engines_own() -> None:
    paths = [f"docs/page{i}.md" for i in range(4)] + [".github/workflows/ci.yml"]
    limits = ReviewLimits(max_files=3)
    snapshot = snapshot_from_patch(_patch(paths), limits=limits,
                                   wanted=lambda path: path.startswith(".github/"))
    assert len(snapshot.files) == 3 and snapshot.capped == ("docs/page2.md", "docs/page3.md")
    report = review(snapshot, Config(), ALL_RULES, limits=ReviewLimits(max_files=2))
    assert report.files_total == 5
    (notice,) = [e.message for e in report.errors if e.path is None]
    assert "Review capped at 2 files" in notice and "3 file(s) not reviewed" in notice
    for skipped in ("docs/page1.md", "docs/page2.md", "docs/page3.md"):
        assert f"`{skipped}`" in notice


def test_a_repository_lowers_the_caps_but_never_raises_them() -> None:
    ceiling = ReviewLimits(max_files=100, max_bytes=2**20)
    assert effective_limits(None, ceiling) == (ceiling, None)
    lower, note = effective_limits(LimitsRequest(max_files=10), ceiling)
    assert lower == ReviewLimits(10, 2**20) and note is None
    capped, note = effective_limits(LimitsRequest(max_files=5000, max_bytes=2**30), ceiling)
    assert capped == ceiling
    assert note is not None and "max_files 5000" in note and f"max_bytes {2**30}" in note


@pytest.mark.parametrize(("text", "expected"), [
    ("limits:\n  max_files: 300\n", LimitsRequest(max_files=300)),
    ("limits:\n  max_bytes: 1048576\n  max_files: 1\n", LimitsRequest(1, 1048576)),
    ("limits: {}\n", LimitsRequest()),
])
def test_the_config_reads_limits(text: str, expected: LimitsRequest) -> None:
    assert parse_config(text, option_specs()).limits == expected


@pytest.mark.parametrize(("text", "where"), [
    ("limits:\n  max_files: 0\n", "limits.max_files"),
    ("limits:\n  max_files: -3\n", "limits.max_files"),
    ("limits:\n  max_files: 1.5\n", "limits.max_files"),
    ("limits:\n  max_bytes: 1000\n", "limits.max_bytes"),
    (f"limits:\n  max_bytes: {HARD_MAX_BYTES + 1}\n", "limits.max_bytes"),
    (f"limits:\n  max_files: {HARD_MAX_FILES + 1}\n", "limits.max_files"),
    ("limits:\n  max_lines: 3\n", "limits.max_lines"),
    ("limits: [1, 2]\n", "limits"),
])
def test_bad_limits_are_config_errors_naming_the_key(text: str, where: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, option_specs())
    assert f"`{where}`:" in str(caught.value)
