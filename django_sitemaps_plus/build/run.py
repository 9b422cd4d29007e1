"""One build from start to end: ``build()`` takes the build lock, makes the
plan, runs the jobs without a record (in this process, or in forked worker
processes: ``workers``) and writes the index. ``tasks`` enqueues the same
jobs on task workers instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.core.files.storage import Storage

from django_sitemaps_plus.build import workers
from django_sitemaps_plus.build.files import INDEX_NAME, BuildResult
from django_sitemaps_plus.build.jobs import BuildFailed, finish, unfinished_jobs
from django_sitemaps_plus.build.lock import build_lock
from django_sitemaps_plus.build.plan import FileJob, make_plan
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.serving.storage import get_build_storage
from django_sitemaps_plus.sites import SiteContext, site_context

Progress = Callable[[int, int, str], None]


def build(
    storage: Storage | None = None,
    *,
    site: SiteContext | None = None,
    gzip: bool | None = None,
    text: bool = False,
    prefix: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
    result: BuildResult | None = None,
    jobs: int = 1,
) -> BuildResult:
    """Write every registered section's files and the index to ``storage``.
    ``force`` rewrites files whose content did not change, and removes every
    built file the new index does not list, whether a manifest names it or
    not. ``progress`` is called as ``progress(done, total, name)`` after each
    file; ``result``, when given, is the ``BuildResult`` filled and returned,
    which ``progress`` may read for the counts so far (files written, URLs).
    ``jobs``: worker processes that render the files (0: one per CPU; see
    ``workers``). Raises ``BuildRunning`` when another build holds the lock,
    ``BuildFailed`` when some files could not be built.
    """
    storage = storage if storage is not None else get_build_storage()
    prefix = conf.BUILD_PREFIX if prefix is None else prefix
    result = result if result is not None else BuildResult()
    started = time.monotonic()
    workers.check(storage, jobs)
    site = site or site_context(None)
    gzip = conf.BUILD_GZIP if gzip is None else gzip
    with build_lock(storage, prefix) as renew:
        plan = make_plan(storage, site=site, gzip=gzip, text=text, prefix=prefix, force=force)
        todo = unfinished_jobs(storage, plan)
        per_job = 2 if text else 1
        total = len(plan.jobs) * per_job + 1
        done = (len(plan.jobs) - len(todo)) * per_job
        failed: list[FileJob] = []
        errors: list[BaseException] = []
        for job, record, error in workers.run_jobs(storage, plan, todo, renew, jobs, site):
            if error is not None:
                failed.append(job)
                errors.append(error)
                continue
            assert record is not None  # a job without an error has its record
            # The counts so far, for ``progress`` (``finish`` gives the final ones).
            result.written.extend(record.get("written", ()))
            result.urls += job.urls
            for name in job.files(text):
                done += 1
                if progress:
                    progress(done, total, name)
        if failed:
            # Every job without a record: the failed ones, and those not run.
            files = [name for job in unfinished_jobs(storage, plan) for name in job.files(text)]
            reasons = sorted({f"{type(e).__name__}: {e}" for e in errors})
            raise BuildFailed(files, reasons) from errors[0]
        finish(
            storage,
            plan,
            site,
            ran=[job.key for job in todo],
            renew=renew,
            started=started,
            result=result,
        )
        if progress:
            progress(total, total, INDEX_NAME)
        return result
