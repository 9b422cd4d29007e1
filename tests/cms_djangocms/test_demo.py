"""The django CMS demo (``./example_project/run djangocms``): seeds, validates, lists.

Its settings module cannot share a process with the tests', so each step runs
in a subprocess, on a SQLite file of its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.demo import listed_paths, run

# Subprocesses: run by .ci/run and ./tests/run --all, skipped by ./tests/run.
pytestmark = pytest.mark.slow

SETTINGS = "djangocms_demo.settings"


def test_demo_seeds_and_validates_with_every_rule_shown(tmp_path: Path) -> None:
    for step in (["migrate", "--noinput", "-v0"], ["seed_djangocms_demo"]):
        done = run(SETTINGS, tmp_path, "manage.py", *step)
        assert done.returncode == 0, done.stderr
    validated = run(SETTINGS, tmp_path, "manage.py", "validate_sitemaps")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert validated.stdout.strip().endswith("0 errors, 0 warnings, 0 info")
    paths = listed_paths(SETTINGS, tmp_path)
    assert paths == {"/en/", "/fr/", "/en/about/", "/fr/a-propos/", "/en/about/team/", "/en/news/"}
    # The login-only page, the draft, the French draft and the hidden page are not listed.
