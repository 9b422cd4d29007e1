"""Enqueued builds on Celery: ``build_sitemaps --enqueue --enqueue-on celery``.

The file jobs of a build go to the current Celery app's broker as
``django_sitemaps_plus.build_file`` tasks, which run the same
``enqueued.run_enqueued_job`` as the Tasks framework's task, on every Django
the package supports (docs/deployment.md). ``django_sitemaps_plus.tasks``
imports this module when Celery is installed, so ``app.autodiscover_tasks()``
registers the task. It is ``acks_late`` and ``reject_on_worker_lost``: a job
whose worker dies is run again, and a job run again is harmless (its plan
already done: a no-op; else it renders and records its file once more).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celery import _state, current_app, shared_task
from django.core.exceptions import ImproperlyConfigured
from kombu.exceptions import OperationalError

from django_sitemaps_plus.build.enqueued import run_enqueued_job

#: The task's name on the broker: stable whatever module defines it.
TASK_NAME = "django_sitemaps_plus.build_file"

#: One file job of an enqueued plan; arguments and result are plain JSON,
#: and no result backend is needed (the records are in the storage).
build_file: Any = shared_task(
    name=TASK_NAME,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)(run_enqueued_job)


def configured_app() -> Any:
    """The current Celery app; ``ImproperlyConfigured`` when there is none
    (Celery's fallback app, which nothing configured)."""
    app = current_app._get_current_object()
    if app is _state.default_app and app.main == "default":
        raise ImproperlyConfigured(
            "Enqueued builds on Celery need a Celery app: create one (app = "
            "Celery('proj'), configured from Django's settings) and import it when "
            "Django starts, as Celery's Django guide does in proj/__init__.py."
        )
    return app


def sender(queue_name: str | None) -> Callable[[list[tuple[Any, ...]]], None]:
    """What sends the jobs of a plan to ``queue_name`` (None: the app's
    default queue) on the current app's broker; raises first when there is
    no app, or when its broker does not answer, so nothing is planned."""
    app = configured_app()
    if not app.conf.task_always_eager:  # an eager app runs tasks in place
        with app.connection_for_write() as connection:
            try:
                connection.ensure_connection(max_retries=1, interval_start=0)
            except (OSError, OperationalError) as exc:
                # as_uri() leaves the password out.
                raise ConnectionError(
                    f"Celery's broker at {connection.as_uri()} does not answer: {exc}. "
                    "Nothing was enqueued."
                ) from exc
    options = {"queue": queue_name} if queue_name else {}

    def send(jobs: list[tuple[Any, ...]]) -> None:
        """Each job's arguments (``tasks.JobArguments``) as one message."""
        sent = 0
        try:
            with app.producer_or_acquire() as producer:
                for arguments in jobs:
                    build_file.apply_async(arguments, producer=producer, **options)
                    sent += 1
        except (OSError, OperationalError) as exc:
            raise ConnectionError(
                f"Celery's broker stopped answering after {sent} of {len(jobs)} jobs: "
                f"{exc}. The build counts as running until its count expires; the next "
                "build then resumes it."
            ) from exc

    return send
