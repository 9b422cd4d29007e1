"""docs/validation.md lists every rule exactly as the registry defines it."""

from __future__ import annotations

import re
from pathlib import Path

from django_sitemaps_plus.validation import RULES, Source
from django_sitemaps_plus.validation.rules import rules_table
from tests.validation.test_validation_batch import ODDITIES

DOCS = Path(__file__).resolve().parents[2] / "docs"


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
        assert rule.element, f"{rule_id} says what it is about"


def test_command_is_documented():
    text = (DOCS / "commands.md").read_text()
    for option in ("--format", "--fail-level", "--base-url", "--max-findings", "--ignore"):
        assert option in text
    assert "--no-follow" in text


def test_sources_in_docs_are_the_rules_sources():
    text = (DOCS / "validation.md").read_text()
    sentence = re.search(r"^Sources are (.*?)\.\s", text, flags=re.MULTILINE | re.DOTALL)
    assert sentence is not None
    named = set(re.findall(r"`([^`]+)`", sentence.group(1)))
    used = {rule.source.value for rule in RULES.values()}
    assert named == used
    for unused in {source.value for source in Source} - used:
        assert f"`Source` enum also has `{unused}`, which no rule uses" in text


def test_benchmark_page_counts_the_irregularities_of_the_batch_tests():
    text = (DOCS / "benchmarks-validator.md").read_text()
    assert f"with {len(set(ODDITIES))} kinds of irregularity" in text
