"""The serving benchmark's settings plus a Tasks framework backend.

``bench.bench_build`` runs ``build_sitemaps`` with them in a fresh process:
the sitemap cache from ``BENCH_CACHE_URL`` (shared by every process of a run,
so a build after one change renders one file), ``CACHE`` on. ``--enqueue``
goes to the immediate backend (each file job runs as it is enqueued, in the
enqueuing process), or with ``BENCH_TASKS=rq`` to RQ workers
(``django-tasks-rq``) on the Redis of the cache, queue ``RQ_QUEUE``. Each
run names its cache key prefix and queue (``BENCH_CACHE_PREFIX``,
``BENCH_RQ_QUEUE``), so runs side by side on one Redis never meet.
"""

from __future__ import annotations

import os

from bench.serving.settings import *  # noqa: F403
from bench.serving.settings import CACHES, INSTALLED_APPS, env

CACHES["default"]["KEY_PREFIX"] = os.environ.get("BENCH_CACHE_PREFIX", "")
RQ_QUEUE = os.environ.get("BENCH_RQ_QUEUE", "sitemaps-plus-bench-build")

if os.environ.get("BENCH_TASKS") == "rq":
    INSTALLED_APPS = [*INSTALLED_APPS, "django_rq", "django_tasks_rq"]
    # "default" too: the Tasks framework checks build_file's own queue.
    QUEUES = ["default", RQ_QUEUE]
    RQ_QUEUES = {name: {"URL": env.str("BENCH_CACHE_URL")} for name in QUEUES}
    TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": QUEUES}}
else:
    try:  # Django 6.0+
        import django.tasks  # noqa: F401

        _TASKS = "django.tasks"
    except ImportError:  # the django-tasks package on 4.2-5.2
        _TASKS = "django_tasks"
    TASKS = {"default": {"BACKEND": f"{_TASKS}.backends.immediate.ImmediateBackend"}}
