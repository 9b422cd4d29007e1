"""Builds whose file jobs run in worker processes (``build_sitemaps --jobs``):
the same bytes as one process, and a worker killed mid-file fails the build
without touching the served set; the next build writes only what is missing
(issue 24)."""

from __future__ import annotations

import io
import json
import os

import pytest
from django.core.files.storage import FileSystemStorage, InMemoryStorage
from django.core.management import CommandError, call_command

from django_sitemaps_plus import register
from django_sitemaps_plus.build import BuildFailed, build, workers
from django_sitemaps_plus.build.files import MANIFEST_NAME
from django_sitemaps_plus.build.plan import PLAN_DIR, load_plan
from django_sitemaps_plus.sections import ModelSection
from tests.testapp.models import Article
from tests.utils import articles, at, files_of, locs, worker_dies_writing

# Committed rows: on PostgreSQL or MariaDB the workers read them on their own
# connections (an in-memory SQLite database is copied into each fork).
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(),
                       reason="worker processes are forked"),
]  # fmt: skip


@pytest.fixture
def pages(registry) -> None:
    register(Article, limit=2, lastmod_fields=["updated_at"])
    for article in articles(9):  # pages 1 to 5
        Article.objects.filter(pk=article.pk).update(updated_at=at(1))


def report(*args: str) -> dict[str, object]:
    stdout = io.StringIO()
    call_command("build_sitemaps", *args, "--format", "json", stdout=stdout)
    result: dict[str, object] = json.loads(stdout.getvalue())
    return result


class TestWorkers:
    def test_two_processes_write_the_same_bytes_as_one(self, pages, tmp_path, monkeypatch):
        rendered_by = tmp_path / "pids"
        original = ModelSection.page_entries

        def recording(self, number, site, info=None):
            with open(rendered_by, "a") as handle:
                handle.write(f"{os.getpid()}\n")
            return original(self, number, site, info)

        monkeypatch.setattr(ModelSection, "page_entries", recording)
        one, two = tmp_path / "one", tmp_path / "two"
        common = ("--text", "--gzip", "--base-url", "https://example.com")
        assert report("--dir", str(one), "--jobs", "1", *common)["files"] == 11
        in_one = set(rendered_by.read_text().split())
        rendered_by.unlink()
        assert report("--dir", str(two), "--jobs", "2", *common)["files"] == 11
        in_two = set(rendered_by.read_text().split())

        assert in_one == {str(os.getpid())}
        # Every file of the second build was rendered in a worker process.
        assert in_two and str(os.getpid()) not in in_two
        built = files_of(one)
        assert len(built) == 2 * 11 + 1  # each file, its .gz, the manifest
        assert files_of(two) == built
        assert not (two / PLAN_DIR).exists()

    def test_a_worker_killed_mid_file_leaves_the_previous_set(self, pages, tmp_path, monkeypatch):
        out = tmp_path / "built"
        storage = FileSystemStorage(location=str(out))
        build(storage)
        before = files_of(out)
        Article.objects.update(slug="changed")  # every file changes
        worker_dies_writing(monkeypatch, "sitemap-articles-2.xml")

        with pytest.raises(CommandError, match=r"sitemap-articles-2\.xml") as failed:
            call_command("build_sitemaps", "--dir", str(out), "--jobs", "2", "--quiet")
        assert failed.value.returncode == 1
        error = failed.value.__cause__
        assert isinstance(error, BuildFailed)
        missing = error.files
        assert "sitemap-articles-2.xml" in missing

        # Killed while writing, its temporary file left behind: the served set
        # is the previous one (files finished meanwhile are complete, and the
        # old index and manifest name only complete files).
        assert [p.name for p in out.glob(".sitemap-articles-2.xml.*.tmp")]
        after = files_of(out)
        assert after["sitemap.xml"] == before["sitemap.xml"]
        assert after[MANIFEST_NAME] == before[MANIFEST_NAME]
        assert after["sitemap-articles-2.xml"] == before["sitemap-articles-2.xml"]
        for loc in locs(after["sitemap.xml"]):
            assert loc.rsplit("/", 1)[1] in after

        # A worker the pool ended while it wrote its record leaves its temporary file.
        plan = load_plan(storage, "")
        assert plan is not None
        records = out / plan.records_folder
        records.mkdir(exist_ok=True)
        (records / f".record.json.{'a' * 32}.tmp").write_bytes(b"{")

        monkeypatch.undo()
        rerun = report("--dir", str(out), "--jobs", "2")
        # Only what was missing is written (the index too when it changed);
        # the rest was built before the worker died.
        written, resumed = rerun["written"], rerun["resumed"]
        assert isinstance(written, list) and isinstance(resumed, list)
        assert sorted(name for name in written if name != "sitemap.xml") == sorted(missing)
        assert sorted(resumed) == [
            name for name in (f"sitemap-articles-{n}.xml" for n in range(1, 6))
            if name not in missing
        ]  # fmt: skip
        assert not list(out.glob(".sitemap-*.tmp"))
        assert not (out / PLAN_DIR).exists()
        fresh = tmp_path / "fresh"
        build(FileSystemStorage(location=str(fresh)))
        assert files_of(out) == files_of(fresh)

    def test_progress_counts_the_workers_files(self, pages, tmp_path):
        calls: list[tuple[int, int, str]] = []
        build(
            FileSystemStorage(location=str(tmp_path)),
            text=True,
            jobs=2,
            progress=lambda done, total, name: calls.append((done, total, name)),
        )
        assert [done for done, _, _ in calls] == list(range(1, 12))
        assert {total for _, total, _ in calls} == {11}
        assert calls[-1][2] == "sitemap.xml"
        assert sorted(name for _, _, name in calls[:-1]) == sorted(
            f"sitemap-articles-{n}.{ext}" for n in range(1, 6) for ext in ("xml", "txt")
        )

    def test_workers_cannot_share_memory(self, pages):
        storage = InMemoryStorage()
        with pytest.raises(ValueError, match="InMemoryStorage"):
            build(storage, jobs=2)
        assert storage.listdir("") == ([], [])  # refused before anything was planned

    def test_jobs_zero_is_one_per_cpu(self):
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        assert workers.process_count(0) == cpus
        assert workers.process_count(3) == 3

    def test_negative_jobs_is_bad_usage(self, pages, tmp_path):
        with pytest.raises(CommandError, match="--jobs") as refused:
            call_command("build_sitemaps", "--dir", str(tmp_path), "--jobs", "-1")
        assert refused.value.returncode == 2
