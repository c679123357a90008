from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.diff import parse_file_patch, parse_unified_diff
from bot.core.snapshot import LineKind

GIT_DIFF = """\
diff --git a/tests/evals/gsm8k/configs/A.yaml b/tests/evals/gsm8k/configs/A.yaml
index 1111111..2222222 100644
--- a/tests/evals/gsm8k/configs/A.yaml
+++ b/tests/evals/gsm8k/configs/A.yaml
@@ -18,3 +18,4 @@ server_args: >-
 env:
+  PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True"
   VLLM_LOGGING_LEVEL: "DEBUG"
   VLLM_USE_V2_MODEL_RUNNER: "1"
diff --git a/old name.py b/new name.py
similarity index 90%
rename from old name.py
rename to new name.py
--- a/old name.py
+++ b/new name.py
@@ -1 +1 @@
-x = 1
+x = 2
\\ No newline at end of file
diff --git a/img.png b/img.png
new file mode 100644
index 0000000..3333333
Binary files /dev/null and b/img.png differ
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-a
-b
"""


def test_git_diff_sections_statuses_and_line_numbers() -> None:
    patches = parse_unified_diff(GIT_DIFF)
    assert [(p.path, p.status) for p in patches] == [
        ("tests/evals/gsm8k/configs/A.yaml", "modified"),
        ("new name.py", "renamed"),
        ("img.png", "added"),
        ("gone.txt", "removed"),
    ]
    hunk = patches[0].hunks[0]
    assert hunk.section == "server_args: >-"
    added = [(line.new_no, line.text) for line in hunk.lines if line.kind is LineKind.ADDED]
    assert added == [(19, '  PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True"')]
    assert patches[1].previous_path == "old name.py"
    assert patches[2].binary and not patches[2].hunks
    assert all(p.error is None for p in patches)


def test_format_patch_mail_and_signature_are_ignored() -> None:
    mail = (
        "From 123 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] [CI] Fix\n\n---\n a | 1 +\n\n"
        "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1,2 @@\n x\n+y\n-- \n2.39.5\n"
    )
    (patch,) = parse_unified_diff(mail)
    assert patch.error is None
    assert [line.text for line in patch.hunks[0].added] == ["y"]


def test_plain_diff_u_without_git_header() -> None:
    text = "--- a.yml\t2024-01-01\n+++ b.yml\t2024-01-02\n@@ -1 +1 @@\n-a: 1\n+a: 2\n"
    (patch,) = parse_unified_diff(text)
    assert patch.path == "b.yml" and patch.previous_path == "a.yml"


def test_truncated_hunk_keeps_lines_and_reports() -> None:
    hunks, error = parse_file_patch("@@ -1,5 +1,5 @@\n a\n-b\n+c\n")
    assert error is not None and "truncated" in error
    assert [line.text for line in hunks[0].added] == ["c"]


def test_malformed_header_is_an_error_not_an_exception() -> None:
    hunks, error = parse_file_patch("@@ nonsense @@\n+x\n")
    assert hunks == [] and error is not None and "malformed" in error


def test_one_bad_file_does_not_hide_the_next() -> None:
    text = (
        "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n"
        "diff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-1\n+2\n"
    )
    x, y = parse_unified_diff(text)
    assert x.error and not y.error and y.hunks[0].added[0].text == "2"


def test_quoted_non_ascii_path() -> None:
    text = ('diff --git "a/t\\303\\251st.py" "b/t\\303\\251st.py"\n'
            '--- "a/t\\303\\251st.py"\n+++ "b/t\\303\\251st.py"\n@@ -1 +1 @@\n-a\n+b\n')
    (patch,) = parse_unified_diff(text)
    assert patch.path == "tést.py"


_diff_line = st.one_of(
    st.text(max_size=40).map(lambda t: t.replace("\n", "")),
    st.sampled_from(["@@ -1,2 +1,2 @@", "@@ -0,0 +1 @@", "--- a/x", "+++ b/x",
                     "diff --git a/x b/x", "+added", "-removed", " ctx", "\\ No newline",
                     "Binary files a/x and b/x differ", "rename from q", "@@ -1 +1 @@ f"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_diff_line, max_size=40))
def test_parser_never_raises_and_numbers_are_consistent(lines: list[str]) -> None:
    for patch in parse_unified_diff("\n".join(lines)):
        for hunk in patch.hunks:
            news = [line.new_no for line in hunk.lines if line.new_no is not None]
            olds = [line.old_no for line in hunk.lines if line.old_no is not None]
            assert news == sorted(news) and olds == sorted(olds)
            assert len(news) <= hunk.new_count and len(olds) <= hunk.old_count


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_file_patch_never_raises(text: str) -> None:
    parse_file_patch(text)
