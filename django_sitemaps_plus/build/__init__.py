"""Static builds: every sitemap file written to a storage, atomically and incrementally.

``build()`` renders each registered section's files and the index, and writes
them to a Django storage (``storage.get_build_storage``). A build is a plan of
independent file jobs plus one index; a module holds each step:

- ``plan``: the **plan** (``make_plan``), made once: each file's section,
  page, URL count, lastmod and key range, as the index lists them
  (``FileJob``, ``BuildPlan``); kept in the storage (``PLAN_DIR``) until the
  index is written.
- ``jobs``: the **file jobs** (``run_job``), in any order and any process
  that reaches the storage, each leaving a record in the storage; the
  **index** (``finish``), only when every job has its record. A failed or
  killed build raises ``BuildFailed`` naming the files not built; its plan
  stays, and the next build with the same options runs only the jobs
  without a record.
- ``run``: ``build()``, which runs them in one process, or in forked ones
  (``workers``: ``build(jobs=N)``); ``tasks`` sends them to task workers.
- ``files``: what a build writes: each file replaced atomically with its
  ``.gz`` twin, skipped when the manifest (``sitemaps-manifest.json``) has
  its SHA-256 or fingerprint (``Writer``); the interim index that keeps
  lastmods from lagging while files are replaced; the manifest.
- ``lock``: **one build at a time** (``build_lock``; a second build raises
  ``BuildRunning``), and the temporaries a killed build left.
- ``urls_list``: ``generate_from_urls()``, the generator mode: a plain list
  of URLs to sitemap files (XML or text), split at 50,000 URLs or
  52,428,800 bytes, with an index over several XML files.

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
