"""Settings of the processes of the real-worker tests: RQ workers of the
Tasks framework (``manage.py rqworker``, tests/build/test_build_worker.py), Celery
workers (``celery -A tests.celery_app worker``, tests/build/test_build_celery.py),
and the ``build_sitemaps`` commands that enqueue on them.

The test suite's settings, plus: the ``django-tasks-rq`` backend on a Redis
queue; Celery's broker (``WORKER_AMQP_URL``: RabbitMQ); the sitemap cache on
the same Redis (the build's count of finished jobs and its lock are shared
by every process); the sections of ``tests.workerapp``. Every process shares one file-based database
(``DATABASE_URL``: the suite's own test database is not visible to other
processes). ``WORKER_QUEUE`` names the queue and prefixes the cache keys, so
runs side by side (CI runs the suite on two databases at once) never meet.
"""

from __future__ import annotations

import importlib.util

from tests.settings import *  # noqa: F403
from tests.settings import INSTALLED_APPS, env

if importlib.util.find_spec("celery") is not None:
    # The Celery app, made when Django starts (a site's proj/__init__.py).
    from tests.celery_app import app as celery_app  # noqa: F401

WORKER_REDIS_URL = env.str("WORKER_REDIS_URL", default="redis://127.0.0.1:6379/10")
WORKER_QUEUE = env.str("WORKER_QUEUE", default="sitemaps-plus-build")

INSTALLED_APPS = [*INSTALLED_APPS, "django_rq", "django_tasks_rq", "tests.workerapp"]
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": WORKER_REDIS_URL,
        "KEY_PREFIX": WORKER_QUEUE,
    }
}
# "default" too: the Tasks framework checks the queue ``build_file`` is
# declared on (its default queue) when the task is defined; the build's jobs
# go to WORKER_QUEUE (``build_sitemaps --enqueue --queue``).
QUEUES = ["default", WORKER_QUEUE]
RQ_QUEUES = {name: {"URL": WORKER_REDIS_URL} for name in QUEUES}
TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": QUEUES}}

# Celery: the broker only (the jobs' records are in the storage, no result
# backend); each test sends to a queue of its own (--queue WORKER_QUEUE).
CELERY_BROKER_URL = env.str("WORKER_AMQP_URL", default="amqp://guest:guest@127.0.0.1:5672//")
