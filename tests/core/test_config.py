from __future__ import annotations

import pytest

from bot.core.config import ConfigError, parse_config
from bot.core.findings import Confidence, Severity
from rules import option_specs

SPECS = option_specs()


def test_full_config_round_trip() -> None:
    config = parse_config(
        """
version: 1
fail_on: warning
rules:
  knob-rationale: false
  runtime-download: warning
  block-scalar-comment:
    severity: warning
surfaces:
  eval-config: ["benchmarks/accuracy/**"]
extra_knobs: [my_knob]
dedup_heading: "(?im)^## Related work"
ignore:
  - rule: silenced-test
    paths: ["test/legacy/**"]
    reason: legacy suite, tracked in #123
review_drafts: true
""",
        SPECS,
    )
    assert config.fail_on is Severity.WARNING
    assert not config.settings("knob-rationale").enabled
    assert config.settings("runtime-download").severity is Severity.WARNING
    assert config.settings("block-scalar-comment").severity is Severity.WARNING
    assert config.surfaces["eval-config"] == ("benchmarks/accuracy/**",)
    assert "my-knob" in config.knobs and "mem-fraction-static" in config.knobs
    assert config.ignores[0].paths == ("test/legacy/**",)
    assert config.review_drafts


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("rulez: {}\n", ":1: `rulez`: unknown key (did you mean `rules`?)"),
        ("rules:\n  knob-rational: false\n", ":2: `rules.knob-rational`: unknown rule"),
        ("rules:\n  knob-rationale: loud\n", "unknown severity 'loud'"),
        ("fail_on: sometimes\n", "`fail_on`"),
        ("surfaces:\n  gpu-test: [a]\n", "unknown surface"),
        ("dedup_heading: '(('\n", "not a valid regular expression"),
        ("ignore:\n  - rule: silenced-test\n", "`reason` is required"),
        ("rules:\n  knob-rationale:\n    enabled: maybe\n", "expected true or false"),
        ("a: [\n", "not valid YAML"),
        ("- 1\n", "expected a mapping"),
    ],
)
def test_errors_name_key_and_line(text: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, SPECS)
    assert fragment in str(info.value)
    assert str(info.value).startswith(".github/ci-stability.yml")


def test_yaml_alias_bomb_is_refused_quickly() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)},"
        f" *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8)
    ) + "extra_knobs: *i\n"
    with pytest.raises(ConfigError):
        parse_config(bomb, SPECS)


def test_oversized_config_is_refused() -> None:
    with pytest.raises(ConfigError, match="larger than"):
        parse_config("# x\n" * 200_000, SPECS)


def test_empty_file_is_default() -> None:
    assert parse_config("", SPECS).fail_on is Severity.ERROR


def test_min_confidence_is_parsed_and_checked() -> None:
    assert parse_config("min_confidence: high\n", {}).min_confidence is Confidence.HIGH
    assert parse_config("version: 1\n", {}).min_confidence is Confidence.MEDIUM
    with pytest.raises(ConfigError, match="min_confidence"):
        parse_config("min_confidence: sure\n", {})
