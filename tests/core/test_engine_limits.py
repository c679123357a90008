"""One review's caps: files and bytes, in-scope files first, a notice naming the rest."""

from __future__ import annotations

from bot.core.config import Config
from bot.core.engine import ReviewLimits, review
from bot.sources.patch import snapshot_from_patch
from rules import ALL_RULES


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
