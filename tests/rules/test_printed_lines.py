"""rules.analysis.lines.printed: a shell line that only prints a command."""

from rules.analysis.lines import printed


def _lines(*texts: str) -> dict[int, str]:
    return dict(enumerate(texts, start=1))


def test_an_echo_line_and_its_continuations_are_printed() -> None:
    lines = _lines('echo PT_HPU_LAZY_MODE=1 \\', "  pytest -v tests/a.py \\", "  --tp 2",
                   "pytest -v tests/a.py --tp 2")
    assert [printed(lines, n) for n in (1, 2, 3, 4)] == [True, True, True, False]


def test_a_commented_out_echo_is_read_without_its_comment_markers() -> None:
    lines = _lines('# echo "run" \\', "#   pytest tests/a.py", "# pytest tests/b.py")
    assert [printed(lines, n) for n in (1, 2, 3)] == [True, True, False]


def test_a_live_line_does_not_continue_a_commented_one() -> None:
    lines = _lines('echo "run" \\', "# pytest tests/a.py", 'printf "%s\\n" x')
    assert not printed(lines, 2)
    assert printed(lines, 3)


def test_words_that_only_start_with_echo_are_not_printing() -> None:
    assert not printed(_lines("echo_server --port 8000"), 1)
    assert not printed(_lines("./echo-test.sh"), 1)
