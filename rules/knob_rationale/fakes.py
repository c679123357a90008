"""Values on the fakes a unit test builds: `SimpleNamespace(stall_timeout_s=600.0)`,
`MagicMock(max_retries=3)`. They shape the test's stand-in object; nothing in CI runs
with them, so there is no retune to explain.

So are the values of the data a unit test writes out for the parser it tests
(`cfg.write_text(yaml.safe_dump({"models": {"a": {"max_model_len": 4096}}}))`): input
to a config loader under test, not a setting a CI job runs with. Only under a unit-test
directory: an e2e test's dumped config is what its server is started with.
"""

from __future__ import annotations

import re

from bot.core.snapshot import ChangedFile
from rules.analysis.knobs import Setting
from rules.analysis.lines import known_lines, openers

_FAKE_RE = re.compile(
    r"\b(?:SimpleNamespace|Namespace|MagicMock|Mock|NonCallableMock|AsyncMock|PropertyMock|"
    r"create_autospec|namedtuple)\(")
_TEST_FILE_RE = re.compile(r"(?:^|/)tests?/(?:.*/)?[^/]*\.py$|(?:^|/)test_[^/]*\.py$")
_MAX_LINE = 2000
_UNIT_DIR_RE = re.compile(r"(?:^|/)(?:ut|unit|unit_?tests?|unittests?)/")
# A serializer given the literal: `yaml.safe_dump({`, `json.dumps(`, `tomli_w.dump(`.
_DUMP_RE = re.compile(r"\b(?:yaml|json|toml|tomli_w|tomlkit)\.(?:safe_)?dumps?(?:_all)?\(")
_DEF_RE = re.compile(r"^\s*(?:async\s+)?def\s")
_MAX_WALK = 200


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


def fed_to_a_parser(changed: ChangedFile, setting: Setting) -> bool:
    """The setting is a value of a literal a Python unit test serializes (the literal
    opens inside the dump call's parentheses, within the setting's function)."""
    if not changed.path.endswith(".py") or _UNIT_DIR_RE.search(changed.path) is None:
        return False
    head = known_lines(changed)
    for _, text in openers(head, setting.line, _MAX_WALK):
        if _DEF_RE.match(text):
            return False
        if _DUMP_RE.search(text[:_MAX_LINE]):
            return True
    return False
