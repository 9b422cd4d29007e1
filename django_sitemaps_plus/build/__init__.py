"""Static builds: every sitemap file written to a storage, atomically and incrementally.

A build is a plan of independent file jobs plus one index, a module per step
(docs/architecture.md, "A build"): ``plan`` (``make_plan``, kept in the storage
until the index is written), ``jobs`` (``run_job`` in any process, each leaving
a record; ``finish`` writes the index once every job has one, else
``BuildFailed``, and a rerun builds only the missing files), ``run``
(``build()``, in this process or forked ones), ``files`` (atomic writes, skips
by SHA-256 or fingerprint, the interim index, the manifest), ``lock`` (one
build at a time: ``BuildRunning``) and ``urls_list`` (``generate_from_urls``).

Section files are written first, the index only after all of them, and
files the new index no longer lists are removed last: a crawler never reads
an index naming a missing or half-written file, and a build that fails or is
killed leaves the previous set intact.
"""

from django_sitemaps_plus.build.files import INDEX_NAME, MANIFEST_NAME, BuildResult
from django_sitemaps_plus.build.jobs import (
    LAST_BUILD_SECONDS,
    BuildFailed,
    finish,
    last_build_key,
    run_job,
    unfinished_jobs,
)
from django_sitemaps_plus.build.lock import (
    CACHE_LOCK_SECONDS,
    LOCK_NAME,
    BuildRunning,
    build_lock,
)
from django_sitemaps_plus.build.plan import (
    GENERATION_FILE,
    PLAN_DIR,
    PLAN_FILE,
    BuildPlan,
    FileJob,
    current_generation,
    enqueued_running,
    jobs_counter_key,
    load_plan,
    make_plan,
)
from django_sitemaps_plus.build.run import Progress, build
from django_sitemaps_plus.build.urls_list import Generated, UrlListError, generate_from_urls

__all__ = [
    "CACHE_LOCK_SECONDS",
    "GENERATION_FILE",
    "INDEX_NAME",
    "LAST_BUILD_SECONDS",
    "LOCK_NAME",
    "MANIFEST_NAME",
    "PLAN_DIR",
    "PLAN_FILE",
    "BuildFailed",
    "BuildPlan",
    "BuildResult",
    "BuildRunning",
    "FileJob",
    "Generated",
    "Progress",
    "UrlListError",
    "build",
    "build_lock",
    "current_generation",
    "enqueued_running",
    "finish",
    "generate_from_urls",
    "jobs_counter_key",
    "last_build_key",
    "load_plan",
    "make_plan",
    "run_job",
    "unfinished_jobs",
]
