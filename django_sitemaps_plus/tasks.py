"""Builds on Django's Tasks framework: file jobs run by task workers.

``enqueue_build()`` (``build_sitemaps --enqueue``) makes the plan under the
build lock (``build.make_plan``), keeps it in the storage, and enqueues one
``build_file`` task per file job on a ``TASKS`` backend: ``django.tasks`` on
Django 6.0+, the ``django-tasks`` package before (``pip install
django-sitemaps-plus[tasks]``). Any backend whose workers run on machines
that reach the same storage and the same sitemap cache builds the files in
parallel: the database backend's workers, RQ, Celery.

Each task renders its file to the storage atomically and writes its record
(``build.run_job``), then counts itself done in the sitemap cache
(``cache.incr``: atomic on Redis, Memcached and local memory). The task
that counts the last job writes the index (``build.finish``) under the build
lock, after checking every job's record in the storage: the count only says
when to look. When the count is lost (evicted; a cache that is not shared),
or the cache's ``incr`` is a read then a write (the database and file
caches: two tasks may count as one), every task looks, and the one that
finds all records writes the index. A task of a plan that a newer build replaced does nothing.

The storage travels to the workers as its ``STORAGES`` alias or folder
(``storage_alias``, ``directory``; neither: the workers'
``BUILD_STORAGE``/``BUILD_DIR``); every job's arguments are plain JSON.
"""

from __future__ import annotations

import contextlib
import importlib
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.memcached import BaseMemcachedCache
from django.core.cache.backends.redis import RedisCache
from django.core.files.storage import Storage

from django_sitemaps_plus import quiet
from django_sitemaps_plus.build import (
    CACHE_LOCK_SECONDS,
    BuildFailed,
    BuildPlan,
    BuildRunning,
    FileJob,
    build_lock,
    current_generation,
    finish,
    jobs_counter_key,
    load_plan,
    make_plan,
    run_job,
    unfinished_jobs,
)
from django_sitemaps_plus.conf import conf, get_cache
from django_sitemaps_plus.location import SiteContext, site_context
from django_sitemaps_plus.storage import get_build_storage


def _tasks_module() -> Any:
    """``django.tasks`` (Django 6.0+), else the ``django-tasks`` backport."""
    for name in ("django.tasks", "django_tasks"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError(
        "Enqueued builds need Django's Tasks framework: Django 6.0+, or "
        "pip install django-sitemaps-plus[tasks] (the django-tasks package)."
    )


def _tasks_or_none() -> Any:
    try:
        return _tasks_module()
    except ImportError:
        return None


_framework = _tasks_or_none()
#: ``@task()`` of the Tasks framework (no Tasks framework: the function stays one).
_as_task: Callable[[Callable[..., dict[str, Any]]], Any] = (
    _framework.task() if _framework is not None else (lambda function: function)
)


@_as_task
def build_file(
    storage_alias: str | None,
    directory: str | None,
    plan: dict[str, Any],
    job: dict[str, Any],
) -> dict[str, Any]:
    """One file job of an enqueued plan (``plan``: the plan without its
    jobs); the one that finishes last writes the index."""
    storage = get_build_storage(storage_alias, directory)
    fields = {name: value for name, value in plan.items() if name != "total"}
    header = BuildPlan.from_json({**fields, "jobs": []})
    if current_generation(storage, header.prefix) != header.generation:
        return {"superseded": True}  # a newer build, or this one is done
    file_job = FileJob(**job)
    cache = get_cache()
    key = jobs_counter_key(header)

    def renew() -> None:
        # Keeps the build counted as running; a cache that is down lets it
        # expire (the records, in the storage, still say what is done).
        with contextlib.suppress(quiet.CacheDown):
            quiet.call(cache, "touch", key, CACHE_LOCK_SECONDS)

    record = run_job(storage, header, file_job, renew=renew)
    try:
        done: int | None = quiet.call(cache, "incr", key, passing=(ValueError,))
        renew()
    except (ValueError, quiet.CacheDown):
        done = None  # the count is lost (or unreachable): look at every record
    if not counts_atomically(cache):
        done = None  # a lost count would leave the index unwritten: look
    if done is None or done >= plan["total"]:
        record["index"] = finish_enqueued(storage, header.prefix, header.generation)
    return record


def counts_atomically(cache: BaseCache) -> bool:
    """Whether ``cache.incr`` is one atomic operation: Redis (Django's or
    django-redis), Memcached, local memory. ``BaseCache.incr`` (the database
    and file caches) reads then writes, and two tasks finishing together
    would count as one."""
    if isinstance(cache, (RedisCache, BaseMemcachedCache, LocMemCache)):
        return True
    return type(cache).__module__.startswith("django_redis.")


#: How often, a second apart, the last task tries for the build lock (held a
#: moment by a build that is being refused, say) before it fails.
FINISH_ATTEMPTS = 30


def finish_enqueued(storage: Storage, prefix: str, generation: str) -> bool:
    """Write the index of the enqueued plan ``generation`` if all its jobs
    have their record; returns whether it did."""
    for attempt in range(FINISH_ATTEMPTS):
        try:
            with build_lock(storage, prefix):
                plan = load_plan(storage, prefix)
                if plan is None or plan.generation != generation:
                    return False  # written already
                try:
                    finish(storage, plan)
                except BuildFailed:
                    return False  # a job still runs: the last one writes it
                with contextlib.suppress(quiet.CacheDown):
                    quiet.call(get_cache(), "delete", jobs_counter_key(plan))
                return True
        except BuildRunning:
            if attempt + 1 == FINISH_ATTEMPTS:
                raise
            _wait_for_lock()
    return False


def _wait_for_lock() -> None:
    time.sleep(1)


def enqueue_build(
    *,
    storage_alias: str | None = None,
    directory: str | None = None,
    site: SiteContext | None = None,
    gzip: bool | None = None,
    text: bool = False,
    prefix: str | None = None,
    force: bool = False,
    backend: str | None = None,
    queue_name: str | None = None,
) -> tuple[BuildPlan, int]:
    """Plan a build of the storage (``storage_alias`` of ``STORAGES``, or
    ``directory``; neither: ``BUILD_STORAGE``/``BUILD_DIR``) and enqueue its
    file jobs that have no record yet. Returns the plan and how many jobs
    were enqueued. Raises ``BuildRunning`` when another build holds the
    storage (a plain one, or an enqueued one whose workers still work)."""
    if _framework is None:
        _tasks_module()  # raises the ImportError that says what to install
    task = build_file
    if backend or queue_name:
        task = task.using(
            **({"backend": backend} if backend else {}),
            **({"queue_name": queue_name} if queue_name else {}),
        )
    storage = get_build_storage(storage_alias, directory)
    prefix = conf.BUILD_PREFIX if prefix is None else prefix
    with build_lock(storage, prefix):
        plan = make_plan(
            storage,
            site=site or site_context(None),
            gzip=conf.BUILD_GZIP if gzip is None else gzip,
            text=text,
            prefix=prefix,
            force=force,
            enqueued=True,
        )
        todo = unfinished_jobs(storage, plan)
        # The count exists from now on: the plan is running (make_plan
        # refuses a second build until it is gone or expired).
        # The cache must answer here (raises ``quiet.CacheDown``): the task
        # workers count their jobs in it.
        quiet.call(
            get_cache(),
            "set",
            jobs_counter_key(plan),
            len(plan.jobs) - len(todo),
            timeout=CACHE_LOCK_SECONDS,
        )
    if not todo:
        finish_enqueued(storage, prefix, plan.generation)
        return plan, 0
    # What a job needs of the plan (the index's figures stay in the storage).
    header = {
        **plan.as_json(),
        "jobs": [],
        "index_previous": {},
        "previous_files": [],
        "total": len(plan.jobs),
    }
    for job in todo:
        task.enqueue(storage_alias, directory, header, asdict(job))
    return plan, len(todo)
