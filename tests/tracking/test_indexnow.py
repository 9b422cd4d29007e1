"""IndexNow against a real HTTP server on 127.0.0.1 (no mocked client)."""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Iterator

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

import django_sitemaps_plus.conf as sitemaps_conf
from django_sitemaps_plus import ModelSection, indexnow, register
from django_sitemaps_plus.signals import indexnow_queued
from tests.serving.test_cache import CountingCache, received
from tests.testapp.models import Article
from tests.utils import QuietHandler, http_server, require_module

pytestmark = [pytest.mark.django_db, pytest.mark.cache]

KEY = "a1b2c3d4e5f6a7b8"


class Endpoint:
    """A local IndexNow endpoint: records each POST, answers the queued statuses."""

    def __init__(self) -> None:
        self.posts: list[dict[str, object]] = []
        self.statuses: list[int] = []
        endpoint = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                endpoint.posts.append(json.loads(self.rfile.read(length)))
                status = endpoint.statuses.pop(0) if endpoint.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.handler = Handler
        self.url = ""

    def urls(self) -> list[str]:
        return [u for post in self.posts for u in post["urlList"]]  # type: ignore[attr-defined]


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    with http_server(server.handler) as base:
        server.url = f"{base}/indexnow"
        yield server


def test_endpoint_shuts_down_at_once(monkeypatch) -> None:
    # shutdown() waits for the loop to notice, up to one poll interval: the
    # loop polls every 0.05 s, not the default 0.5 s.
    from http.server import ThreadingHTTPServer

    polls: list[float] = []
    serve_forever = ThreadingHTTPServer.serve_forever

    def recording(self: ThreadingHTTPServer, poll_interval: float = 0.5) -> None:
        polls.append(poll_interval)
        serve_forever(self, poll_interval)

    monkeypatch.setattr(ThreadingHTTPServer, "serve_forever", recording)
    with http_server(Endpoint().handler):
        pass
    assert polls == [0.05]


@pytest.fixture
def configured(settings, endpoint, registry):
    settings.SITEMAPS_PLUS = {
        "BASE_URL": "https://example.com",
        "CACHE": True,
        "INDEXNOW_KEY": KEY,
        "INDEXNOW_ENDPOINT": endpoint.url,
        "INDEXNOW_TIMEOUT": 5,
    }
    # Start from an empty queue on a shared cache.
    from django_sitemaps_plus.conf import get_cache

    get_cache().delete_many(
        [f"{indexnow.PREFIX}:{k}" for k in ("head", "tail", "lock", "retry_at")]
    )
    return settings


class PublishedSection(ModelSection):
    queryset = Article.objects.filter(is_published=True)
    lastmod_fields = ["content_changed_at"]
    url_name = "article"
    url_kwargs = {"slug": "slug"}


def no_sleep(seconds: float) -> None:
    pass


class TestKeyFile:
    def test_key_file_is_served(self, configured):
        response = Client().get(f"/{KEY}.txt")
        assert response.status_code == 200
        assert response.content.decode() == KEY
        assert Client().get("/b1b2c3d4e5f6a7b8.txt").status_code == 404

    def test_no_key_no_file(self, settings):
        settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com"}
        assert Client().get(f"/{KEY}.txt").status_code == 404


class TestQueueing:
    def test_significant_save_is_queued_after_commit_and_submitted(
        self, configured, endpoint, django_capture_on_commit_callbacks
    ):
        register(Article)(PublishedSection)
        with django_capture_on_commit_callbacks(execute=True):
            article = Article.objects.create(title="First", slug="first")
            assert indexnow.pending() == []  # nothing before the commit
        assert indexnow.pending() == ["https://example.com/articles/first/"]
        result = indexnow.submit_pending(sleep=no_sleep)
        assert result.ok and result.submitted == 1
        assert endpoint.posts == [
            {
                "host": "example.com",
                "key": KEY,
                "keyLocation": f"https://example.com/{KEY}.txt",
                "urlList": ["https://example.com/articles/first/"],
            }
        ]
        assert indexnow.pending() == []
        # A save that changes no tracked field is not significant.
        with django_capture_on_commit_callbacks(execute=True):
            article.views = 10
            article.save()
            Article.objects.get(pk=article.pk).save(update_fields=["views"])
        assert indexnow.pending() == []
        # A content change is.
        with django_capture_on_commit_callbacks(execute=True):
            article.title = "New title"
            article.save()
        assert indexnow.pending() == ["https://example.com/articles/first/"]

    def test_queued_signal_is_sent_after_commit(
        self, configured, django_capture_on_commit_callbacks
    ):
        register(Article)(PublishedSection)
        first = "https://example.com/articles/first/"
        with received(indexnow_queued) as sent:
            with django_capture_on_commit_callbacks(execute=True):
                Article.objects.create(title="First", slug="first")
                assert sent == []  # nothing before the commit
            assert sent == [{"sender": None, "urls": [first]}]
            indexnow.enqueue(["https://example.com/a", "https://example.com/a", first])
        assert sent[1:] == [{"sender": None, "urls": ["https://example.com/a", first]}]

    def test_queueing_costs_what_the_docs_say(
        self,
        configured,
        monkeypatch,
        django_capture_on_commit_callbacks,
        django_assert_num_queries,
    ):

        register(Article)(PublishedSection)
        with django_capture_on_commit_callbacks() as callbacks:
            Article.objects.create(title="First", slug="first")
        *_, queue = callbacks  # after the cache invalidation's
        cache = CountingCache(sitemaps_conf.get_cache())
        monkeypatch.setattr(sitemaps_conf, "get_cache", lambda: cache)
        with django_assert_num_queries(1):  # does the sitemap list it?
            queue()
        assert cache.calls == ["add", "incr", "set_many"]
        assert indexnow.pending() == ["https://example.com/articles/first/"]

    def test_unlisted_objects_are_not_queued_and_deletions_are(
        self, configured, django_capture_on_commit_callbacks
    ):
        register(Article)(PublishedSection)
        with django_capture_on_commit_callbacks(execute=True):
            Article.objects.create(title="Draft", slug="draft", is_published=False)
        assert indexnow.pending() == []
        article = Article.objects.create(title="Gone", slug="gone")
        indexnow.submit_pending(sleep=no_sleep)
        with django_capture_on_commit_callbacks(execute=True):
            article.delete()
        assert "https://example.com/articles/gone/" in indexnow.pending()

    def test_rolled_back_change_is_not_queued(self, configured):
        from django.db import transaction

        register(Article)(PublishedSection)
        with pytest.raises(RuntimeError), transaction.atomic():
            Article.objects.create(title="x", slug="rolled-back")
            raise RuntimeError
        assert indexnow.pending() == []

    def test_is_significant_rules(self, configured):
        section = PublishedSection(Article)
        old = Article(title="t", slug="s", content_changed_at=timezone.now() - dt.timedelta(1))
        fresh = Article(title="t", slug="s", content_changed_at=timezone.now())
        assert indexnow.is_significant(section, old, created=True, deleted=False)
        assert indexnow.is_significant(section, old, created=False, deleted=True)
        assert not indexnow.is_significant(section, old, created=False, deleted=False)
        assert indexnow.is_significant(section, fresh, created=False, deleted=False)
        assert not indexnow.is_significant(
            section, fresh, created=False, deleted=False, update_fields=["views"]
        )


class TestSubmitting:
    def test_batches_per_size_and_host(self, configured, endpoint):
        configured.SITEMAPS_PLUS = {**configured.SITEMAPS_PLUS, "INDEXNOW_BATCH_SIZE": 2}
        indexnow.enqueue([f"https://example.com/{n}" for n in range(5)])
        indexnow.enqueue(["https://www.example.com/other"])
        result = indexnow.submit_pending(sleep=no_sleep)
        assert result.submitted == 6 and result.ok
        assert [len(p["urlList"]) for p in endpoint.posts] == [2, 2, 1, 1]  # type: ignore[arg-type]
        assert endpoint.posts[-1]["host"] == "www.example.com"

    def test_failures_are_retried_with_backoff(self, configured, endpoint, caplog):
        endpoint.statuses = [503, 429, 200]
        waits: list[float] = []
        indexnow.enqueue(["https://example.com/a"])
        result = indexnow.submit_pending(sleep=waits.append)
        assert result.ok and result.requests == 3
        assert waits == [1, 2]
        assert len(endpoint.posts) == 3
        assert "attempt 1/5 failed" in caplog.text

    def test_still_failing_keeps_the_queue_and_backs_off(self, configured, endpoint):
        endpoint.statuses = [500] * 10
        indexnow.enqueue(["https://example.com/a", "https://example.com/b"])
        stdout = io.StringIO()
        with pytest.raises(CommandError) as error:
            call_command("indexnow_submit", "--max-attempts", "2", stdout=stdout)
        assert error.value.returncode == 1
        assert indexnow.pending() == ["https://example.com/a", "https://example.com/b"]
        # The next run waits out the backoff without contacting the endpoint.
        posts = len(endpoint.posts)
        call_command("indexnow_submit", stdout=stdout)
        assert len(endpoint.posts) == posts
        assert "Backing off" in stdout.getvalue()
        endpoint.statuses = []
        call_command("indexnow_submit", "--force", stdout=stdout)
        assert indexnow.pending() == []

    def test_run_while_another_submits_says_so(self, configured, endpoint, monkeypatch):
        from django_sitemaps_plus.conf import get_cache

        indexnow.enqueue(["https://example.com/a", "https://example.com/b"])
        get_cache().add(f"{indexnow.PREFIX}:lock", "another run", timeout=60)
        result = indexnow.submit_pending(sleep=no_sleep)
        assert result.busy and not result.ok
        assert (result.submitted, result.requests, result.remaining) == (0, 0, 2)
        stdout = io.StringIO()
        call_command("indexnow_submit", stdout=stdout)  # exit 0: that run sends them
        assert stdout.getvalue() == "Another run is submitting; 2 URL(s) queued, left to it.\n"
        assert endpoint.posts == []
        get_cache().delete(f"{indexnow.PREFIX}:lock")
        result = indexnow.submit_pending(sleep=no_sleep)
        assert not result.busy and result.submitted == 2 and result.ok

    def test_counting_the_queue_reads_no_url(self, configured, endpoint, monkeypatch):
        endpoint.statuses = [500]
        indexnow.enqueue(["https://example.com/a", "https://example.com/b"])
        assert indexnow.submit_pending(max_attempts=1, sleep=no_sleep).remaining == 2

        def reads_every_url() -> list[str]:
            raise AssertionError("pending() read to count")

        monkeypatch.setattr(indexnow, "pending", reads_every_url)
        stdout = io.StringIO()
        call_command("indexnow_submit", stdout=stdout)
        assert "Backing off after failures: 2 URL(s) wait" in stdout.getvalue()

    def test_endpoint_down_never_breaks_a_save(
        self, configured, django_capture_on_commit_callbacks
    ):
        configured.SITEMAPS_PLUS = {
            **configured.SITEMAPS_PLUS,
            "INDEXNOW_ENDPOINT": "http://127.0.0.1:9/indexnow",
        }
        register(Article)(PublishedSection)
        with django_capture_on_commit_callbacks(execute=True):
            Article.objects.create(title="x", slug="down")
        result = indexnow.submit_pending(max_attempts=1, sleep=no_sleep)
        assert not result.ok and result.remaining == 1

    @pytest.mark.cache
    def test_a_cache_that_is_down_never_breaks_a_save_nor_logs_a_traceback_per_save(
        self, configured, django_capture_on_commit_callbacks, caplog
    ):
        require_module("redis")
        from django_sitemaps_plus.serving import quiet
        from tests.recording_cache import redis_calls

        configured.CACHES = {
            **configured.CACHES,
            "down": {
                "BACKEND": "tests.recording_cache.CountingRedisCache",
                "LOCATION": "redis://127.0.0.1:9/0",  # nothing listens there
            },
        }
        configured.SITEMAPS_PLUS = {**configured.SITEMAPS_PLUS, "CACHE_ALIAS": "down"}
        register(Article)(PublishedSection)
        # The settings' change already met the dead cache (its invalidation).
        quiet.reset()
        caplog.clear()
        redis_calls.clear()
        for slug in ("one", "two"):
            with django_capture_on_commit_callbacks(execute=True):
                Article.objects.create(title=slug, slug=slug, is_published=True)
        # The first save's first call failed; the second save asked nothing.
        assert [outcome for _, outcome in redis_calls] == ["failed"]
        assert caplog.text.count(quiet.DOWN_MESSAGE) == 1
        assert caplog.text.count("not queued: the sitemap cache is down") == 2
        with_traceback = [r.getMessage() for r in caplog.records if r.exc_info]
        assert with_traceback == [quiet.DOWN_MESSAGE]

    def test_rejected_batch_is_dropped_and_logged(self, configured, endpoint, caplog):
        endpoint.statuses = [422]
        indexnow.enqueue(["https://example.com/not-mine"])
        result = indexnow.submit_pending(sleep=no_sleep)
        assert result.dropped == 1 and indexnow.pending() == []
        assert "HTTP 422" in caplog.text

    def test_command_add_and_report(self, configured, endpoint):
        stdout = io.StringIO()
        call_command("indexnow_submit", "--add", "https://example.com/x", stdout=stdout)
        assert "Submitted 1 URL(s) in 1 request(s)" in stdout.getvalue()
        assert endpoint.urls() == ["https://example.com/x"]

    def test_command_without_key_is_usage_error(self, settings):
        settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com"}
        with pytest.raises(CommandError) as error:
            call_command("indexnow_submit")
        assert error.value.returncode == 2
