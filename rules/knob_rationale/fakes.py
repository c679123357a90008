"""Values on the fakes a unit test builds: `SimpleNamespace(stall_timeout_s=600.0)`,
`MagicMock(max_retries=3)`. They shape the test's stand-in object; nothing in CI runs
with them, so there is no retune to explain.
"""

from __future__ import annotations

import re

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import Setting

_FAKE_RE = re.compile(
    r"\b(?:SimpleNamespace|Namespace|MagicMock|Mock|NonCallableMock|AsyncMock|PropertyMock|"
    r"create_autospec|namedtuple)\(")
_TEST_FILE_RE = re.compile(r"(?:^|/)tests?/(?:.*/)?[^/]*\.py$|(?:^|/)test_[^/]*\.py$")
_MAX_LINE = 2000


def on_a_fake(changed: ChangedFile, setting: Setting) -> bool:
    """The setting is a keyword of a fake object built on its own line in a Python test."""
    if not _TEST_FILE_RE.search(changed.path):
        return False
    text = changed.head_line(setting.line) or ""
    match = _FAKE_RE.search(text[:_MAX_LINE])
    if match is None:
        return False
    name = re.search(rf"\b{re.escape(setting.raw)}\s*=", text[match.end():_MAX_LINE])
    return name is not None
