"""The JSON Schema of `.github/ci-stability.yml`, for editors (yaml-language-server).

Built from the same registry the parser validates against, so a new rule or option
appears in both. The schema is a little stricter than the parser where JSON Schema
cannot say what the parser accepts (severities in any letter case) and looser where
it cannot check what the parser does (glob syntax, regular expressions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.core.config import ON_ERROR, RuleOptionSpecs
from bot.core.limits import HARD_MAX_BYTES, HARD_MAX_FILES, MIN_BYTES
from bot.core.surfaces import SURFACES

SCHEMA_ID = ("https://raw.githubusercontent.com/ci-stability-bot/ci-stability-bot/main/"
             "schema/ci-stability.schema.json")
_TEXT: dict[str, Any] = {"type": "string", "pattern": "\\S"}
_TEXTS: dict[str, Any] = {"oneOf": [_TEXT, {"type": "array", "items": _TEXT}]}
_SEVERITY: dict[str, Any] = {"enum": ["error", "warning", "notice"]}


def _option(default: Any) -> dict[str, Any]:
    if isinstance(default, tuple | list):
        return _TEXTS
    if isinstance(default, bool):
        return {"type": "boolean"}
    if isinstance(default, int):
        return {"type": "integer", "minimum": 0}
    return _TEXT


def _rule(options: Mapping[str, Any]) -> dict[str, Any]:
    settings = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "enabled": {"type": "boolean"},
            "severity": _SEVERITY,
            "options": {
                "type": "object",
                "additionalProperties": False,
                "properties": {name: _option(value) for name, value in options.items()},
            },
        },
    }
    return {"oneOf": [{"type": "boolean"}, _SEVERITY, settings]}


def config_schema(specs: RuleOptionSpecs) -> dict[str, Any]:
    """The schema for a config validated against `specs` (rule id → option defaults)."""
    rule_ids = sorted(specs)
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": SCHEMA_ID,
        "title": "ci-stability-bot repository configuration (.github/ci-stability.yml)",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "version": {"enum": [1]},
            "fail_on": {"enum": ["error", "warning", "notice", "none"],
                        "description": "Which findings make the check fail."},
            "min_confidence": {"enum": ["high", "medium"],
                               "description": "Report only findings at least this sure "
                                              "(medium ones go to the summary, collapsed)."},
            "on_error": {"enum": list(ON_ERROR),
                         "description": "The check's conclusion when the review crashes."},
            "rules": {
                "type": "object",
                "additionalProperties": False,
                "properties": {rule: _rule(specs[rule]) for rule in rule_ids},
            },
            "surfaces": {
                "type": "object",
                "additionalProperties": False,
                "properties": {name: _TEXTS for name in SURFACES},
            },
            "knobs": _TEXTS,
            "extra_knobs": _TEXTS,
            "dedup_heading": _TEXT,
            "ignore": {"type": "array", "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["rule", "reason"],
                "properties": {"rule": {"enum": rule_ids}, "paths": _TEXTS, "reason": _TEXT},
            }},
            "review_drafts": {"type": "boolean"},
            "limits": {
                "type": "object",
                "additionalProperties": False,
                "description": "Read at most this much of a PR (the operator's ceiling "
                               "still applies); in-scope files first.",
                "properties": {
                    "max_files": {"type": "integer", "minimum": 1, "maximum": HARD_MAX_FILES},
                    "max_bytes": {"type": "integer", "minimum": MIN_BYTES,
                                  "maximum": HARD_MAX_BYTES},
                },
            },
            "advisor": {"type": "boolean",
                        "description": "Let the LLM advisor explain failures (if configured)."},
        },
    }
