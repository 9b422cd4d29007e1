"""Where a build's file jobs run: in this process, or in worker processes.

``build(jobs=N)`` (``build_sitemaps --jobs N``) hands the jobs of its plan to
N processes forked from the one that holds the build lock: they inherit
Django's setup, the sections and the plan, so nothing is pickled but a job's
number and its outcome. Database and cache connections are closed before the
fork, and each worker copies the storage (``_detach``); the files are the
same, byte for byte, as one process writes. A worker that dies fails its jobs
and those not started; the next build runs only those. Where ``fork`` is not
available (Windows) the jobs run in this process.
"""

from __future__ import annotations

import contextlib
import copy
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from django.core.cache import caches
from django.core.files.storage import InMemoryStorage, Storage
from django.db import connections

from django_sitemaps_plus.build.jobs import run_job
from django_sitemaps_plus.build.plan import BuildPlan, FileJob
from django_sitemaps_plus.sites import SiteContext

#: Why a job cancelled when another failed has no record.
NOT_RUN = "not run: another job failed"
#: What a forked worker runs its jobs with (set in the parent before the fork).
_inherited: tuple[Storage, BuildPlan, SiteContext, Callable[[], None]] | None = None


def process_count(jobs: int) -> int:
    """Worker processes for ``jobs`` (0: one per CPU this process may use)."""
    if jobs < 0:
        raise ValueError(f"jobs must be 0 (one per CPU) or more, not {jobs}.")
    if jobs == 0:
        cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
        return max(1, len(cpus) if cpus else (os.cpu_count() or 1))
    return jobs


def check(storage: Storage, jobs: int) -> None:
    """Raise ValueError, before anything is planned, when ``jobs`` worker
    processes cannot build into ``storage``."""
    if process_count(jobs) > 1 and isinstance(storage, InMemoryStorage):
        raise ValueError("Worker processes cannot share an InMemoryStorage: build with jobs=1.")


def run_jobs(
    storage: Storage,
    plan: BuildPlan,
    jobs: Sequence[FileJob],
    renew: Callable[[], None],
    processes: int,
    site: SiteContext,
) -> Iterator[tuple[FileJob, dict[str, Any] | None, BaseException | None]]:
    """Run ``jobs``, yielding each with its record (``run_job``'s, once its
    files and record are written) or the error it failed with. In one process they run in order and
    stop at the first failure; with worker processes, jobs not started
    when one fails are not started."""
    processes = min(process_count(processes), len(jobs))
    if processes <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for job in jobs:
            try:
                record = run_job(storage, plan, job, site, renew)
            except Exception as exc:
                yield job, None, exc
                return
            yield job, record, None
        return
    global _inherited
    _close_connections()
    _inherited = (storage, plan, site, renew)
    context = multiprocessing.get_context("fork")
    place = {id(job): index for index, job in enumerate(plan.jobs)}
    try:
        with ProcessPoolExecutor(processes, mp_context=context, initializer=_detach) as pool:
            pending: dict[Future[dict[str, Any]], FileJob] = {
                pool.submit(_run_inherited, place[id(job)]): job for job in jobs
            }
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                failed = False
                for future in finished:
                    job = pending.pop(future)
                    error = future.exception()
                    failed = failed or error is not None
                    renew()
                    yield job, None if error is not None else future.result(), error
                if failed:
                    # Jobs not started are not started; running ones finish.
                    for future in pending:
                        future.cancel()
                    for future, job in pending.items():
                        cancelled = future.cancelled()
                        error = RuntimeError(NOT_RUN) if cancelled else future.exception()
                        yield job, None if error is not None else future.result(), error
                    return
    finally:
        _inherited = None


def _detach() -> None:
    """In a new worker process: a copy of the inherited storage of its own.
    A storage that keeps network connections drops them when copied
    (django-storages' S3 keeps a boto3 session per thread, left out by its
    ``__getstate__``), so the worker opens its own instead of sending its
    requests down the parent's pooled sockets alongside its siblings."""
    global _inherited
    assert _inherited is not None, "run in a process forked by run_jobs"
    storage, plan, site, renew = _inherited
    with contextlib.suppress(TypeError, copy.Error):  # a storage that cannot be copied
        storage = copy.copy(storage)
    _inherited = (storage, plan, site, renew)


def _run_inherited(index: int) -> dict[str, Any]:
    """A job in a forked worker, by its place in the inherited plan; its
    record (plain JSON: it travels back to the parent)."""
    assert _inherited is not None, "run in a process forked by run_jobs"
    storage, plan, site, renew = _inherited
    return run_job(storage, plan, plan.jobs[index], site, renew)


def _close_connections() -> None:
    """Close what a forked process must not share: database connections (an
    in-memory SQLite database stays open: the fork has a copy) and caches'
    sockets."""
    connections.close_all()
    for cache in caches.all(initialized_only=True):
        cache.close()
