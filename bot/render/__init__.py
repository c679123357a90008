"""Renderers: pure functions from a Report (and the rule registry) to text."""

from __future__ import annotations

FORMATS = ("text", "json", "markdown", "sarif", "github")
