"""docs/validation.md lists every rule exactly as the registry defines it."""

from __future__ import annotations

import re
from pathlib import Path

from django_sitemaps_plus.validation import RULES
from django_sitemaps_plus.validation.rules import rules_table

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_rules_table_in_docs_matches_the_registry():
    text = (DOCS / "validation.md").read_text()
    assert rules_table() in text, "regenerate the table in docs/validation.md (rules_table())"


def test_every_rule_id_is_documented_once():
    text = (DOCS / "validation.md").read_text()
    rows = re.findall(r"^\| (SM\d{3}) \|", text, flags=re.MULTILINE)
    assert sorted(rows) == sorted(RULES)


def test_rule_ids_are_well_formed_and_hints_are_one_line():
    for rule_id, rule in RULES.items():
        assert re.fullmatch(r"SM[1-9]\d{2}", rule_id)
        assert rule.hint and "\n" not in rule.hint
        assert rule.title and rule.example


def test_command_is_documented():
    text = (DOCS / "commands.md").read_text()
    for option in ("--format", "--fail-level", "--base-url", "--max-findings", "--ignore"):
        assert option in text
    assert "--no-follow" in text
