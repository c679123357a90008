"""Substring pre-checks only skip work that could not have found anything.

Rules skip a file (or a hunk side) when its text lacks every word their patterns need.
For random files, whenever a pre-check would skip, the rule's full per-file check run
anyway finds nothing.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.core.config import Config
from bot.core.engine import classify_snapshot
from bot.core.snapshot import ChangedFile
from rules.analysis.lines.hunk_sides import sides
from rules.block_scalar_comment import BlockScalarComment, _norm
from rules.parallel_state_patch import _TRIGGERS
from rules.runtime_download import RuntimeDownload
from rules.runtime_download import _FileCheck as DownloadCheck
from rules.runtime_download.detect import FETCH_WORDS as _FETCH_WORDS
from rules.silenced_test import _hits, _known_text
from rules.silenced_test.line_structure import ANY_HINT, SilencingView
from rules.threshold_loosening.gates import _gates, _may_gate
from tests.conftest import make_snapshot

LINE = st.one_of(st.sampled_from([
    "@pytest.mark.skip(reason='flaky')", "    pytest.skip('x')", "  continue-on-error: true",
    "  soft_fail: true", "  if: false", "  - pytest tests/ --ignore=tests/a.py",
    "  - pytest -k 'not slow'", "  --reruns 3", "SKIP_TESTS = [", '    "test_a",', "]",
    "# def test_old():", "  # comment", "server_args: >-", "  --flag 1  # why",
    "  run: wget https://example.com/data.tar", "ds = load_dataset('x')",
    "parallel_state._EP = SimpleNamespace(world_size=1)", "mock.patch('a.b._TP', None)",
    "assert score >= 0.8", "self.assertGreater(acc, 0.7)", "def test_x():", "x = 1",
    "  steps:", "    - name: t", "      run: pytest", "", "  retry:", "    automatic: true",
]), st.text(alphabet="abc -_:#=()[]'\"kK/.\t", max_size=30))
LINES = st.lists(LINE, max_size=20)
PATHS = st.sampled_from([
    "tests/test_x.py", "test/registered/cpu/test_y.py", ".github/workflows/ci.yml",
    ".buildkite/test-pipeline.yaml", "tests/evals/gsm8k/configs/m.yaml", "ci/run.sh",
])


def _changed(path: str, base: list[str], head: list[str], patch_only: bool) -> ChangedFile:
    snapshot = make_snapshot([{"path": path, "base": "\n".join(base), "head": "\n".join(head)}],
                             patch_only=patch_only)
    return classify_snapshot(snapshot, Config()).files[0]


@settings(max_examples=300, deadline=None)
@given(PATHS, LINES, LINES, st.booleans())
def test_skipped_files_have_nothing_to_find(
    path: str, base: list[str], head: list[str], patch_only: bool
) -> None:
    changed = _changed(path, base, head, patch_only)
    added = changed.added_text

    known = _known_text(changed)
    if "#" not in added and not any(hint in known.lower() for hint in ANY_HINT):
        assert list(_hits(SilencingView(changed, known, known.lower(), Counter(), False))) == []

    if not any(word in added for word in _FETCH_WORDS):
        assert list(DownloadCheck(RuntimeDownload(), changed).run()) == []

    # The per-line trigger test parallel-state-patch always had, now one search.
    assert any(trigger in added for trigger in _TRIGGERS) == any(
        any(trigger in line.text for trigger in _TRIGGERS) for line in changed.added_lines)

    if "#" not in added:
        arg_keys = frozenset(_norm(k) for k in BlockScalarComment.options["arg_keys"])
        assert list(BlockScalarComment()._check_file(changed, arg_keys)) == []

    for hunk in changed.hunks:
        for side in sides(hunk):
            if not _may_gate(side):
                assert _gates(side) == []
