"""`--format json` is the text `json.dumps(indent=2, ensure_ascii=False)` writes, though
orjson writes it: every escape and every shape, and the fallback where orjson refuses."""

from __future__ import annotations

import json
import random

from hypothesis import given
from hypothesis import strategies as st

from bot.core.findings import Evidence, Finding, Severity
from bot.core.report import FileError, Report, Suppressed
from bot.render import jsonout

# Control characters, the JSON escapes, non-ASCII, line separators, astral planes.
_HOSTILE = "".join(map(chr, range(0x20))) + '"\\/\x7f\x85\xa0é€\u2028\u2029\ufeff\U0001f600'


def _report(text: str, line: int | None = 3) -> Report:
    finding = Finding("silenced-test", Severity.ERROR, f"job {text} may fail", f"ci/{text}.yml",
                      line, key=text, evidence=(Evidence(text, f"https://x/{text}"),))
    return Report(
        findings=(finding,), suppressed=(Suppressed(finding, text, "inline"),),
        errors=(FileError(text, text),), in_scope=bool(text), title=text,
    )


def _python_json(report: Report) -> str:
    return json.dumps(jsonout.report_dict(report), indent=2, ensure_ascii=False) + "\n"


@given(st.text(alphabet=st.sampled_from(_HOSTILE + "ab \n\t"), max_size=40))
def test_same_text_as_json_dumps(text: str) -> None:
    assert jsonout.render(_report(text)) == _python_json(_report(text))


def test_every_hostile_character_and_empty_report() -> None:
    rng = random.Random(8)
    for _ in range(200):
        text = "".join(rng.choice(_HOSTILE) for _ in range(rng.randint(0, 30)))
        assert jsonout.render(_report(text, None)) == _python_json(_report(text, None))
    assert jsonout.render(Report(findings=())) == _python_json(Report(findings=()))


def test_what_orjson_refuses_is_written_by_json() -> None:
    lone = "\ud800"  # a lone surrogate (from a `\ud800` escape in PR JSON)
    huge = _report("x", 2**70)  # over 64 bits
    assert jsonout.render(_report(lone)) == _python_json(_report(lone))
    assert jsonout.render(huge) == _python_json(huge)
    assert '"line": 1180591620717411303424' in jsonout.render(huge)
