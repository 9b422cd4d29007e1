"""The benchmark harness (bench/bench_core.py) at a tiny size, so it keeps working.

No timing is asserted: the harness runs end to end on 2,000 rows in a fresh
SQLite file (4 files of 500 URLs), and its verification report must show our
URLs equal to contrib's for the same data and each index lastmod equal to the
latest lastmod in its file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.utils import require_reference

# Subprocesses: run by .ci/run and ./tests/run --all, skipped by ./tests/run.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _run_bench(tmp_path: Path, module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m <module> <args>`` on a fresh SQLite file, outside tests.settings."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bench.sqlite3'}",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _bench_result(tmp_path: Path, module: str, *args: str) -> dict[str, Any]:
    """Run a benchmark that writes ``--json``; its result."""
    out = tmp_path / "result.json"
    completed = _run_bench(tmp_path, module, *args, "--json", str(out))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def test_bench_core_runs_and_matches_contrib(tmp_path: Path) -> None:
    result = _bench_result(
        tmp_path,
        "bench.bench_core",
        *("--db", "sqlite", "--rows", "2000", "--limit", "500", "--repeat", "1"),
        *("--slow-repeat", "1", "--no-memory", "--verify", "full"),
    )

    verify = result["verify"]
    assert verify["ours_urls"] == 2000
    assert verify["ours_url_list"] == verify["contrib_url_list"]
    assert verify["same_urls"] and verify["same_lastmod_dates"]
    assert verify["comments_lastmod_correct"]
    assert verify["floors_equal_ours"]
    files = verify["index_files"]
    assert len(files) == 8  # 4 files in each of the two sections
    for entry in files:
        assert entry["lastmod"] is not None
        assert entry["lastmod"] == entry["max_in_file"]

    cases = result["cases"]
    assert set(cases) >= {"contrib-page", "naive-floor", "sql-floor", "ours-page", "ours-index"}
    for case in cases.values():
        assert case["bytes"] > 0 and len(case["times_ms"]) == 1
    # Our page costs its rows (cache off, a plain GET: its Last-Modified is
    # the one the index laid it out with); the index the largest key plus one
    # range-aggregate query per lastmod group, and the sample (files of 500
    # URLs are sized by count, so the first one's first rows show the
    # section gives URLs: Section.listed_pages; a measured layout needs none).
    assert cases["ours-page"]["queries"] == 1
    assert cases["ours-page-comments"]["queries"] == 1
    assert cases["ours-index"]["queries"] == 3
    # After a cache flush: the same, as files of 500 URLs are sized by count
    # (500 worst-case entries fit; at 50,000 each block is measured, one more
    # query: tests/engine/test_pagination.py).
    assert cases["ours-index-cold"]["queries"] == 3
    assert cases["ours-index-comments"]["queries"] == 4


XSD_DIR = ROOT.parent / "shared" / "reference" / "xsd"


@pytest.mark.parametrize("shape", ["plain", "i18n"])
def test_validator_bench_runs_and_agrees_with_the_xsd(tmp_path: Path, shape: str) -> None:
    """bench/validate_bench.py end to end: the generated file (the plain shape,
    then the multilingual one) is valid for lxml XMLSchema with the official
    XSDs and has no finding for the validator. No timing is asserted."""
    require_reference(XSD_DIR / "sitemap.xsd")
    out = tmp_path / "result.json"
    completed = subprocess.run(
        [
            sys.executable,
            "bench/validate_bench.py",
            "--shape",
            shape,
            "--tools",
            "validator",
            "lxml-xsd",
            "--repeat",
            "1",
            "--xsd-dir",
            str(XSD_DIR),
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    results = json.loads(out.read_text())["results"]
    assert results["lxml-xsd"]["verdict"] is True
    assert results["validator"]["verdict"] == {"errors": 0, "warnings": 0, "info": 0}
    assert "CPU vs lxml XMLSchema" in completed.stdout


def test_bench_html_sitemap_runs(tmp_path: Path) -> None:
    completed = _run_bench(
        tmp_path,
        "bench.bench_html_sitemap",
        *("--rows", "2000", "--limit", "500", "--repeat", "1"),
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    rows = [line for line in completed.stdout.splitlines() if line.startswith("| `")]
    # The index, four HTML pages (one per file of 500 here) and the XML file.
    assert len(rows) == 6
    assert "`/sitemap/articles/4/` (last page)" in completed.stdout


def test_bench_overview_runs(tmp_path: Path) -> None:
    completed = _run_bench(tmp_path, "bench.bench_overview", "--rows", "2000", "--repeat", "1")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    rows = [line for line in completed.stdout.splitlines() if line.startswith("| ")]
    # The header, index_pages and lastmod_counts of both sections, the whole cold and warm.
    assert len(rows) == 7
    # A model section's lastmod counts are one query, whatever its size.
    assert "| `articles`: `lastmod_counts()` |" in completed.stdout
    assert next(line for line in rows if "lastmod_counts" in line).endswith("| 1 |")


def test_bench_absolute_url_runs_and_matches_the_fast_path(tmp_path: Path) -> None:
    """bench/bench_absolute_url.py end to end (no timing asserted): the file
    located by ``get_absolute_url()`` equals the ``url_name`` path's byte for
    byte and lists contrib's URLs; each case's queries are constant."""
    result = _bench_result(
        tmp_path,
        "bench.bench_absolute_url",
        *("--rows", "2000", "--limit", "500", "--repeat", "1", "--no-memory"),
    )
    assert all(result["verify"].values())
    cases = result["cases"]
    assert cases["contrib-page"]["urls"] == cases["absolute-full-page"]["urls"] == 500
    assert cases["absolute-index"]["urls"] == 4
    for key in ("absolute-page", "absolute-full-page"):
        assert cases[key]["queries"] == 1  # the rows
    for key in ("absolute-index", "fast-index"):
        # The largest key, the blocks' figures, the sample (files sized by count).
        assert cases[key]["queries"] == 3


def test_bench_change_cost_runs_and_renders_only_what_changed(tmp_path: Path) -> None:
    """bench/bench_change_cost.py end to end on two tiny sizes (no timing
    asserted): after one save the next crawl renders one file and a build
    renders one; after scattered saves touching every file, each is rendered
    once; a cache flush renders them all."""
    result = _bench_result(
        tmp_path,
        "bench.bench_change_cost",
        *("--rows", "1000", "2000", "--limit", "500", "--repeat", "1", "--saves", "10"),
        *("--steady-seconds", "1", "--cache-url", f"filecache://{tmp_path / 'cache'}"),
    )
    sizes = result["sizes"]
    assert [size["files"] for size in sizes] == [2, 4]
    for size in sizes:
        files = size["files"]
        assert size["flush_rendered"] == files
        assert size["save_rendered"] == 1
        assert size["many_rendered"] == min(size["saves"], files)
        assert size["build_full_rendered"] == files
        assert size["build_one_rendered"] == 1
        assert size["build_many_rendered"] == files
        # The index's queries do not grow with the rows.
        assert size["save_index_queries"] == sizes[0]["save_index_queries"]
        # Steady writes behind gunicorn: every fetch of either index answered
        # while the writer process saved rows.
        steady = size["steady"]
        for key in ("ours", "contrib", "ours_no_writes"):
            assert steady[key]["requests"] > 0
            assert steady[key]["failures"] == 0
        assert steady["ours"]["writer"]["saves"] >= 1
        assert steady["contrib"]["writer"]["saves"] >= 1


def test_bench_build_runs_every_way_and_measures_each_process(tmp_path: Path) -> None:
    """bench/bench_build.py end to end on 2,000 rows (4 files; no timing
    asserted): the real command in a fresh process builds every file in one
    process, with two forked workers and enqueued; each worker's peak RSS is
    read; a build after one saved row renders one file; contrib's view
    renders the same 4 files."""
    result = _bench_result(
        tmp_path,
        "bench.bench_build",
        *("--rows", "2000", "--limit", "500", "--repeat", "1"),
        *("--cache-url", f"filecache://{tmp_path / 'cache'}"),
    )
    (size,) = result["sizes"]
    runs = {key: value[0] for key, value in size["runs"].items()}
    for key in ("jobs1", "jobs2", "enqueue"):
        assert runs[key]["files"] == 4, key
        assert runs[key]["peak_rss_kb"] > 0
    assert runs["jobs1"]["written"] == runs["jobs2"]["written"] == 5  # the index too
    # Rendered in the command's process: all 4 with one process or enqueued
    # (the immediate backend runs each task there), none with forked workers.
    assert runs["jobs1"]["rendered"] == runs["enqueue"]["rendered"] == 4
    assert runs["jobs2"]["rendered"] == 0
    assert 1 <= len(runs["jobs2"]["workers"]) <= 2
    assert all(worker["peak_kb"] >= worker["start_kb"] > 0 for worker in runs["jobs2"]["workers"])
    assert runs["jobs1"]["workers"] == runs["enqueue"]["workers"] == []
    assert (runs["one_change"]["written"], runs["one_change"]["rendered"]) == (2, 1)
    assert size["contrib"]["pages"] == [1, 2, 3, 4]
    assert size["summary"]["jobs2"]["speed_up"] > 0


def test_bench_build_enqueues_on_real_rq_workers(tmp_path: Path) -> None:
    """bench/bench_build.py with ``--rq-workers 2`` (no timing asserted): two
    ``rqworker`` processes build the 4 files of the enqueued build and the
    last writes the index; the run's cache keys and queue are removed from
    Redis afterwards."""
    from tests.build.test_build_worker import REDIS_URL, require_worker_stack

    redis = require_worker_stack()
    result = _bench_result(
        tmp_path,
        "bench.bench_build",
        *("--rows", "2000", "--limit", "500", "--repeat", "1"),
        *("--cache-url", REDIS_URL, "--rq-workers", "2"),
    )
    (size,) = result["sizes"]
    (rq,) = size["runs"]["rq"]
    assert rq["files"] == 4
    assert rq["rendered"] == 0  # in the workers, not in the enqueuing command
    assert "rq_overhead_per_file_s" in size["summary"]
    for name in (size["cache_prefix"], size["rq_queue"]):
        assert not list(redis.scan_iter(match=f"*{name}*"))


def test_bench_extensions_runs_every_file_of_each_section(tmp_path: Path) -> None:
    """bench/bench_extensions.py end to end on 1,000 rows x 5 languages (no
    timing asserted): each section lists every row in every language, in
    worst-case files before ``measure_sitemaps`` and in one file after it,
    each timed request a cold render; memory is measured on a 2,000-URL file."""
    result = _bench_result(
        tmp_path,
        "bench.bench_extensions",
        *("--rows", "1000", "--repeat", "1", "--flat-sizes", "2000"),
        *("--db", str(tmp_path / "bench.sqlite3")),
    )
    urls = 1000 * 5
    assert result["urls_per_section"] == urls
    cases = result["cases"]
    assert cases["contrib (i18n, alternates)"]["urls"] == urls
    for label in ("ours (hreflang)", "ours (hreflang + 3 images)"):
        before, after = cases[f"{label}, not measured"], cases[f"{label}, measured"]
        assert before["urls"] == after["urls"] == urls
        assert before["files"] > 1, before  # sized by the worst case until measured
        assert (after["files"], after["urls_per_file"]) == (1, [urls])
        assert after["queries"] <= before["queries"]
        assert after["us_per_url"] > 0 and after["cpu_us_per_url"] > 0
    # The images add bytes to the same URLs.
    assert (
        cases["ours (hreflang + 3 images), measured"]["bytes"]
        > cases["ours (hreflang), measured"]["bytes"]
    )
    assert result["measure_sitemaps"]["output"] == [
        "alternates: measure, 5 blocks measured.",
        "alternates-images: measure, 5 blocks measured.",
    ]
    assert set(result["peak_by_page_urls"]) == {"2000"}
    assert set(result["peak_by_page_urls"]["2000"]) == {"cold_cache_on", "streamed_cache_off"}
