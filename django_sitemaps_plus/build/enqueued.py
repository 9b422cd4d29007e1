"""The file job of an enqueued build, whatever queue carries it: both
``tasks.build_file`` (Django's Tasks framework) and ``contrib.celery.build_file``
are ``run_enqueued_job``, so a job does the same wherever it runs
(docs/deployment.md, "Three ways to build").

Each job writes its files and record, then counts itself done in the sitemap
cache; the one that counts the last job writes the index under the build
lock, after checking every record in the storage: the records decide, the
count only says when to look (every job looks when the count is lost or
``incr`` is not atomic). A job of a finished or replaced plan does nothing.
Its arguments are plain JSON: the storage travels as its alias or folder.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.memcached import BaseMemcachedCache
from django.core.cache.backends.redis import RedisCache
from django.core.files.storage import Storage

from django_sitemaps_plus.build.jobs import BuildFailed, finish, run_job
from django_sitemaps_plus.build.lock import CACHE_LOCK_SECONDS, BuildRunning, build_lock
from django_sitemaps_plus.build.plan import (
    BuildPlan,
    FileJob,
    current_generation,
    jobs_counter_key,
    load_plan,
)
from django_sitemaps_plus.conf import get_cache
from django_sitemaps_plus.serving import quiet
from django_sitemaps_plus.serving.storage import get_build_storage


def run_enqueued_job(
    storage_alias: str | None,
    directory: str | None,
    plan: dict[str, Any],
    job: dict[str, Any],
) -> dict[str, Any]:
    """One file job of an enqueued plan (``plan``: the plan without its
    jobs); the one that finishes last writes the index. Returns the job's
    record (``"index": True`` in the one that wrote the index), or
    ``{"superseded": True}`` when the plan is done or was replaced."""
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
        quiet.quietly(None, cache, "touch", key, CACHE_LOCK_SECONDS)

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
    and file caches) reads then writes, and two jobs finishing together
    would count as one."""
    if isinstance(cache, (RedisCache, BaseMemcachedCache, LocMemCache)):
        return True
    return type(cache).__module__.startswith("django_redis.")


#: How often, a second apart, the last job tries for the build lock (held a
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
                quiet.quietly(None, quiet.available(), "delete", jobs_counter_key(plan))
                return True
        except BuildRunning:
            if attempt + 1 == FINISH_ATTEMPTS:
                raise
            _wait_for_lock()
    return False


def _wait_for_lock() -> None:
    time.sleep(1)
