"""What a static build is doing, read from the storage alone: any machine
that reaches the build storage can watch a build that runs on others.

- ``running_build()``: the plan kept in the storage (``plan.PLAN_DIR``)
  until its index is written, and how many of its file jobs have a record
  (one listing of the records' folder).
- ``last_build()``: the figures of the manifest the last build wrote, and
  what it did (``jobs.last_build_key``, kept in the sitemap cache).
- ``wait()``: follows a running build until its index is written
  (``build_sitemaps --wait``); raises ``WaitFailed`` naming the files not
  built when no job finishes for ``stalled_after`` seconds, when ``timeout``
  passes, or when a newer build replaces the plan.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.files.storage import Storage

from django_sitemaps_plus import names
from django_sitemaps_plus.build.files import MANIFEST_NAME
from django_sitemaps_plus.build.jobs import last_build_key
from django_sitemaps_plus.build.lock import CACHE_LOCK_SECONDS
from django_sitemaps_plus.build.plan import BuildPlan, load_plan, plan_name, workers_counting
from django_sitemaps_plus.build.run import Progress
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.serving import quiet
from django_sitemaps_plus.serving.storage import read_bytes, storage_name

#: Seconds without a finished file job after which ``wait`` calls a build
#: stalled: as long as an enqueued build counts as running without one.
STALLED_AFTER = float(CACHE_LOCK_SECONDS)
#: Seconds between two looks at the storage while waiting.
POLL_SECONDS = 2.0
#: What ``wait`` measures and sleeps with (tests replace them).
clock: Callable[[], float] = time.monotonic
sleep: Callable[[float], None] = time.sleep


def _modified(storage: Storage, name: str) -> dt.datetime | None:
    try:
        return storage.get_modified_time(name)
    except (NotImplementedError, OSError):
        return None


def finished_keys(storage: Storage, plan: BuildPlan) -> set[str]:
    """The keys of the jobs of ``plan`` that have a record: one listing of
    the records' folder (a storage that cannot list: one look per job)."""
    keys = {job.key for job in plan.jobs}
    try:
        _, listed = storage.listdir(storage_name(plan.records_folder, plan.prefix))
    except FileNotFoundError:
        return set()
    except (NotImplementedError, OSError):
        return {job.key for job in plan.jobs if storage.exists(plan.record_name(job))}
    return {name.removesuffix(".json") for name in listed} & keys


@dataclass
class RunningBuild:
    """A build whose index is not written yet: its plan and its finished jobs."""

    plan: BuildPlan
    done: set[str]
    #: When the plan was written (None: the storage does not say).
    since: dt.datetime | None
    #: An enqueued plan: whether its task workers count it running (its
    #: count in the sitemap cache, renewed by each job: gone
    #: ``CACHE_LOCK_SECONDS`` after the last one). None: not enqueued, or
    #: unknown (the cache does not answer: the page says so, not "stalled").
    workers_active: bool | None = None

    @property
    def generation(self) -> str:
        return self.plan.generation

    @property
    def enqueued(self) -> bool:
        return self.plan.enqueued

    @property
    def jobs(self) -> int:
        return len(self.plan.jobs)

    @property
    def jobs_done(self) -> int:
        return len(self.done)

    @property
    def files_total(self) -> int:
        """Files a build writes: each job's (with its ``.txt``), the index."""
        return self.jobs * (2 if self.plan.text else 1) + 1

    @property
    def files_done(self) -> int:
        return self.jobs_done * (2 if self.plan.text else 1)

    @property
    def missing(self) -> list[str]:
        """The files of the jobs without a record."""
        return [
            name
            for job in self.plan.jobs
            if job.key not in self.done
            for name in job.files(self.plan.text)
        ]


def running_build(storage: Storage, prefix: str | None = None) -> RunningBuild | None:
    """The build of ``storage`` that has not written its index, if any."""
    prefix = conf.BUILD_PREFIX if prefix is None else prefix
    plan = load_plan(storage, prefix)
    if plan is None:
        return None
    since = _modified(storage, plan_name(prefix))
    active = workers_counting(plan) if plan.enqueued else None
    return RunningBuild(plan, finished_keys(storage, plan), since, active)


def last_build(storage: Storage, prefix: str | None = None) -> dict[str, Any]:
    """The last build that wrote its index: ``found``; ``time`` (the
    manifest's), ``files`` and ``urls`` (the manifest's; None when it cannot
    be read); ``summary``: what it did, when the sitemap cache still has it
    (``jobs.last_build_key``; None otherwise)."""
    prefix = conf.BUILD_PREFIX if prefix is None else prefix
    name = storage_name(MANIFEST_NAME, prefix)
    data = read_bytes(storage, name)
    if data is None:
        return {"found": False}
    try:
        files = json.loads(data).get("files", {})
    except (ValueError, AttributeError):
        return {"found": True, "files": None, "urls": None, "time": None, "summary": None}
    # URLs once each: the XML files' (a .txt twin lists the same ones).
    built = [
        info
        for f, info in files.items()
        if (match := names.FILE_NAME_RE.fullmatch(f))
        and match["ext"] == "xml"
        and isinstance(info, dict)
    ]
    summary = quiet.quietly(None, quiet.available(), "get", last_build_key(storage, prefix))
    return {
        "found": True,
        "files": len(files),
        "urls": sum(int(info.get("urls") or 0) for info in built),
        "time": _modified(storage, name),
        "summary": summary if isinstance(summary, dict) else None,
    }


class WaitFailed(RuntimeError):
    """A build waited for did not write its index: ``files`` were not built."""

    def __init__(self, message: str, files: Sequence[str] = ()) -> None:
        self.files = list(files)
        if self.files:
            shown = ", ".join(self.files[:10]) + (" ..." if len(self.files) > 10 else "")
            message += f" {len(self.files)} file(s) not built: {shown}."
        super().__init__(message)


def wait(
    storage: Storage,
    prefix: str | None = None,
    generation: str | None = None,
    *,
    progress: Progress | None = None,
    stalled_after: float = STALLED_AFTER,
    timeout: float | None = None,
    poll: float = POLL_SECONDS,
) -> RunningBuild | None:
    """Look at the storage every ``poll`` seconds until the index of the plan
    ``generation`` (None: the plan running now) is written. Returns the
    build as last seen (None: no build was running). ``progress`` is called
    as ``progress(files done, files total, detail)`` after each look."""
    prefix = conf.BUILD_PREFIX if prefix is None else prefix
    started = moved = clock()
    seen: RunningBuild | None = None
    while True:
        running = running_build(storage, prefix)
        if running is None:
            # Its plan is removed right after its index is written.
            if seen is not None and progress is not None:
                total = seen.files_total
                progress(total, total, f"{seen.jobs:,}/{seen.jobs:,} jobs, index written")
            return seen
        if generation is None:
            generation = running.generation
        elif running.generation != generation:
            raise WaitFailed(
                f"The build (plan {generation}) was replaced by a newer one (plan "
                f"{running.generation}), which builds what it left."
            )
        if seen is None or running.jobs_done != seen.jobs_done:
            moved = clock()
        seen = running
        if progress is not None:
            progress(
                running.files_done,
                running.files_total,
                f"{running.jobs_done:,}/{running.jobs:,} jobs"
                + (", enqueued" if running.enqueued else ""),
            )
        now = clock()
        if now - moved >= stalled_after:
            if not running.missing:
                raise WaitFailed(
                    f"Every file is built but no index was written for {now - moved:.0f} s "
                    "(run build_sitemaps to write it)."
                )
            raise WaitFailed(
                f"The build is stalled: no file job finished for {now - moved:.0f} s "
                "(its workers may be lost; a rerun builds only the missing files).",
                running.missing,
            )
        if timeout is not None and now - started >= timeout:
            raise WaitFailed(f"The build did not finish within {timeout:.0f} s.", running.missing)
        sleep(poll)
