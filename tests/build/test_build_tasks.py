"""Builds enqueued on Django's Tasks framework (``build_sitemaps --enqueue``):
task workers build the files, the last one writes the index (issue 24).

Runs where a Tasks framework is installed: ``django.tasks`` (Django 6.0+)
or the ``django-tasks`` package (the ``tasks`` extra)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from django_sitemaps_plus import register, tasks
from django_sitemaps_plus.build import enqueued
from django_sitemaps_plus.build.plan import PLAN_DIR, jobs_counter_key, load_plan
from django_sitemaps_plus.conf import get_cache
from django_sitemaps_plus.serving.storage import get_build_storage
from tests.build.test_build_concurrency import start_holder
from tests.testapp.models import Article
from tests.utils import articles, at, files_of

pytestmark = pytest.mark.django_db

needs_tasks = pytest.mark.skipif(tasks._framework is None, reason="no Tasks framework installed")

FILES = [f"sitemap-articles-{n}.xml" for n in range(1, 5)]


@pytest.fixture
def pages(registry) -> None:
    register(Article, limit=2, lastmod_fields=["updated_at"])
    for article in articles(7):  # pages 1 to 4
        Article.objects.filter(pk=article.pk).update(updated_at=at(1))


def use_backend(settings: Any, name: str) -> Any:
    """The Tasks framework's ``name`` backend (immediate, dummy) as the default."""
    framework = tasks._framework
    assert framework is not None
    backend = f"{framework.__name__}.backends.{name}.{name.title()}Backend"
    settings.TASKS = {"default": {"BACKEND": backend}}
    return framework.task_backends["default"]


def plain_build(folder: Path) -> dict[str, bytes]:
    call_command("build_sitemaps", "--dir", str(folder), "--text", "--quiet")
    return files_of(folder)


def enqueue(folder: Path) -> dict[str, Any]:
    stdout = io.StringIO()
    call_command(
        "build_sitemaps", "--dir", str(folder), "--text", "--enqueue", "--format", "json",
        stdout=stdout,
    )  # fmt: skip
    report: dict[str, Any] = json.loads(stdout.getvalue())
    return report


@needs_tasks
class TestEnqueuedBuild:
    def test_immediate_backend_writes_what_a_plain_build_writes(
        self, pages, tmp_path, settings, monkeypatch
    ):
        use_backend(settings, "immediate")
        from django_sitemaps_plus.build import files as build_module

        written: list[str] = []
        original = build_module.write_atomic

        def recording(storage, name, source):
            written.append(name)
            return original(storage, name, source)

        monkeypatch.setattr(build_module, "write_atomic", recording)
        report = enqueue(tmp_path / "enqueued")
        assert report["jobs"] == report["enqueued"] == 4
        section_files = [n for n in written if n.startswith("sitemap-")]
        assert sorted(section_files) == sorted(FILES + [f.replace(".xml", ".txt") for f in FILES])
        # The index once, after the last file.
        assert written.count("sitemap.xml") == 1
        assert written.index("sitemap.xml") > max(written.index(n) for n in section_files)
        assert files_of(tmp_path / "enqueued") == plain_build(tmp_path / "plain")

    @pytest.mark.parametrize("count", ["kept", "lost"])
    def test_the_last_task_writes_the_index(self, pages, tmp_path, settings, count):
        backend = use_backend(settings, "dummy")
        out = tmp_path / "enqueued"
        report = enqueue(out)
        assert report["enqueued"] == 4 and len(backend.results) == 4
        plan = load_plan(get_build_storage(directory=str(out)), "")
        assert plan is not None and plan.generation == report["generation"]
        if count == "lost":  # evicted: every task looks at the records
            get_cache().delete(jobs_counter_key(plan))

        # While its jobs wait for a worker, the build counts as running.
        if count == "kept":
            with pytest.raises(CommandError, match="enqueued build") as refused:
                call_command("build_sitemaps", "--dir", str(out), "--quiet")
            assert refused.value.returncode == 3

        *first, last = backend.results
        for result in first:  # workers run the jobs; none writes the index
            record = result.task.call(*result.args, **result.kwargs)
            assert record["written"] and record.get("index", False) is False
        assert not (out / "sitemap.xml").exists()
        assert last.task.call(*last.args, **last.kwargs)["index"] is True
        assert not (out / PLAN_DIR).exists()
        assert files_of(out) == plain_build(tmp_path / "plain")
        # A task run again (a retry) does nothing: its plan is done.
        assert last.task.call(*last.args, **last.kwargs) == {"superseded": True}

    def test_with_a_cache_whose_incr_is_not_atomic_every_task_looks(
        self, pages, tmp_path, settings
    ):
        """The file cache's ``incr`` reads then writes: two tasks finishing
        together count as one. Every task then checks the records, so a lost
        count never leaves the index unwritten."""
        settings.CACHES = {
            **settings.CACHES,
            "files": {
                "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                "LOCATION": str(tmp_path / "cache"),
            },
        }
        settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "CACHE_ALIAS": "files"}
        assert not enqueued.counts_atomically(get_cache())
        backend = use_backend(settings, "dummy")
        out = tmp_path / "enqueued"
        enqueue(out)
        plan = load_plan(get_build_storage(directory=str(out)), "")
        assert plan is not None
        *first, last = backend.results
        for result in first:
            result.task.call(*result.args, **result.kwargs)
        get_cache().decr(jobs_counter_key(plan))  # two tasks' increments met: one lost
        assert last.task.call(*last.args, **last.kwargs)["index"] is True
        assert files_of(out) == plain_build(tmp_path / "plain")

    def test_which_caches_count_atomically(self, settings):
        assert enqueued.counts_atomically(get_cache())  # local memory: under a lock

    def test_a_rerun_enqueues_only_the_jobs_not_done(self, pages, tmp_path, settings):
        backend = use_backend(settings, "dummy")
        out = tmp_path / "enqueued"
        enqueue(out)
        done = backend.results[:3]
        for result in done:
            result.task.call(*result.args, **result.kwargs)
        # Its workers were lost: once the count expires, a new build resumes it.
        plan = load_plan(get_build_storage(directory=str(out)), "")
        assert plan is not None
        get_cache().delete(jobs_counter_key(plan))
        stale = backend.results[3]
        backend.clear()
        report = enqueue(out)
        assert report["generation"] != plan.generation
        assert report["enqueued"] == 1 and len(backend.results) == 1
        # The first plan's task, still queued somewhere, finds it taken over.
        assert stale.task.call(*stale.args, **stale.kwargs) == {"superseded": True}
        (result,) = backend.results
        assert result.task.call(*result.args, **result.kwargs)["index"] is True
        assert files_of(out) == plain_build(tmp_path / "plain")

    def test_the_last_task_waits_for_a_build_lock_held_a_moment(
        self, pages, tmp_path, settings, monkeypatch
    ):
        backend = use_backend(settings, "dummy")
        out = tmp_path / "enqueued"
        enqueue(out)
        *first, last = backend.results
        for result in first:
            result.task.call(*result.args, **result.kwargs)
        # Another process holds the lock (a build being refused, say) ...
        holder = start_holder(out)
        waits: list[bool] = []

        def release() -> None:  # ... and lets go while the task waits
            waits.append(True)
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=30)

        monkeypatch.setattr(enqueued, "_wait_for_lock", release)
        assert last.task.call(*last.args, **last.kwargs)["index"] is True
        assert waits == [True]
        assert files_of(out) == plain_build(tmp_path / "plain")


class TestUsage:
    def test_without_a_tasks_framework_the_command_says_what_to_install(
        self, pages, tmp_path, monkeypatch
    ):
        monkeypatch.setattr(tasks, "_framework", None)
        with pytest.raises(CommandError, match="Tasks framework") as refused:
            call_command("build_sitemaps", "--dir", str(tmp_path), "--enqueue")
        assert refused.value.returncode == 2
        assert not list(tmp_path.iterdir())

    @pytest.mark.parametrize(
        "args", [["--enqueue", "--jobs", "2"], ["--backend", "other"], ["--queue", "q"]]
    )
    def test_options_that_go_with_enqueue(self, pages, tmp_path, args):
        with pytest.raises(CommandError) as refused:
            call_command("build_sitemaps", "--dir", str(tmp_path), *args)
        assert refused.value.returncode == 2


@needs_tasks
def test_a_plain_build_takes_over_an_enqueued_plan_while_the_cache_is_down(
    pages, tmp_path, settings, caplog
):
    from django_sitemaps_plus.serving import quiet

    backend = use_backend(settings, "dummy")
    out = tmp_path / "enqueued"
    enqueue(out)
    quiet.failed(ConnectionError("the cache went away"))  # the breaker opens
    call_command("build_sitemaps", "--dir", str(out), "--text", "--quiet")
    assert "taken over as not running" in caplog.text
    assert files_of(out) == plain_build(tmp_path / "plain")
    # A task of the enqueued plan finds itself superseded and does nothing.
    first = backend.results[0]
    assert first.task.call(*first.args, **first.kwargs) == {"superseded": True}
