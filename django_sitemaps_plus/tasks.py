"""Enqueued builds: file jobs run by task workers, on Django's Tasks
framework (the default) or on Celery (docs/deployment.md).

``enqueue_build()`` (``build_sitemaps --enqueue``) makes the plan under the
build lock (``build.plan.make_plan``), keeps it in the storage, and sends one
message per file job: a ``build_file`` task on a ``TASKS`` backend, or with
``enqueue_on="celery"`` a ``contrib.celery.build_file`` task on the current
Celery app's broker. Both run ``enqueued.run_enqueued_job``: the last job to
finish writes the index.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, Literal

from django_sitemaps_plus.build.enqueued import finish_enqueued, run_enqueued_job
from django_sitemaps_plus.build.jobs import unfinished_jobs
from django_sitemaps_plus.build.lock import CACHE_LOCK_SECONDS, build_lock
from django_sitemaps_plus.build.plan import BuildPlan, jobs_counter_key, make_plan
from django_sitemaps_plus.conf import conf, get_cache
from django_sitemaps_plus.serving import quiet
from django_sitemaps_plus.serving.storage import get_build_storage
from django_sitemaps_plus.sites import SiteContext, site_context

#: The task queues an enqueued build can go to.
EnqueueOn = Literal["tasks", "celery"]
#: One file job's arguments: storage alias, folder, plan header, job.
JobArguments = tuple[str | None, str | None, dict[str, Any], dict[str, Any]]
#: Sends the file jobs of a plan.
Send = Callable[[list[JobArguments]], None]

#: ``contrib.celery.sender``; None without Celery.
celery_sender: Callable[[str | None], Send] | None
# Only with Celery installed (it imports celery): the Celery task is then
# registered wherever this module is imported, so a Celery worker's
# ``app.autodiscover_tasks()`` finds it with the Tasks framework's one.
if importlib.util.find_spec("celery") is not None:
    from django_sitemaps_plus.contrib.celery import sender as celery_sender
else:  # pragma: no cover - the test extra installs Celery
    celery_sender = None


def _tasks_framework() -> Any:
    """``django.tasks`` (Django 6.0+), else the ``django-tasks`` backport; None."""
    for name in ("django.tasks", "django_tasks"):
        with contextlib.suppress(ImportError):
            return importlib.import_module(name)
    return None


_framework = _tasks_framework()
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
    """One file job of an enqueued plan (``enqueued.run_enqueued_job``)."""
    return run_enqueued_job(storage_alias, directory, plan, job)


def _send_as_tasks(backend: str | None, queue_name: str | None) -> Send:
    if _framework is None:
        raise ImportError(
            "Enqueued builds need Django's Tasks framework: Django 6.0+, or "
            "pip install django-sitemaps-plus[tasks] (the django-tasks package)."
        )
    task = build_file
    if backend or queue_name:
        task = task.using(
            **({"backend": backend} if backend else {}),
            **({"queue_name": queue_name} if queue_name else {}),
        )

    def send(jobs: list[JobArguments]) -> None:
        for arguments in jobs:
            task.enqueue(*arguments)

    return send


def _sender(enqueue_on: EnqueueOn, backend: str | None, queue_name: str | None) -> Send:
    """What sends the jobs; raises before anything is planned when it cannot
    (``ImportError``: not installed; ``ImproperlyConfigured``;
    ``ConnectionError``: Celery's broker does not answer)."""
    if enqueue_on == "tasks":
        return _send_as_tasks(backend, queue_name)
    if enqueue_on != "celery":
        raise ValueError(f"enqueue_on: 'tasks' or 'celery', not {enqueue_on!r}.")
    if backend:
        raise ValueError("backend names a TASKS backend: it does not go with Celery.")
    if celery_sender is None:
        raise ImportError(
            "Enqueued builds on Celery need Celery: pip install django-sitemaps-plus[celery]."
        )
    return celery_sender(queue_name)


def enqueue_build(
    *,
    storage_alias: str | None = None,
    directory: str | None = None,
    site: SiteContext | None = None,
    gzip: bool | None = None,
    text: bool = False,
    prefix: str | None = None,
    force: bool = False,
    enqueue_on: EnqueueOn = "tasks",
    backend: str | None = None,
    queue_name: str | None = None,
) -> tuple[BuildPlan, int]:
    """Plan a build of the storage (``storage_alias`` of ``STORAGES``, or
    ``directory``; neither: ``BUILD_STORAGE``/``BUILD_DIR``) and enqueue its
    file jobs that have no record yet, on the Tasks framework (``backend``:
    a ``TASKS`` alias) or on Celery; ``queue_name`` is the queue of either.
    Returns the plan and how many jobs were enqueued. Raises
    ``BuildRunning`` when another build holds the storage (a plain one, or
    an enqueued one whose workers still work)."""
    send = _sender(enqueue_on, backend, queue_name)
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
    send([(storage_alias, directory, header, asdict(job)) for job in todo])
    return plan, len(todo)
