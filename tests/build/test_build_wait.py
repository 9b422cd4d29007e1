"""Progress of builds (issue 24): ``build_sitemaps --enqueue --wait`` and
``--wait`` follow a build from the storage alone (its plan and its jobs'
records) until its index is written, with files done of total, rate and
ETA on stderr; a stalled, slow or replaced build fails naming the files
not built. The clock is a fake one: each poll moves it on."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from django_sitemaps_plus.build import status as build_status
from django_sitemaps_plus.build.plan import jobs_counter_key, load_plan
from django_sitemaps_plus.conf import get_cache
from django_sitemaps_plus.management import progress
from django_sitemaps_plus.serving.storage import get_build_storage
from tests.build import test_build_tasks
from tests.build.test_build_tasks import needs_tasks, use_backend
from tests.utils import files_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("pages")]

#: Articles on pages 1 to 4.
pages = test_build_tasks.pages


@pytest.fixture
def at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Progress shows from the first look, a line for each."""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)


class FakeTime:
    """``build_status``'s clock and sleep: a poll moves the clock on by its
    interval, then runs ``between`` (what the workers do meanwhile)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.polls = 0
        self.between: Callable[[], None] = lambda: None

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.polls += 1
        self.now += seconds
        self.between()


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(build_status, "clock", fake.clock)
    monkeypatch.setattr(build_status, "sleep", fake.sleep)
    return fake


def workers(backend: Any, per_poll: int = 1, stop_after: int | None = None) -> Callable[[], None]:
    """Task workers that run ``per_poll`` of the backend's queued jobs each
    poll, in order (none after ``stop_after`` jobs: lost workers)."""
    ran = 0

    def work() -> None:
        nonlocal ran
        for _ in range(per_poll):
            if ran >= len(backend.results) or (stop_after is not None and ran >= stop_after):
                return
            result = backend.results[ran]
            ran += 1
            result.task.call(*result.args, **result.kwargs)

    return work


def run(*args: str) -> tuple[str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command("build_sitemaps", *args, stdout=stdout, stderr=stderr)
    return stdout.getvalue(), stderr.getvalue()


@needs_tasks
class TestEnqueueAndWait:
    def test_files_done_of_total_rate_and_eta_until_the_index_is_written(
        self, tmp_path, settings, fake_time, at_once
    ):
        backend = use_backend(settings, "dummy")
        out = tmp_path / "enqueued"
        # The command enqueues, then waits: workers run one job a poll.
        fake_time.between = workers(backend)
        stdout, stderr = run("--dir", str(out), "--enqueue", "--wait")
        assert stderr.splitlines() == [
            "build_sitemaps: 0/5 files, 0/4 jobs, enqueued, 0s",
            "build_sitemaps: 1/5 files, 1/4 jobs, enqueued, 2s (0.5 files/s; ETA 8s)",
            "build_sitemaps: 2/5 files, 2/4 jobs, enqueued, 4s (0.5 files/s; ETA 6s)",
            "build_sitemaps: 3/5 files, 3/4 jobs, enqueued, 6s (0.5 files/s; ETA 4s)",
            "build_sitemaps: 5/5 files, 4/4 jobs, index written, 8s (0.6 files/s)",
        ]
        assert fake_time.polls == 4
        assert stdout == "The index is written. The last build: 5 files (7 URLs).\n"
        assert (out / "sitemap.xml").exists()
        assert load_plan(get_build_storage(directory=str(out))) is None

    def test_the_immediate_backend_is_done_before_the_first_look(
        self, tmp_path, settings, fake_time
    ):
        use_backend(settings, "immediate")
        stdout, stderr = run("--dir", str(tmp_path), "--enqueue", "--wait", "--format", "json")
        report = json.loads(stdout)
        assert report["jobs"] == report["enqueued"] == 4
        assert (report["waited"], report["files"], report["urls"]) == (True, 5, 7)
        assert fake_time.polls == 0 and stderr == ""

    def test_quiet_for_cron(self, tmp_path, settings, fake_time, at_once):
        backend = use_backend(settings, "dummy")
        fake_time.between = workers(backend, per_poll=2)
        assert run("--dir", str(tmp_path), "--enqueue", "--wait", "--quiet") == ("", "")
        assert fake_time.polls == 2 and (tmp_path / "sitemap.xml").exists()

    def test_a_stalled_build_names_the_files_not_built(self, tmp_path, settings, fake_time):
        backend = use_backend(settings, "dummy")
        out = tmp_path / "enqueued"
        run("--dir", str(out), "--enqueue", "--quiet")
        # Two jobs finish, then the workers are lost.
        fake_time.between = workers(backend, stop_after=2)
        with pytest.raises(CommandError) as failed:
            run("--dir", str(out), "--wait", "--stalled-after", "10")
        assert failed.value.returncode == 1
        message = str(failed.value)
        assert "stalled: no file job finished for 10 s" in message
        assert "2 file(s) not built: sitemap-articles-3.xml, sitemap-articles-4.xml" in message
        # Two polls brought the two jobs, five more without one: 10 s.
        assert fake_time.polls == 2 + 5
        assert not (out / "sitemap.xml").exists()

    def test_the_wait_is_bounded(self, tmp_path, settings, fake_time):
        backend = use_backend(settings, "dummy")
        out = tmp_path / "enqueued"
        run("--dir", str(out), "--enqueue", "--quiet")
        fake_time.between = workers(backend)
        with pytest.raises(CommandError) as failed:
            run("--dir", str(out), "--wait", "--timeout", "3", "--quiet")
        assert failed.value.returncode == 1
        assert "did not finish within 3 s" in str(failed.value)
        assert "sitemap-articles-3.xml, sitemap-articles-4.xml" in str(failed.value)
        assert fake_time.polls == 2

    def test_a_build_replaced_while_waited_for_fails_clearly(self, tmp_path, settings, fake_time):
        use_backend(settings, "dummy")
        out = tmp_path / "enqueued"
        first = json.loads(run("--dir", str(out), "--enqueue", "--format", "json")[0])

        def replaced() -> None:  # its workers were lost; a new build took over
            plan = load_plan(get_build_storage(directory=str(out)), "")
            if plan is not None and plan.generation == first["generation"]:
                get_cache().delete(jobs_counter_key(plan))
                run("--dir", str(out), "--enqueue", "--quiet")

        fake_time.between = replaced
        with pytest.raises(CommandError, match="replaced by a newer one") as failed:
            run("--dir", str(out), "--wait", "--quiet")
        assert failed.value.returncode == 1


@needs_tasks
class TestWaitAlone:
    def test_follows_a_build_enqueued_elsewhere(self, tmp_path, settings, fake_time):
        """Another machine enqueued it: the plan and the records in the
        storage are all the waiting one reads."""
        backend = use_backend(settings, "dummy")
        out = tmp_path / "shared"
        run("--dir", str(out), "--enqueue", "--quiet")
        fake_time.between = workers(backend, per_poll=3)
        stdout, _ = run("--dir", str(out), "--wait")
        assert stdout == "The index is written. The last build: 5 files (7 URLs).\n"
        assert fake_time.polls == 2
        plain = tmp_path / "plain"
        call_command("build_sitemaps", "--dir", str(plain), "--quiet")
        assert files_of(out) == files_of(plain)


class TestWaitWithoutABuild:
    def test_nothing_running_returns_at_once(self, tmp_path, fake_time):
        assert run("--dir", str(tmp_path), "--wait") == (
            "No build is running on this storage.\n",
            "",
        )
        run("--dir", str(tmp_path), "--quiet")
        stdout, _ = run("--dir", str(tmp_path), "--wait", "--format", "json")
        assert json.loads(stdout) == {"waited": False, "files": 5, "urls": 7}
        assert fake_time.polls == 0

    @pytest.mark.parametrize(
        "args",
        [["--timeout", "5"], ["--stalled-after", "5"], ["--wait", "--jobs", "2"]],
    )
    def test_usage(self, tmp_path, args):
        with pytest.raises(CommandError) as refused:
            run("--dir", str(tmp_path), *args)
        assert refused.value.returncode == 2


class TestRateOfAPlainBuild:
    def test_rate_and_eta_on_each_line(self, tmp_path, at_once, monkeypatch):
        ticks = iter(range(1, 100))
        monkeypatch.setattr(progress, "_now", lambda: float(next(ticks)))
        _, stderr = run("--dir", str(tmp_path))
        # A second a file; the rate from the first file seen.
        assert stderr.splitlines() == [
            "build_sitemaps: 1/5 files, 1 written, 2 URLs, 1s",
            "build_sitemaps: 2/5 files, 2 written, 4 URLs, 2s (1.0 files/s; ETA 3s)",
            "build_sitemaps: 3/5 files, 3 written, 6 URLs, 3s (1.0 files/s; ETA 2s)",
            "build_sitemaps: 4/5 files, 4 written, 7 URLs, 4s (1.0 files/s; ETA 1s)",
            "build_sitemaps: 5/5 files, 5 written, 7 URLs, 5s (1.0 files/s)",
        ]


@pytest.mark.parametrize(
    ("seconds", "shown"), [(0.4, "0s"), (59.6, "1m00s"), (200, "3m20s"), (7500, "2h05m")]
)
def test_durations(seconds: float, shown: str) -> None:
    assert progress.duration(seconds) == shown
