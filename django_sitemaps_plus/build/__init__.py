"""Static builds: every sitemap file written to a storage, atomically and incrementally.

Importable from here: ``build()`` and what it gives and raises, and
``generate_from_urls``; the package's own modules and everything else are
imported by module path (``django_sitemaps_plus.build.plan``).

A build is a plan of independent file jobs plus one index, a module per step
(docs/architecture.md, "A build"): ``plan`` (``make_plan``, kept in the storage
until the index is written), ``jobs`` (``run_job`` in any process, each leaving
a record; ``finish`` writes the index once every job has one, else
``BuildFailed``, and a rerun builds only the missing files), ``run``
(``build()``, in this process or forked ones), ``files`` (atomic writes, skips
by SHA-256 or fingerprint, the interim index, the manifest), ``lock`` (one
build at a time: ``BuildRunning``), ``urls_list`` (``generate_from_urls``);
where the jobs run: ``workers`` (forked processes) or ``enqueued`` (a task
worker's job); ``status`` (a build followed from the storage alone).

Section files are written first, the index only after all of them, and
files the new index no longer lists are removed last: a crawler never reads
an index naming a missing or half-written file, and a build that fails or is
killed leaves the previous set intact.
"""

from django_sitemaps_plus.build.files import BuildResult
from django_sitemaps_plus.build.jobs import BuildFailed
from django_sitemaps_plus.build.lock import BuildRunning
from django_sitemaps_plus.build.run import Progress, build
from django_sitemaps_plus.build.urls_list import Generated, UrlListError, generate_from_urls

__all__ = [
    "BuildFailed",
    "BuildResult",
    "BuildRunning",
    "Generated",
    "Progress",
    "UrlListError",
    "build",
    "generate_from_urls",
]
