"""bench/bench_djangocms.py on a small site: it runs, and its verification
checks our URLs equal CMSSitemap's (it raises otherwise)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Subprocesses: run by .ci/run and ./tests/run --all, skipped by ./tests/run.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_bench_djangocms_runs_and_matches_cms_sitemap(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bench.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "tests.djangocms_settings",
        "PYTHONPATH": str(ROOT),
    }
    args = ["--pages", "300", "--repeat", "1", "--results", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_djangocms", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "verified: the same 602 URLs" in done.stderr
    results = json.loads((tmp_path / "djangocms-300.json").read_text())["results"]
    assert results["full file, ours"]["urls"] == 602
    assert results["full file, CMSSitemap"]["urls"] == 602
