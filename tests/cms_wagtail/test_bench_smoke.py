"""The Wagtail benchmark harness at a tiny size, so it keeps working.

No timing is asserted: the harness seeds 300 pages in a fresh SQLite file,
checks our URLs equal wagtail.contrib.sitemaps' (it raises otherwise) and
writes its report.
"""

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


def test_bench_wagtail_runs_and_matches_wagtails_sitemap(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bench.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "tests.wagtail_settings",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.bench_wagtail",
            "--pages",
            "300",
            "--repeat",
            "1",
            "--results",
            str(tmp_path),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "verified: the same 300 URLs" in done.stderr
    results = json.loads((tmp_path / "wagtail-300.json").read_text())
    assert results["results"]["full file, ours"]["urls"] == 300
    assert results["results"]["full file, wagtail.contrib.sitemaps"]["urls"] == 300
