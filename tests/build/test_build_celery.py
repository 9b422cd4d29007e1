"""An enqueued build run by a real Celery worker (issue 24): ``build_sitemaps
--enqueue --enqueue-on celery`` sends the file jobs to RabbitMQ, one
``celery -A tests.celery_app worker`` process with two prefork pool
processes builds them into a shared folder, and the last one writes the
index; a job that fails leaves the previous set served; a job whose worker
is killed mid-job is run again (``acks_late``, ``reject_on_worker_lost``).

The worker runs as a site runs Celery: prefork (the default pool: each job in
a process of its own, forked after Django's setup, with the database
connections Celery's Django fixup closes around the fork), so the jobs run
side by side as they would in production, with no thread sharing a
connection. Every process uses ``tests.worker_settings`` (one file-based
SQLite database, the sitemap cache on Redis) through the helpers of
tests/build/test_build_worker.py: each test has a queue of its own, which also
prefixes its cache keys; its keys and its RabbitMQ queue are removed at the
end. No result backend: each task's outcome reaches the test through the
journal tests/celery_app.py writes.

Slow (subprocesses, a real broker): run by ``.ci/run``. Without Celery,
RabbitMQ (``WORKER_AMQP_URL``, default amqp://guest:guest@127.0.0.1:5672//)
or Redis this skips, and fails where ``CI`` is set (``.ci/run``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from django_sitemaps_plus.build.files import INDEX_NAME
from django_sitemaps_plus.build.plan import PLAN_DIR
from tests.build.test_build_worker import (
    ROOT,
    WAIT_SECONDS,
    WorkerSite,
    built_by_workers,
    published,
    require_worker_stack,
)
from tests.utils import files_of, locs

pytestmark = pytest.mark.slow

AMQP_URL = os.environ.get("WORKER_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")

#: A temporary file of ``storage.write_atomic`` (``.<name>.<hex>.tmp``), as a
#: process killed while it wrote a file leaves it.
TEMPORARY = re.compile(r"\.sitemap-.*\.[0-9a-f]{32}\.tmp")

#: ``shell --command``: the rows of pages 3 and 5 change.
CHANGE_PAGES_3_AND_5 = textwrap.dedent(
    """
    from tests.testapp.models import Article
    from tests.utils import at

    Article.objects.filter(pk__in=[5, 9]).update(title="changed", updated_at=at(2))
    """
)


def _rabbitmq_problem() -> str:
    """What keeps RabbitMQ from answering, or ""."""
    from kombu import Connection

    with Connection(AMQP_URL, connect_timeout=5) as broker:
        try:
            broker.ensure_connection(max_retries=1, interval_start=0)
        except Exception as exc:
            return f"no RabbitMQ at {broker.as_uri()}: {exc}"
    return ""


class CelerySite(WorkerSite):
    """The processes of tests/build/test_build_worker.py's site, with a Celery
    worker instead of RQ's."""

    def __init__(self, root: Path, redis: Any) -> None:
        super().__init__(root, redis)
        self.journal = root / "journal.jsonl"
        self.hanging_mark = root / "hanging.pid"
        self.started = itertools.count(1)
        self.env.update(WORKER_AMQP_URL=AMQP_URL, CELERY_JOURNAL=str(self.journal))

    def start_worker(self, failing_page: int = 0, hanging_page: int = 0) -> str:
        """One worker, two prefork pool processes, on this site's queue, in
        a process group of its own; rendering ``failing_page`` fails in it,
        and the first render of ``hanging_page`` waits to be killed."""
        name = f"{self.queue}-{next(self.started)}@localhost"
        env = {
            **self.env,
            "CELERY_FAILING_PAGE": str(failing_page or ""),
            "CELERY_HANGING_PAGE": str(hanging_page or ""),
            "CELERY_HANGING_MARK": str(self.hanging_mark),
        }
        log = (self.root / f"{name}.log").open("wb")
        command = [
            sys.executable, "-m", "celery", "-A", "tests.celery_app", "worker",
            "--pool", "prefork", "--concurrency", "2", "--queues", self.queue,
            "--hostname", name, "--loglevel", "INFO",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip
        process = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        log.close()
        self.workers.append((name, process))
        deadline = time.monotonic() + WAIT_SECONDS
        while " ready." not in self.log(name):
            assert process.poll() is None, f"worker {name} ended: {self.log(name)}"
            assert time.monotonic() < deadline, f"the worker did not come up: {self.log(name)}"
            time.sleep(0.1)
        return name

    def hanging_process(self) -> int:
        """The pool process whose job waits to be killed, once it does."""
        deadline = time.monotonic() + WAIT_SECONDS
        while not self.hanging_mark.exists() or not self.hanging_mark.read_text():
            assert time.monotonic() < deadline, f"no job hangs: {self.outcomes()}"
            time.sleep(0.1)
        return int(self.hanging_mark.read_text())

    def outcomes(self) -> list[dict[str, Any]]:
        """Each task's outcome in the worker so far, in order."""
        if not self.journal.exists():
            return []
        return [json.loads(line) for line in self.journal.read_text().splitlines()]

    def jobs(self) -> list[tuple[str, dict[str, Any]]]:
        """Each finished task's pool process and record; fails on a failed task."""
        outcomes = self.outcomes()
        failed = [outcome["error"] for outcome in outcomes if "error" in outcome]
        assert not failed, failed
        return [(str(outcome["pid"]), outcome["record"]) for outcome in outcomes]

    def wait_for_outcomes(self, count: int) -> list[dict[str, Any]]:
        deadline = time.monotonic() + WAIT_SECONDS
        while len(self.outcomes()) < count:
            for name, process in self.workers:
                assert process.poll() is None, f"worker {name} ended: {self.log(name)}"
            assert time.monotonic() < deadline, f"{self.outcomes()} of {count} tasks"
            time.sleep(0.1)
        return self.outcomes()

    def wait_for_jobs(self, count: int) -> list[tuple[str, dict[str, Any]]]:
        """``jobs()`` once ``count`` tasks have their outcome. A task's line
        is written after it returned (``task_success``): after the files and
        the index it wrote can be seen in the folder."""
        self.wait_for_outcomes(count)
        return self.jobs()

    def wait_for_records(self, files: Iterable[str]) -> list[dict[str, Any]]:
        """The outcomes once the journal has a record naming each of
        ``files`` and the record of the task that wrote the index: each line
        is written after its task returned, so after what it wrote is seen."""
        wanted = set(files)

        def complete(outcomes: list[dict[str, Any]]) -> bool:
            records = [outcome["record"] for outcome in outcomes if "record" in outcome]
            named = {name for record in records for name in record.get("files", {})}
            return wanted <= named and any(record.get("index") for record in records)

        deadline = time.monotonic() + WAIT_SECONDS
        while not complete(outcomes := self.outcomes()):
            for name, process in self.workers:
                assert process.poll() is None, f"worker {name} ended: {self.log(name)}"
            assert time.monotonic() < deadline, f"not every record of {sorted(wanted)}: {outcomes}"
            time.sleep(0.1)
        return outcomes

    def forget(self) -> None:
        """Remove this site's cache keys from Redis and its queue from RabbitMQ."""
        from kombu import Connection

        for key in self.redis.scan_iter(match=f"*{self.queue}*"):
            self.redis.delete(key)
        with Connection(AMQP_URL, connect_timeout=5) as broker, contextlib.suppress(Exception):
            broker.default_channel.queue_delete(self.queue)

    def enqueue(self, out: Path, *args: str) -> dict[str, Any]:
        done = self.manage(
            "build_sitemaps", "--dir", str(out), "--enqueue", "--enqueue-on", "celery",
            "--queue", self.queue, "--format", "json", *args,
        )  # fmt: skip
        report: dict[str, Any] = json.loads(done.stdout)
        return report


@pytest.fixture
def site(tmp_path: Path) -> Iterator[CelerySite]:
    redis = require_worker_stack(
        ("celery", "redis"), broker=_rabbitmq_problem, worker="a real Celery worker"
    )
    celery_site = CelerySite(tmp_path, redis)
    try:
        yield celery_site
    finally:
        try:
            celery_site.stop_workers()
        finally:
            celery_site.forget()


class TestCeleryWorker:
    def test_two_pool_processes_build_the_files_and_the_last_one_writes_the_index(self, site):
        site.seed(20)  # 10 files of 2 URLs
        site.start_worker()
        out = site.root / "shared"
        # --wait follows the build from the folder until the index is written.
        report = site.enqueue(out, "--text", "--wait")
        assert report["jobs"] == report["enqueued"] == 10
        assert report["waited"] is True and report["files"] == 21 and report["urls"] == 20

        files = published(out)
        assert not (out / PLAN_DIR).exists()
        assert sorted(files) == sorted(f"sitemap-articles-{n}.xml" for n in range(1, 11))
        index_written = (out / INDEX_NAME).stat().st_mtime_ns
        for name, body in files.items():
            assert len(locs(body)) == 2
            # The index after the last file (and its text twin).
            for built in (name, name.replace(".xml", ".txt")):
                assert (out / built).stat().st_mtime_ns <= index_written

        # Both pool processes built files; one task wrote the index (the last
        # to count itself done: its journal line may come before another's).
        assert len(built_by_workers(site, out, files)) == 2

    def test_a_failed_job_leaves_the_previous_set_served_until_a_build_resumes(self, site):
        site.seed(20)
        out = site.root / "shared"
        site.manage("build_sitemaps", "--dir", str(out), "--quiet")
        before = files_of(out)
        site.manage("shell", "--command", CHANGE_PAGES_3_AND_5)
        site.start_worker(failing_page=3)
        report = site.enqueue(out)
        assert report["enqueued"] == 10
        outcomes = site.wait_for_outcomes(10)
        errors = [outcome["error"] for outcome in outcomes if "error" in outcome]
        assert len(errors) == 1 and "killed mid-build" in errors[0], outcomes
        assert not any(outcome.get("record", {}).get("index") for outcome in outcomes)

        # The previous set is served: every file the index names is whole and
        # valid, page 3 is the one built before, and the plan waits in the folder.
        files = published(out)
        assert len(files) == 10
        assert files["sitemap-articles-3.xml"] == before["sitemap-articles-3.xml"]
        assert files["sitemap-articles-5.xml"] != before["sitemap-articles-5.xml"]
        assert (out / PLAN_DIR).exists()

        # Once the failed build's count has expired (here: removed), the next
        # build, on a worker without the fault, resumes its plan: the one job
        # without a record.
        site.stop_workers()
        site.start_worker()
        for key in site.redis.scan_iter(match=f"{site.queue}:*build-jobs*"):
            site.redis.delete(key)
        resumed = site.enqueue(out, "--wait")
        assert resumed["enqueued"] == 1, resumed
        assert not (out / PLAN_DIR).exists()
        plain = site.root / "plain"
        site.manage("build_sitemaps", "--dir", str(plain), "--quiet")
        assert files_of(out) == files_of(plain)

    @pytest.mark.parametrize("killed", ["pool process", "worker"])
    def test_a_job_whose_worker_is_killed_mid_job_is_run_again(self, site, killed):
        """``acks_late``: the broker gives the message of a worker that died
        to another; ``reject_on_worker_lost``: likewise when only the pool
        process running the job dies."""
        site.seed(20)
        out = site.root / "shared"
        site.start_worker(hanging_page=4)
        assert site.enqueue(out)["enqueued"] == 10
        hanging = site.hanging_process()
        if killed == "pool process":
            os.kill(hanging, signal.SIGKILL)
        else:  # the whole worker: its main process and its pool
            ((_, process),) = site.workers
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=WAIT_SECONDS)
            site.workers.clear()
            site.start_worker()
        deadline = time.monotonic() + WAIT_SECONDS
        while not (out / INDEX_NAME).exists() or (out / PLAN_DIR).exists():
            assert time.monotonic() < deadline, f"no index: {site.outcomes()}"
            time.sleep(0.1)
        files = published(out)
        assert len(files) == 10
        # The task that wrote the index (and any other) journals its record
        # only once it has returned.
        outcomes = site.wait_for_records(files)

        records = [outcome["record"] for outcome in outcomes if "record" in outcome]
        # Page 4 was built by the job run again, in another process.
        (page_4,) = [
            (outcome["pid"], record)
            for outcome in outcomes
            if "sitemap-articles-4.xml" in (record := outcome.get("record", {})).get("files", [])
        ]
        assert page_4[0] != hanging
        assert [record.get("index", False) for record in records].count(True) == 1
        plain = site.root / "plain"
        site.manage("build_sitemaps", "--dir", str(plain), "--quiet")
        built = files_of(out)
        left = [name for name in built if TEMPORARY.fullmatch(name)]
        assert {name: body for name, body in built.items() if name not in left} == files_of(plain)
        if killed == "pool process":
            assert not left
        else:
            # Killing the whole worker may kill its other pool process while
            # it writes a file (its job is run again): the temporary stays,
            # named by no index, until the next build of the folder removes it.
            site.manage("build_sitemaps", "--dir", str(out), "--quiet")
            assert files_of(out) == files_of(plain)
