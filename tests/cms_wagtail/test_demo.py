"""The Wagtail demo (``./example_project/run wagtail``): seeds, validates, lists what it should.

Its settings module cannot share a process with the tests', so each step runs
in a subprocess, on a SQLite file of its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.demo import listed_paths, run

# Subprocesses: run by .ci/run and ./tests/run --all, skipped by ./tests/run.
pytestmark = pytest.mark.slow

SETTINGS = "wagtail_demo.settings"


def test_demo_seeds_and_validates_with_every_rule_shown(tmp_path: Path) -> None:
    for step in (["migrate", "--noinput", "-v0"], ["seed_wagtail_demo"]):
        done = run(SETTINGS, tmp_path, "manage.py", *step)
        assert done.returncode == 0, done.stderr
    validated = run(SETTINGS, tmp_path, "manage.py", "validate_sitemaps")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert validated.stdout.strip().endswith("0 errors, 0 warnings, 0 info")
    paths = listed_paths(SETTINGS, tmp_path)
    assert {"/", "/fr/", "/about/", "/fr/a-propos/", "/blog/article-3/"} <= paths
    # The private section and its child, the draft and the hidden page are not listed.
    for path in ("/members/", "/members/news/", "/coming-soon/", "/thanks/"):
        assert path not in paths
