"""The README's generated tables are current (`make readme` rewrites them)."""

from __future__ import annotations

from pathlib import Path

from bot.cli.readme import EVAL, between, eval_tables
from bot.cli.rules import rule_table_markdown
from rules import ALL_RULES

README = Path(__file__).resolve().parents[2] / "README.md"
START, END = "<!-- rules-table:start -->", "<!-- rules-table:end -->"


def test_readme_rule_table_matches_registry() -> None:
    text = README.read_text(encoding="utf-8")
    table = text[text.index(START) + len(START): text.index(END)].strip()
    assert table == rule_table_markdown().strip(), "run `make readme`"


def test_every_rule_documents_why_flags_prefer() -> None:
    for rule in ALL_RULES:
        for section in ("Why it destabilizes CI", "Flags", "Prefer"):
            assert type(rule).doc_section(section), (rule.id, section)
        assert type(rule).summary() and "PLACEHOLDER" not in type(rule).docs()


def test_readme_eval_tables_match_the_corpus() -> None:
    # Runs the engine on the whole labeled corpus (a few seconds): the published
    # precision and recall are what the code measures now.
    text = README.read_text(encoding="utf-8")
    assert between(text, EVAL).strip() == eval_tables().strip(), "run `make readme`"
