"""Enqueued builds on Celery (``build_sitemaps --enqueue --enqueue-on
celery``, ``django_sitemaps_plus.contrib.celery``), in process: the jobs go
to a Celery app on kombu's in-memory broker and are run from there as a
worker would run them. tests/build/test_build_celery.py runs a real worker on
RabbitMQ."""

from __future__ import annotations

import io
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from django_sitemaps_plus import register, tasks
from django_sitemaps_plus.build.files import INDEX_NAME
from django_sitemaps_plus.build.plan import PLAN_DIR
from tests.testapp.models import Article
from tests.utils import articles, at, files_of

celery = pytest.importorskip("celery", reason="the celery extra is not installed")

pytestmark = pytest.mark.django_db

TASK_NAME = "django_sitemaps_plus.build_file"


@pytest.fixture
def pages(registry) -> None:
    register(Article, limit=2, lastmod_fields=["updated_at"])
    articles(7)  # pages 1 to 4
    Article.objects.update(updated_at=at(1))


def _use_app(app: Any) -> Iterator[Any]:
    """``app`` as the current and default Celery app while the test runs
    (None: none, as in a process that made none; Celery then falls back to
    an app of its own)."""
    from celery import _state

    previous = getattr(_state._tls, "current_app", None), _state.default_app
    _state._set_current_app(app)
    _state.set_default_app(app)
    try:
        yield app
    finally:
        _state._set_current_app(previous[0])
        _state.set_default_app(previous[1])


@pytest.fixture
def celery_app() -> Iterator[Any]:
    """A Celery app on kombu's in-memory broker (messages stay in this process)."""
    yield from _use_app(celery.Celery("sitemaps-plus-tests", broker="memory://"))


def enqueue(folder: Path, *args: str) -> dict[str, Any]:
    stdout = io.StringIO()
    call_command(
        "build_sitemaps", "--dir", str(folder), "--text", "--enqueue",
        "--enqueue-on", "celery", "--format", "json", *args, stdout=stdout,
    )  # fmt: skip
    report: dict[str, Any] = json.loads(stdout.getvalue())
    return report


def take_messages(app: Any, queue: str) -> list[Any]:
    """Every message waiting on ``queue``, acknowledged."""
    messages = []
    with app.connection_for_read() as connection:
        channel = connection.default_channel
        while (message := channel.basic_get(queue)) is not None:
            message.ack()
            messages.append(message)
    return messages


class TestEnqueuedOnCelery:
    def test_the_jobs_go_to_the_queue_as_json_and_build_what_a_plain_build_does(
        self, pages, tmp_path, celery_app
    ):
        out = tmp_path / "enqueued"
        report = enqueue(out, "--queue", "sitemaps-q")
        assert report["jobs"] == report["enqueued"] == 4
        messages = take_messages(celery_app, "sitemaps-q")
        assert [message.headers["task"] for message in messages] == [TASK_NAME] * 4
        assert {message.content_type for message in messages} == {"application/json"}
        assert not (out / INDEX_NAME).exists()

        task = celery_app.tasks[TASK_NAME]
        # The message stays on the queue until its job has ended, and goes
        # back when the pool process running it dies.
        assert task.acks_late is True and task.reject_on_worker_lost is True
        records = []
        for message in messages:  # as a worker runs them, one by one
            args, kwargs, _ = message.decode()
            records.append(task(*args, **kwargs))
        assert [record.get("index", False) for record in records] == [False] * 3 + [True]
        assert not (out / PLAN_DIR).exists()
        call_command("build_sitemaps", "--dir", str(tmp_path / "plain"), "--text", "--quiet")
        assert files_of(out) == files_of(tmp_path / "plain")
        # A message delivered again (a retry) does nothing: its plan is done.
        args, kwargs, _ = messages[-1].decode()
        assert task(*args, **kwargs) == {"superseded": True}

    def test_without_queue_the_apps_default_queue(self, pages, tmp_path, celery_app):
        enqueue(tmp_path)
        assert len(take_messages(celery_app, "celery")) == 4

    def test_a_broker_that_does_not_answer_enqueues_and_plans_nothing(self, pages, tmp_path):
        with socket.socket() as unused:
            unused.bind(("127.0.0.1", 0))
            port = unused.getsockname()[1]
        app = celery.Celery("down", broker=f"amqp://guest:secret@127.0.0.1:{port}//")
        for _ in _use_app(app):
            with pytest.raises(CommandError, match="does not answer") as refused:
                enqueue(tmp_path / "out")
        assert refused.value.returncode == 1
        assert "Nothing was enqueued" in str(refused.value)
        assert "secret" not in str(refused.value)
        assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())

    def test_a_broker_that_stops_answering_while_jobs_are_sent(
        self, pages, tmp_path, celery_app, monkeypatch
    ):
        from kombu.exceptions import OperationalError

        from django_sitemaps_plus.contrib import celery as celery_path

        task = celery_app.tasks[TASK_NAME]
        calls: list[int] = []

        def failing_after_two(*args: Any, **kwargs: Any) -> None:
            calls.append(1)
            if len(calls) > 2:
                raise OperationalError("connection reset")
            return original(*args, **kwargs)

        original = task.apply_async
        monkeypatch.setattr(celery_path, "build_file", task)
        monkeypatch.setattr(task, "apply_async", failing_after_two)
        with pytest.raises(CommandError, match="after 2 of 4 jobs") as failed:
            enqueue(tmp_path)
        assert failed.value.returncode == 1
        assert len(take_messages(celery_app, "celery")) == 2


class TestUsage:
    def test_without_a_celery_app(self, pages, tmp_path):
        for _ in _use_app(None):  # Celery's fallback app: nothing configured
            with pytest.raises(CommandError, match="need a Celery app") as refused:
                enqueue(tmp_path)
        assert refused.value.returncode == 2

    def test_without_celery_the_command_says_what_to_install(
        self, pages, tmp_path, monkeypatch, celery_app
    ):
        monkeypatch.setattr(tasks, "celery_sender", None)
        with pytest.raises(CommandError, match=r"django-sitemaps-plus\[celery\]") as refused:
            enqueue(tmp_path)
        assert refused.value.returncode == 2

    def test_from_code(self, pages, tmp_path, celery_app):
        with pytest.raises(ValueError, match="TASKS backend"):
            tasks.enqueue_build(directory=str(tmp_path), enqueue_on="celery", backend="x")
        with pytest.raises(ValueError, match="'tasks' or 'celery'"):
            tasks.enqueue_build(directory=str(tmp_path), enqueue_on="rq")  # type: ignore[arg-type]
        assert not list(tmp_path.iterdir())

    @pytest.mark.parametrize(
        "args",
        [["--enqueue-on", "celery"], ["--enqueue", "--enqueue-on", "celery", "--backend", "x"]],
    )
    def test_options_that_do_not_go_together(self, pages, tmp_path, args):
        with pytest.raises(CommandError) as refused:
            call_command("build_sitemaps", "--dir", str(tmp_path), *args)
        assert refused.value.returncode == 2
        assert not list(tmp_path.iterdir())
