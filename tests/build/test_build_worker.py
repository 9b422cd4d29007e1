"""An enqueued build run by real task workers (issue 24): two RQ worker
processes of the Tasks framework (``django-tasks-rq``, ``manage.py
rqworker``) on the Redis at 127.0.0.1:6379, database 10, build the files into
a shared folder; the last one writes the index; another process follows
the build from the folder alone (``build_sitemaps --wait``) until then.

Every process here (the workers, the ``build_sitemaps`` commands) runs with
``tests.worker_settings`` on one file-based SQLite database: the suite's own
test database is not visible to other processes. Each test has a queue of its
own, whose name also prefixes its cache keys, and removes its keys from Redis
database 10 when it ends (CI runs the suite on two databases side by side).

Slow (subprocesses, a real queue): run by ``.ci/run``, skipped by the fast
set. Without rq, django-rq, django-tasks-rq or the Redis server this skips,
and fails where ``CI`` is set (``.ci/run``).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from django_sitemaps_plus.build.files import INDEX_NAME
from django_sitemaps_plus.build.plan import PLAN_DIR
from tests.utils import assert_schema_valid, files_of, locs, unavailable

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("WORKER_REDIS_URL", "redis://127.0.0.1:6379/10")
#: Bounds of every wait (a worker coming up, the index appearing): generous
#: for a loaded machine; no test asserts how long anything took.
WAIT_SECONDS = 120

#: ``shell --command``: the rows, all changed on one day.
SEED = textwrap.dedent(
    """
    from tests.testapp.models import Article
    from tests.utils import articles, at

    articles({count})
    Article.objects.update(updated_at=at(1))
    """
)

#: A management command that starts when the gate file appears: two of them
#: set up (Django, the command and the Tasks framework's backend loaded) and
#: then released together.
GATED = textwrap.dedent(
    """
    import os, sys, time
    import django

    django.setup()
    import django_sitemaps_plus.management.commands.build_sitemaps
    import django_sitemaps_plus.tasks

    gate, deadline = sys.argv[1], time.monotonic() + 60
    while not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.005)
    from django.core.management import execute_from_command_line

    execute_from_command_line(["django-admin", *sys.argv[2:]])
    """
)


def require_worker_stack(
    needed: tuple[str, ...] = ("rq", "django_rq", "django_tasks_rq", "redis"),
    broker: Callable[[], str] | None = None,
    worker: str = "a real task worker",
) -> Any:
    """A connection to Redis database 10, with the worker's packages
    installed and its ``broker`` answering (a check that returns what is
    wrong, or ""); else a skip, or in CI a failure."""
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    problem = f"not installed: {', '.join(missing)}" if missing else ""
    connection = None
    if not missing:
        import redis

        connection = redis.Redis.from_url(REDIS_URL)
        try:
            connection.ping()
        except redis.RedisError as exc:
            problem = f"no Redis at {REDIS_URL}: {exc}"
        if not problem and broker is not None:
            problem = broker()
    if problem:
        unavailable(f"{worker} cannot run: {problem}")
    return connection


class WorkerSite:
    """A site whose processes share a file database, a queue and a cache."""

    def __init__(self, root: Path, redis: Any) -> None:
        self.root = root
        self.redis = redis
        self.queue = f"sitemaps-plus-test-{uuid.uuid4().hex[:12]}"
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.worker_settings",
            "PYTHONPATH": str(ROOT),
            "DATABASE_URL": f"sqlite:///{root / 'db.sqlite3'}",
            "WORKER_REDIS_URL": REDIS_URL,
            "WORKER_QUEUE": self.queue,
        }
        self.workers: list[tuple[str, subprocess.Popen[bytes]]] = []

    def manage(self, *args: str, status: int = 0) -> subprocess.CompletedProcess[str]:
        """Run a management command; fail with its output unless it exits
        with ``status``."""
        done = subprocess.run(
            [sys.executable, "-m", "django", *args],
            env=self.env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=WAIT_SECONDS,
        )
        assert done.returncode == status, done.stderr
        return done

    def gated(self, gate: Path, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", GATED, str(gate), *args],
            env=self.env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def seed(self, count: int) -> None:
        self.manage("migrate", "--verbosity", "0")
        self.manage("shell", "--command", SEED.format(count=count))

    def start_workers(self, count: int) -> list[str]:
        """``count`` RQ workers on this site's queue, each waiting for jobs."""
        from rq import Queue, Worker

        for number in range(1, count + 1):
            name = f"{self.queue}-{number}"
            log = (self.root / f"{name}.log").open("wb")
            command = [
                sys.executable, "-m", "django", "rqworker",
                "--job-class", "django_tasks_rq.Job", "--name", name, self.queue,
            ]  # fmt: skip
            process = subprocess.Popen(
                command, env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT
            )
            log.close()
            self.workers.append((name, process))
        names = {name for name, _ in self.workers}
        queue = Queue(self.queue, connection=self.redis)
        deadline = time.monotonic() + WAIT_SECONDS
        # Idle: each one waits on the queue (before, one could take every job).
        while {
            worker.name
            for worker in Worker.all(connection=self.redis, queue=queue)
            if worker.get_state() == "idle"
        } < names:
            for name, process in self.workers:
                assert process.poll() is None, f"worker {name} ended: {self.log(name)}"
            assert time.monotonic() < deadline, "the workers did not come up"
            time.sleep(0.1)
        return sorted(names)

    def log(self, name: str) -> str:
        return (self.root / f"{name}.log").read_text(errors="replace")

    def stop_workers(self) -> None:
        """SIGTERM: a warm shutdown (each worker ends its job); a second one,
        a cold shutdown; then a kill. An idle rq 3.0 worker logs the warm
        shutdown but sometimes goes on waiting on Redis (seen here, not always)."""
        for stop, wait in ((signal.SIGTERM, 5), (signal.SIGTERM, 10), (signal.SIGKILL, 30)):
            running = [process for _, process in self.workers if process.poll() is None]
            for process in running:
                process.send_signal(stop)
            for process in running:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=wait)

    def jobs(self) -> list[tuple[str, dict[str, Any]]]:
        """Each finished task's worker and return value (the job's record)."""
        from rq import Queue

        queue = Queue(self.queue, connection=self.redis)
        failed = queue.failed_job_registry.get_job_ids()
        assert not failed, [self._result(i).exc_string for i in failed]
        finished = []
        for job_id in queue.finished_job_registry.get_job_ids():
            result = self._result(job_id)
            finished.append((result.worker_name, result.return_value))
        return finished

    def wait_for_jobs(self, count: int) -> list[tuple[str, dict[str, Any]]]:
        """``jobs()`` once ``count`` jobs have finished. RQ registers a job as
        finished after its function returned: after the files and the index
        it wrote can be seen in the folder."""
        deadline = time.monotonic() + WAIT_SECONDS
        while len(finished := self.jobs()) < count:
            for name, process in self.workers:
                assert process.poll() is None, f"worker {name} ended: {self.log(name)}"
            assert time.monotonic() < deadline, f"{len(finished)} of {count} jobs finished"
            time.sleep(0.1)
        return finished

    def _result(self, job_id: str) -> Any:
        from rq.job import Job

        result = Job.fetch(job_id, connection=self.redis).latest_result()
        assert result is not None
        return result

    def wait_for_index(self, out: Path) -> None:
        """Until a build's index is there and its plan gone (written last)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while not (out / INDEX_NAME).exists() or (out / PLAN_DIR).exists():
            self.jobs()  # a failed task fails the test now, not at the deadline
            for name, process in self.workers:
                assert process.poll() is None, f"worker {name} ended: {self.log(name)}"
            assert time.monotonic() < deadline, f"no index in {out}: {sorted(os.listdir(out))}"
            time.sleep(0.1)

    def forget(self) -> None:
        """Remove this site's keys from Redis database 10 (its jobs, their
        results, its queue, registries, workers and cache keys), and no other."""
        for key in self.redis.scan_iter(match="rq:job:*"):
            if self.redis.type(key) == b"hash" and self.redis.hget(key, "origin") == (
                self.queue.encode()
            ):
                job_id = key.decode().removeprefix("rq:job:")
                self.redis.delete(key, f"rq:results:{job_id}")
        for key in self.redis.scan_iter(match=f"*{self.queue}*"):
            self.redis.delete(key)
        self.redis.srem("rq:queues", f"rq:queue:{self.queue}")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[WorkerSite]:
    redis = require_worker_stack()
    worker_site = WorkerSite(tmp_path, redis)
    try:
        yield worker_site
    finally:
        try:
            worker_site.stop_workers()
        finally:
            worker_site.forget()


def hosts(body: bytes) -> set[str]:
    return {urlsplit(loc).netloc for loc in locs(body)}


def published(out: Path) -> dict[str, bytes]:
    """The files the index in ``out`` lists, each one complete (schema-valid),
    and no other section file beside them."""
    index = (out / INDEX_NAME).read_bytes()
    assert_schema_valid(index)
    listed = [urlsplit(loc).path.rsplit("/", 1)[1] for loc in locs(index)]
    on_disk = {path.name for path in out.glob("sitemap-*.xml")}
    assert on_disk == set(listed)
    files = {name: (out / name).read_bytes() for name in listed}
    for body in files.values():
        assert_schema_valid(body)
    return files


def built_by_workers(site: WorkerSite, out: Path, files: dict[str, bytes]) -> set[str]:
    """Check the tasks that built ``files`` (with their ``.txt`` twins) into
    ``out``: one job a file, exactly one wrote the index, their records name
    every file, and the files are, byte for byte, what one process builds
    from the same rows. Returns the workers that ran them. The index
    appears before the task that wrote it has returned: this waits for
    every job's outcome."""
    jobs = site.wait_for_jobs(len(files))
    assert len(jobs) == len(files)
    assert [record.get("index", False) for _, record in jobs].count(True) == 1
    built = sorted(name for _, record in jobs for name in record["files"])
    assert built == sorted([*files, *(n.replace(".xml", ".txt") for n in files)])
    plain = site.root / "plain"
    site.manage("build_sitemaps", "--dir", str(plain), "--text", "--quiet")
    assert files_of(out) == files_of(plain)
    return {worker for worker, _ in jobs}


class TestRealWorkers:
    def test_two_workers_build_the_files_and_the_last_one_writes_the_index(self, site):
        site.seed(20)  # 10 files of 2 URLs
        workers = site.start_workers(2)
        out = site.root / "shared"
        enqueued = site.manage(
            "build_sitemaps", "--dir", str(out), "--text",
            "--enqueue", "--queue", site.queue, "--format", "json",
        )  # fmt: skip
        report = json.loads(enqueued.stdout)
        assert report["jobs"] == report["enqueued"] == 10
        site.wait_for_index(out)

        files = published(out)
        assert sorted(files) == sorted(f"sitemap-articles-{n}.xml" for n in range(1, 11))
        index_written = (out / INDEX_NAME).stat().st_mtime_ns
        for name, body in files.items():
            assert len(locs(body)) == 2
            text = (out / name.replace(".xml", ".txt")).read_text()
            assert text.split() == locs(body)
            # The index after the last file (and its text twin).
            for built in (name, name.replace(".xml", ".txt")):
                assert (out / built).stat().st_mtime_ns <= index_written

        # Both workers built files.
        assert sorted(built_by_workers(site, out, files)) == workers

    def test_an_enqueued_build_runs_until_its_last_job_in_every_process(self, site):
        site.seed(20)
        out = site.root / "shared"
        # Enqueued while no worker runs: its jobs wait in Redis.
        site.manage("build_sitemaps", "--dir", str(out), "--enqueue", "--queue", site.queue)
        # Another process's build of the same folder is refused meanwhile.
        refused = site.manage(
            "build_sitemaps", "--dir", str(out), "--base-url", "https://two.example", status=3
        )
        assert "enqueued build" in refused.stderr and "Nothing was written" in refused.stderr
        assert not (out / INDEX_NAME).exists()

        # A third process follows the build from the folder alone (--wait);
        # its first progress line says it found the plan, before any worker.
        waiting = subprocess.Popen(
            [sys.executable, "-m", "django", "build_sitemaps", "--dir", str(out),
             "--wait", "--timeout", str(WAIT_SECONDS)],
            env=site.env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert waiting.stderr is not None
            first = waiting.stderr.readline()
            assert first.startswith("build_sitemaps: 0/11 files, 0/10 jobs, enqueued, "), first
            site.start_workers(2)
            stdout, stderr = waiting.communicate(timeout=WAIT_SECONDS + 30)
        finally:
            if waiting.poll() is None:
                waiting.kill()
                waiting.wait(timeout=30)
        assert waiting.returncode == 0, stderr
        assert stdout == "The index is written. The last build: 11 files (20 URLs).\n"
        assert "build_sitemaps: 11/11 files, 10/10 jobs, index written, " in stderr
        site.wait_for_index(out)
        files = published(out)
        assert len(files) == 10
        assert hosts((out / INDEX_NAME).read_bytes()) == {"example.com"}
        for body in files.values():
            assert hosts(body) == {"example.com"}

    def test_two_builds_started_together_never_publish_a_mixed_set(self, site):
        site.seed(60)  # 30 files
        site.start_workers(2)
        refused = 0
        # Released together the two overlap (one is refused), unless one
        # process was held up until the other had finished: a round again,
        # into a new folder, up to five.
        for attempt in range(5):
            out = site.root / f"shared-{attempt}"
            gate = site.root / f"go-{attempt}"
            # An enqueued build for one host and a plain one for another:
            # each file and the index name the host of their plan.
            builds = {
                "one.example": site.gated(
                    gate, "build_sitemaps", "--dir", str(out), "--enqueue",
                    "--queue", site.queue, "--base-url", "https://one.example",
                ),
                "two.example": site.gated(
                    gate, "build_sitemaps", "--dir", str(out),
                    "--base-url", "https://two.example",
                ),
            }  # fmt: skip
            gate.touch()
            outcome = {}
            for host, process in builds.items():
                _, stderr = process.communicate(timeout=WAIT_SECONDS)
                outcome[host] = (process.returncode, stderr)
            # A refused build (exit 3: another build holds the storage, or the
            # enqueued one's workers still work) writes nothing.
            codes = sorted(code for code, _ in outcome.values())
            assert codes in ([0, 0], [0, 3]), outcome
            for code, stderr in outcome.values():
                assert code == 0 or "Nothing was" in stderr

            site.wait_for_index(out)
            files = published(out)
            assert len(files) == 30
            (host,) = hosts((out / INDEX_NAME).read_bytes())
            for body in files.values():
                assert hosts(body) == {host}
            if codes == [0, 3]:
                assert outcome[host][0] == 0  # the files of the one that ran
                refused += 1
                break
        assert refused, "the two builds never overlapped"
