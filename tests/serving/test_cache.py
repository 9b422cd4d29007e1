"""Cached serving: hits cost no query, changes invalidate precisely, HTTP is right.

Run on local memory by default and, with ``CACHE_URL``, on Redis and Memcached
(``pytest -m cache``).
"""

from __future__ import annotations

import datetime as dt
import gzip
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from django.core.cache import cache as default_cache
from django.core.management import call_command
from django.db import OperationalError, connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.http import http_date

import django_sitemaps_plus.conf as sitemaps_conf
from django_sitemaps_plus import ModelSection, Section, register
from django_sitemaps_plus.serving import cache as sitemap_cache
from django_sitemaps_plus.serving import entries, locks, responses, versions
from django_sitemaps_plus.signals import sitemaps_invalidated
from django_sitemaps_plus.sites import SiteContext
from tests.testapp.models import Article, Comment, Tag
from tests.utils import articles, at, cache_lookup, fetch, locs, require_module

pytestmark = [pytest.mark.cache, pytest.mark.django_db]

UTC = dt.timezone.utc
CACHED = {"BASE_URL": "https://example.com", "CACHE": True}


@pytest.fixture
def cached(settings):
    """Caching on; changing the setting starts a fresh cache generation."""
    settings.SITEMAPS_PLUS = dict(CACHED)
    return settings


@contextmanager
def received(signal) -> Iterator[list[dict[str, object]]]:
    """The arguments of every send of ``signal`` while the block runs."""
    sent: list[dict[str, object]] = []

    def receiver(**kwargs: object) -> None:
        kwargs.pop("signal", None)
        sent.append(kwargs)

    signal.connect(receiver, weak=False)
    try:
        yield sent
    finally:
        signal.disconnect(receiver)


def _chunk_keys(cache) -> list[str]:
    """Chunk keys of the counted section's file (locmem, Redis and Memcached alike)."""
    from django.test import RequestFactory

    from django_sitemaps_plus.registry import site
    from django_sitemaps_plus.serving.cache import Source

    request = RequestFactory().get("/sitemap-counted-1.xml")
    source = Source([site.get("counted")], "application/xml; charset=utf-8", lambda: None)
    where = sitemap_cache._lookup(cache, SiteContext("https://example.com"), request, source)
    assert where.held is not None
    return entries.chunk_keys(where.meta_key, where.held)


def _stored_entry(path: str) -> entries.Entry:
    """The cached metadata of the XML file at ``path`` (whatever its version)."""
    from django.test import RequestFactory

    from django_sitemaps_plus.serving.cache import Source

    source = Source([], "application/xml; charset=utf-8", lambda: None)  # type: ignore[arg-type,return-value]
    site = SiteContext("https://example.com")
    meta_key, _ = sitemap_cache._lookup_keys(site, RequestFactory().get(path), source)
    entry = entries.Entry.from_cache(default_cache.get(meta_key))
    assert entry is not None
    return entry


class CountingSection(Section):
    """A section without a model; counts how often its file is rendered."""

    writes_own_entries = True

    name = "counted"
    renders = 0
    delay = 0.0
    #: Called at the start of each render (a test holds the render there).
    hold: Callable[[], object] | None = None

    def items(self):
        return ["home", "about"]

    def page_entries(self, number, site, info=None):
        type(self).renders += 1
        if type(self).hold is not None:
            type(self).hold()
        time.sleep(self.delay)
        yield from super().page_entries(number, site, info)


@pytest.fixture
def counted(registry):
    CountingSection.renders = 0
    CountingSection.delay = 0.0
    CountingSection.hold = None
    register(CountingSection)
    yield CountingSection
    CountingSection.hold = None


class PausingCache:
    """The real cache, but the test's thread pauses after the read ``pause_after``
    picks until another thread has released a render lock."""

    def __init__(self, real, pause_after: Callable[[str, object], bool]) -> None:
        self.real = real
        self.pause_after = pause_after
        self.thread = threading.get_ident()
        self.paused = False
        self.holder_may_finish = threading.Event()
        self.released = threading.Event()

    def __getattr__(self, name):
        return getattr(self.real, name)

    def _maybe_pause(self, method: str, key: object) -> None:
        if (
            threading.get_ident() == self.thread
            and not self.paused
            and self.pause_after(method, key)
        ):
            self.paused = True
            self.holder_may_finish.set()
            assert self.released.wait(10)

    def get(self, key, *args, **kwargs):
        value = self.real.get(key, *args, **kwargs)
        self._maybe_pause("get", key)
        return value

    def get_many(self, keys, *args, **kwargs):
        value = self.real.get_many(keys, *args, **kwargs)
        self._maybe_pause("get_many", keys)
        return value

    def delete(self, key, *args, **kwargs):
        result = self.real.delete(key, *args, **kwargs)
        if key.endswith(":lock"):
            self.released.set()
        return result


def holder_finishes_during(monkeypatch, counted, pause_after) -> list[bytes]:
    """A request renders the cold file, holding the lock, while this thread's
    request for it runs up to the read ``pause_after`` picks; there it pauses
    until the holder has stored the file and released the lock. The bodies."""
    cache = PausingCache(sitemaps_conf.get_cache(), pause_after)
    monkeypatch.setattr(sitemaps_conf, "get_cache", lambda: cache)
    rendering = threading.Event()

    def hold() -> None:
        rendering.set()
        assert cache.holder_may_finish.wait(10)

    counted.hold = hold
    bodies: list[bytes] = []
    holder = threading.Thread(target=lambda: bodies.append(fetch("/sitemap-counted-1.xml")[1]))
    holder.start()
    assert rendering.wait(10)
    bodies.append(fetch("/sitemap-counted-1.xml")[1])
    holder.join(timeout=30)
    assert cache.paused
    return bodies


class TestHits:
    def test_warm_file_costs_no_query_and_is_identical(
        self, cached, registry, django_assert_num_queries
    ):
        register(Article, lastmod_fields=["updated_at"])
        articles(3, updated_at=at(3))
        cold, cold_body = fetch("/sitemap-articles-1.xml")
        assert cold.status_code == 200
        index, index_body = fetch("/sitemap.xml")
        assert index.status_code == 200
        with django_assert_num_queries(0):
            warm, warm_body = fetch("/sitemap-articles-1.xml")
        with django_assert_num_queries(0):
            _, index_again = fetch("/sitemap.xml")
        assert warm_body == cold_body
        assert index_again == index_body
        assert warm["ETag"] == cold["ETag"]
        assert warm["Last-Modified"] == http_date(at(3).timestamp())
        assert warm["X-Robots-Tag"] == "noindex, noodp, noarchive"

    def test_rendered_once_until_invalidated(self, cached, counted):
        for _ in range(3):
            assert Client().get("/sitemap-counted-1.xml").status_code == 200
        assert counted.renders == 1
        versions.invalidate("counted")
        Client().get("/sitemap-counted-1.xml")
        assert counted.renders == 2

    def test_text_files_are_cached_too(self, cached, registry, django_assert_num_queries):
        register(Article)
        articles(2)
        _, first = fetch("/sitemap-articles-1.txt")
        _, whole = fetch("/sitemap.txt")
        with django_assert_num_queries(0):
            assert fetch("/sitemap-articles-1.txt")[1] == first
            assert fetch("/sitemap.txt")[1] == whole
        assert first == b"https://example.com/articles/article-0/\n" + (
            b"https://example.com/articles/article-1/\n"
        )

    def test_missing_page_is_404_and_not_cached(self, cached, registry):
        register(Article)
        assert Client().get("/sitemap-articles-1.xml").status_code == 404
        articles(1)
        versions.invalidate()
        assert Client().get("/sitemap-articles-1.xml").status_code == 200

    def test_disabled_cache_renders_every_time(self, settings, counted):
        settings.SITEMAPS_PLUS = {**CACHED, "CACHE": False}
        fetch("/sitemap-counted-1.xml")
        response, _ = fetch("/sitemap-counted-1.xml")
        assert counted.renders == 2
        assert "ETag" not in response


class TestInvalidation:
    def test_save_invalidates_after_commit(
        self, cached, registry, django_capture_on_commit_callbacks
    ):
        register(Article, lastmod_fields=["updated_at"])
        (article,) = articles(1, updated_at=at(1))
        assert locs(fetch("/sitemap-articles-1.xml")[1]) == [
            "https://example.com/articles/article-0/"
        ]
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            article.slug = "renamed"
            article.updated_at = at(2)
            article.save()
        assert len(callbacks) == 1
        response, body = fetch("/sitemap-articles-1.xml")
        assert locs(body) == ["https://example.com/articles/renamed/"]
        assert response["Last-Modified"] == http_date(at(2).timestamp())

    @pytest.mark.django_db(transaction=True)
    def test_real_commit_and_delete(self, cached, registry):
        register(Article)
        _, b = articles(2)
        assert len(locs(fetch("/sitemap-articles-1.xml")[1])) == 2
        b.delete()  # autocommit: invalidated at once
        assert len(locs(fetch("/sitemap-articles-1.xml")[1])) == 1

    def test_related_model_in_lastmod_fields_invalidates(
        self, cached, registry, django_capture_on_commit_callbacks
    ):
        register(Article, lastmod_fields=["updated_at", "comments__created_at"])
        (article,) = articles(1, updated_at=at(1))
        assert fetch("/sitemap.xml")[0]["Last-Modified"] == http_date(at(1).timestamp())
        with django_capture_on_commit_callbacks(execute=True):
            Comment.objects.create(article=article, created_at=at(4))
        assert fetch("/sitemap.xml")[0]["Last-Modified"] == http_date(at(4).timestamp())

    def test_many_to_many_change_invalidates(
        self, cached, registry, django_capture_on_commit_callbacks
    ):
        register(Article, lastmod_fields=["tags__updated_at"])
        (article,) = articles(1)
        tag = Tag.objects.create(name="x", updated_at=at(6))
        before = fetch("/sitemap-articles-1.xml")[0]
        assert not before.has_header("Last-Modified")  # no tag, no lastmod
        with django_capture_on_commit_callbacks(execute=True):
            article.tags.add(tag)
        response = fetch("/sitemap-articles-1.xml")[0]
        assert response["Last-Modified"] == http_date(at(6).timestamp())

    def test_dependencies_from_querysets_contrib_and_invalidated_by(self, registry):
        from django.contrib.sitemaps import GenericSitemap

        from django_sitemaps_plus.receivers import sections_for
        from tests.testapp.models import Author, Event

        class ByAuthor(ModelSection):
            name = "by-author"
            queryset = Article.objects.filter(author__name="x")

        class Manual(Section):
            name = "manual"
            invalidated_by = [Event]

        register(Article)(ByAuthor)
        register(GenericSitemap({"queryset": Tag.objects.all()}), name="tags")
        register(Manual)
        assert sections_for(Author) == {"by-author"}
        assert sections_for(Article) == {"by-author"}
        assert sections_for(Tag) == {"tags"}
        assert sections_for(Event) == {"manual"}
        assert sections_for(Comment) == set()

    def test_a_failed_dependency_lookup_is_retried_not_kept(self, cached, registry, caplog):
        from django.db import OperationalError

        from django_sitemaps_plus.receivers import sections_for
        from tests.testapp.models import Event

        failing = [True]

        class Flaky(Section):
            name = "flaky"

            def items(self):
                if failing[0]:
                    raise OperationalError("no such table: testapp_article")
                return Article.objects.order_by("pk")

        register(Flaky)
        # While items() fails, every save invalidates the section (warned once).
        assert sections_for(Event) == {"flaky"}
        assert sections_for(Article) == {"flaky"}
        assert caplog.text.count("Cannot tell which models") == 1
        failing[0] = False
        # Once it works, the real answer, kept from then on.
        assert sections_for(Article) == {"flaky"}
        assert sections_for(Event) == set()

    def test_a_save_after_a_failed_lookup_invalidates(self, cached, registry):
        from django.db import OperationalError

        failing = [True]

        class Flaky(Section):
            name = "flaky"

            def items(self):
                if failing[0]:
                    raise OperationalError("database hiccup")
                return Article.objects.order_by("pk")

            def location(self, item):
                return f"/articles/{item.slug}/"

        register(Flaky)
        # This save's lookup fails (as when migrate ran earlier in the process).
        Article.objects.create(title="a", slug="first")
        failing[0] = False
        assert locs(fetch("/sitemap-flaky-1.xml")[1]) == ["https://example.com/articles/first/"]
        Article.objects.create(title="c", slug="second")
        assert locs(fetch("/sitemap-flaky-1.xml")[1]) == [
            "https://example.com/articles/first/",
            "https://example.com/articles/second/",
        ]

    def test_only_the_affected_section_is_invalidated(
        self, cached, counted, django_assert_num_queries
    ):
        register(Article)
        (article,) = articles(1)
        Client().get("/sitemap-counted-1.xml")
        fetch("/sitemap-articles-1.xml")
        article.save()
        with django_assert_num_queries(0):
            Client().get("/sitemap-counted-1.xml")
        assert counted.renders == 1
        with django_assert_num_queries(2):  # page_info + rows: re-rendered
            fetch("/sitemap-articles-1.xml")

    def test_rolled_back_change_after_commit_callbacks(
        self, cached, registry, django_capture_on_commit_callbacks
    ):
        """A callback registered in a transaction that rolls back is dropped; the
        next transaction registers its own, and it invalidates."""
        from django.db import transaction

        register(Article)
        (article,) = articles(1)
        with received(sitemaps_invalidated) as sent:
            with django_capture_on_commit_callbacks() as callbacks:
                with pytest.raises(RuntimeError), transaction.atomic():
                    article.save()
                    raise RuntimeError
                with transaction.atomic():
                    article.save()
            assert len(callbacks) == 1
            assert sent == []  # nothing committed yet
            cache = sitemaps_conf.get_cache()
            token = cache.get(versions.version_key("articles"))
            callbacks[0]()
            assert cache.get(versions.version_key("articles")) != token
            assert sent == [{"sender": None, "sections": ["articles"]}]

    def test_invalidated_signal_once_per_transaction_after_commit(
        self, cached, counted, django_capture_on_commit_callbacks
    ):
        register(Article)
        (article,) = articles(1)
        fetch("/sitemap-articles-1.xml")
        with received(sitemaps_invalidated) as sent:
            with django_capture_on_commit_callbacks(execute=True):
                for slug in ("a", "b", "c"):
                    article.slug = slug
                    article.save()
                assert sent == []  # before the commit
                # ...yet this transaction's own reads see its change at once.
                assert b"/articles/c/" in fetch("/sitemap-articles-1.xml")[1]
            assert sent == [{"sender": None, "sections": ["articles"]}]
            versions.invalidate(["counted", "articles"])
            versions.invalidate()
        assert sent[1:] == [
            {"sender": None, "sections": ["articles", "counted"]},
            {"sender": None, "sections": None},
        ]

    @pytest.mark.django_db(transaction=True)
    def test_invalidated_signal_at_once_in_autocommit(self, cached, registry):
        register(Article)
        (article,) = articles(1)
        with received(sitemaps_invalidated) as sent:
            article.save()
            assert sent == [{"sender": None, "sections": ["articles"]}]
            article.delete()
        assert len(sent) == 2

    def test_bypassing_writes_need_invalidate(self, cached, registry):
        register(Article)
        articles(1)
        fetch("/sitemap-articles-1.xml")
        Article.objects.filter(pk=1).update(slug="bypassed")  # no signal
        assert "article-0" in fetch("/sitemap-articles-1.xml")[1].decode()
        versions.invalidate("articles")
        assert "bypassed" in fetch("/sitemap-articles-1.xml")[1].decode()

    def test_maximum_age_bounds_bypassing_writes_even_for_304s(self, settings, registry):
        settings.SITEMAPS_PLUS = {**CACHED, "CACHE_TIMEOUT": 1}
        register(Article)
        articles(1)
        first, _ = fetch("/sitemap-articles-1.xml")
        Article.objects.filter(pk=1).update(slug="aged")  # no signal
        time.sleep(1.2)
        again = Client().get("/sitemap-articles-1.xml", HTTP_IF_NONE_MATCH=first["ETag"])
        assert again.status_code == 200
        assert b"aged" in again.content  # a small cached file: a plain response

    def test_evicted_chunks_are_rendered_again(self, cached, counted):
        Client().get("/sitemap-counted-1.xml")
        cache = sitemaps_conf.get_cache()
        cache.delete_many([k for k in _chunk_keys(cache)])
        response = Client().get("/sitemap-counted-1.xml")
        assert response.status_code == 200
        assert counted.renders == 2

    def test_invalidate_command(self, cached, registry, capsys):
        register(Article)
        articles(1)
        fetch("/sitemap-articles-1.xml")
        Article.objects.filter(pk=1).update(slug="cmd")
        call_command("invalidate_sitemaps", "articles")
        assert "cmd" in fetch("/sitemap-articles-1.xml")[1].decode()
        Article.objects.filter(pk=1).update(slug="all")
        call_command("invalidate_sitemaps")
        assert "all" in fetch("/sitemap-articles-1.xml")[1].decode()
        assert "Invalidated" in capsys.readouterr().out

    def test_invalidate_command_rejects_unknown_section(self, cached, registry):
        from django.core.management import CommandError

        with pytest.raises(CommandError, match="nosuch"):
            call_command("invalidate_sitemaps", "nosuch")

    def test_freshness_check_catches_bypassing_writes(
        self, settings, registry, django_assert_num_queries
    ):
        settings.SITEMAPS_PLUS = {**CACHED, "CACHE_FRESHNESS_CHECK": True}
        register(Article, lastmod_fields=["updated_at"])
        articles(1, updated_at=at(1))
        fetch("/sitemap-articles-1.xml")
        with django_assert_num_queries(1):  # only the freshness query
            fetch("/sitemap-articles-1.xml")
        Article.objects.filter(pk=1).update(slug="fresh", updated_at=at(2))
        assert "fresh" in fetch("/sitemap-articles-1.xml")[1].decode()

    @pytest.mark.slow
    def test_time_based_content_expires(self, cached, counted):
        # Three seconds: Memcached counts a timeout in whole seconds, so an
        # entry stored for one second may be gone before the next request.
        counted.expires_at = lambda self, number, site: timezone.now() + dt.timedelta(seconds=3)
        Client().get("/sitemap-counted-1.xml")
        Client().get("/sitemap-counted-1.xml")
        assert counted.renders == 1
        time.sleep(4.1)
        Client().get("/sitemap-counted-1.xml")
        assert counted.renders == 2

    def test_entry_timeout_is_max_age_capped_by_expiry(self, cached, monkeypatch):
        # The clock stands still: no second may pass between the lines.
        now = timezone.now()
        monkeypatch.setattr(entries.timezone, "now", lambda: now)
        assert entries.entry_timeout(None) == 3600
        assert entries.entry_timeout(now + dt.timedelta(seconds=90)) == 90
        assert entries.entry_timeout(now + dt.timedelta(seconds=89.5)) == 90
        cached.SITEMAPS_PLUS = {**CACHED, "CACHE_TIMEOUT": None}
        assert entries.entry_timeout(None) is None
        assert entries.entry_timeout(now - dt.timedelta(seconds=5)) == 1


class TestSites:
    def test_cache_keys_include_scheme_and_host(self, cached, counted, monkeypatch):
        from django_sitemaps_plus import views

        monkeypatch.setattr(
            views,
            "site_context",
            lambda request: SiteContext(f"{request.scheme}://{request.get_host()}"),
        )
        a = Client().get("/sitemap-counted-1.xml", HTTP_HOST="a.example")
        b = Client().get("/sitemap-counted-1.xml", HTTP_HOST="b.example")
        s = Client().get("/sitemap-counted-1.xml", HTTP_HOST="a.example", secure=True)
        bodies = [r.content for r in (a, b, s)]
        assert b"http://a.example/" in bodies[0]
        assert b"http://b.example/" in bodies[1]
        assert b"https://a.example/" in bodies[2]
        assert counted.renders == 3


def _saved_after_its_index() -> None:
    """200 articles of day 1 laid out by the index, then article 7 changed to
    day 4 and the section invalidated (as its save would): the kept layout
    is not current."""
    register(Article, lastmod_fields=["updated_at"])
    articles(200, updated_at=at(1))
    Client().get("/sitemap.xml")
    Article.objects.filter(pk=7).update(updated_at=at(4))
    versions.invalidate("articles")


@pytest.mark.parametrize("size", [0, 1, 16 * 1024, 100_000, 3_000_000])
def test_a_stored_body_is_decompressed_in_chunks_the_first_small(size):
    # A client without gzip gets its first bytes after FIRST_PLAIN_CHUNK of
    # them, not after a whole 64 KiB slice of gzip (about 640 KiB of XML).
    import random

    words = [b"<url><loc>https://example.com/a</loc></url>\n", b"\x00\xff", b"abc"]
    generator = random.Random(size)
    plain = b"".join(generator.choice(words) for _ in range(size))[:size]
    stored = b"".join(responses.gzip_chunks([plain]))
    chunks = list(responses.gunzip_chunks(stored))
    assert b"".join(chunks) == plain
    if plain:
        assert len(chunks[0]) <= responses.FIRST_PLAIN_CHUNK
        assert all(chunks)


class TestHttp:
    def test_large_cached_files_stream_small_ones_do_not(self, cached, counted, monkeypatch):
        small = Client().get("/sitemap-counted-1.xml")
        assert not small.streaming
        monkeypatch.setattr(sitemap_cache, "IN_MEMORY_BYTES", 10)
        large = Client().get("/sitemap-counted-1.xml")
        assert large.streaming
        assert b"".join(large.streaming_content) == small.content

    def test_gzip_for_clients_that_accept_it(self, cached, counted):
        plain = Client().get("/sitemap-counted-1.xml")
        zipped = Client().get("/sitemap-counted-1.xml", HTTP_ACCEPT_ENCODING="gzip, br")
        plain_body = plain.content  # small: a plain response, as contrib's
        assert "Content-Encoding" not in plain
        assert zipped["Content-Encoding"] == "gzip"
        assert plain["Vary"] == zipped["Vary"] == "Accept-Encoding"
        assert gzip.decompress(zipped.content) == plain_body
        assert int(plain["Content-Length"]) == len(plain_body)
        assert int(zipped["Content-Length"]) == len(zipped.content)
        # Strong ETags differ per content coding.
        assert plain["ETag"] != zipped["ETag"]
        assert plain["ETag"].startswith('"') and not plain["ETag"].startswith("W/")
        refused = Client().get("/sitemap-counted-1.xml", HTTP_ACCEPT_ENCODING="gzip;q=0")
        assert "Content-Encoding" not in refused
        assert counted.renders == 1

    def test_gzip_off(self, settings, counted):
        settings.SITEMAPS_PLUS = {**CACHED, "GZIP": False}
        response = Client().get("/sitemap-counted-1.xml", HTTP_ACCEPT_ENCODING="gzip")
        assert "Content-Encoding" not in response
        assert "Vary" not in response

    def test_304_on_if_none_match_costs_no_query_and_no_body(
        self, cached, registry, django_assert_num_queries
    ):
        register(Article, lastmod_fields=["updated_at"])
        articles(2, updated_at=at(2))
        first, _ = fetch("/sitemap-articles-1.xml", HTTP_ACCEPT_ENCODING="gzip")
        with django_assert_num_queries(0):
            again = Client().get(
                "/sitemap-articles-1.xml",
                HTTP_IF_NONE_MATCH=first["ETag"],
                HTTP_ACCEPT_ENCODING="gzip",
            )
            since = Client().get(
                "/sitemap-articles-1.xml", HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]
            )
        assert again.status_code == since.status_code == 304
        assert again.content == b""
        assert again["ETag"] == first["ETag"]
        other = Client().get("/sitemap-articles-1.xml", HTTP_IF_NONE_MATCH='"nope"')
        assert other.status_code == 200

    def test_etag_is_stable_while_content_is(self, cached, counted):
        first = Client().get("/sitemap-counted-1.xml")
        versions.invalidate()
        second = Client().get("/sitemap-counted-1.xml", HTTP_IF_NONE_MATCH=first["ETag"])
        # Re-rendered after the invalidation, but the same bytes: still a 304.
        assert counted.renders == 2
        assert second.status_code == 304
        # No lastmod: no Last-Modified, as in contrib (docs/migration.md).
        assert not first.has_header("Last-Modified") and not second.has_header("Last-Modified")

    def test_head_sends_headers_only(self, cached, counted):
        Client().get("/sitemap-counted-1.xml")
        head = Client().head("/sitemap-counted-1.xml")
        assert head.status_code == 200
        assert head.content == b""
        assert int(head["Content-Length"]) > 0
        assert counted.renders == 1

    def test_cold_head_and_if_modified_since_do_not_render(self, cached, registry):
        register(Article, lastmod_fields=["updated_at"])
        articles(1, updated_at=at(3))
        head = Client().head("/sitemap-articles-1.xml")
        assert head["Last-Modified"] == http_date(at(3).timestamp())
        # Nothing rendered: no size to tell, no ETag (docs/caching.md, HTTP).
        assert "Content-Length" not in head and "ETag" not in head
        since = Client().get(
            "/sitemap-articles-1.xml", HTTP_IF_MODIFIED_SINCE=http_date(at(3).timestamp())
        )
        assert since.status_code == 304

    def test_a_cold_file_after_a_save_is_answered_like_a_hit(self, cached, registry):
        # A save after the index kept its layout: the file's rows may have
        # changed, so its Last-Modified is their aggregate's (day 4, not the
        # layout's day 1). The cold file is rendered into the cache and
        # answered from the stored entry: the warm response's bytes and headers.
        _saved_after_its_index()
        cold = Client().get("/sitemap-articles-1.xml")
        assert not cold.streaming
        assert cold["Last-Modified"] == http_date(at(4).timestamp())
        warm = Client().get("/sitemap-articles-1.xml")
        assert warm.content == cold.content and cold.content.count(b"<url>") == 200
        for header in ("ETag", "Last-Modified", "Content-Length", "Vary", "Content-Type"):
            assert cold[header] == warm[header], header

    def test_the_lastmod_read_after_the_body_is_of_the_rows_rendered(
        self, cached, registry, monkeypatch
    ):
        # An index made while file 2 renders moves the boundaries: the lastmod
        # stored with the body must be its own rows', not that of the new
        # layout's file 2 (older here: a crawler would be answered 304).
        register(Article, lastmod_fields=["updated_at"], limit=2)
        articles(5, updated_at=at(1))
        Article.objects.filter(pk=4).update(updated_at=at(2))
        Client().get("/sitemap.xml")  # files: (0, 2] (2, 4] (4, 5]
        listed = Client().get("/sitemap-articles-2.xml")["Last-Modified"]
        assert listed == http_date(at(2).timestamp())
        Article.objects.get(pk=1).delete()
        Article.objects.filter(pk=3).update(updated_at=at(5))
        versions.invalidate("articles")
        real = ModelSection.range_rows
        indexed = []

        def range_rows(self, after, last, site):  # type: ignore[no-untyped-def]
            if not indexed:
                # Marked first: the index reads rows too (its sample).
                indexed.append(None)
                indexed[0] = Client().get("/sitemap.xml").status_code  # (0, 3] (3, 5]
            return real(self, after, last, site)

        monkeypatch.setattr(ModelSection, "range_rows", range_rows)
        _, body = fetch("/sitemap-articles-2.xml")
        assert indexed == [200]
        assert [loc.rsplit("/", 2)[-2] for loc in locs(body)] == ["article-2", "article-3"]
        monkeypatch.setattr(ModelSection, "range_rows", real)
        # Stored with the lastmod of the range it was rendered from, (2, 4]
        # (keys 3 and 4)...$
        stored = _stored_entry("/sitemap-articles-2.xml")
        assert stored.last_modified == responses.timestamp(at(5))
        # ...and keyed by that range: the new layout's file 2, (3, 5], is
        # not served from it.
        _, now = fetch("/sitemap-articles-2.xml")
        assert [loc.rsplit("/", 2)[-2] for loc in locs(now)] == ["article-3", "article-4"]

    def test_a_conditional_cold_request_after_a_save_reads_the_lastmod_first(
        self, cached, registry
    ):
        _saved_after_its_index()
        day_one = http_date(at(1).timestamp())
        response, _ = fetch("/sitemap-articles-1.xml", HTTP_IF_MODIFIED_SINCE=day_one)
        assert response.status_code == 200
        assert response["Last-Modified"] == http_date(at(4).timestamp())
        # Unchanged since: a 304 from the aggregate alone.
        Article.objects.filter(pk=8).update(updated_at=at(2))
        versions.invalidate("articles")
        again = Client().get(
            "/sitemap-articles-1.xml", HTTP_IF_MODIFIED_SINCE=http_date(at(4).timestamp())
        )
        assert again.status_code == 304

    def test_a_cold_file_after_its_index_takes_its_lastmod_from_the_layout(self, cached, registry):
        # No save since the index laid the file out: its lastmod is the
        # layout's, current, so no aggregate runs for it.
        register(Article, lastmod_fields=["updated_at"])
        articles(200, updated_at=at(3))
        Client().get("/sitemap.xml")
        with CaptureQueriesContext(connection) as queries:
            cold = Client().get("/sitemap-articles-1.xml")
        assert not any("MAX(" in q["sql"] for q in queries.captured_queries)
        assert cold["Last-Modified"] == http_date(at(3).timestamp())
        assert cold.content.count(b"<url>") == 200

    def test_cache_control_is_settable(self, settings, counted):
        settings.SITEMAPS_PLUS = {**CACHED, "CACHE_CONTROL": "public, max-age=300"}
        assert Client().get("/sitemap-counted-1.xml")["Cache-Control"] == "public, max-age=300"
        settings.SITEMAPS_PLUS = {**CACHED, "CACHE": False, "CACHE_CONTROL": "max-age=60"}
        assert Client().get("/sitemap-counted-1.xml")["Cache-Control"] == "max-age=60"

    def test_large_file_is_stored_in_chunks(self, cached, registry, monkeypatch):
        monkeypatch.setattr(entries, "CHUNK_BYTES", 1000)
        register(Article)
        articles(300)
        _, cold_body = fetch("/sitemap-articles-1.xml")
        _, warm_body = fetch("/sitemap-articles-1.xml")
        assert warm_body == cold_body
        assert len(locs(warm_body)) == 300


class CountingCache:
    """The real cache, counting the round trips made through it."""

    def __init__(self, real) -> None:
        self.real = real
        self.calls: list[str] = []

    def __getattr__(self, name):
        attr = getattr(self.real, name)
        if name not in {
            "get",
            "get_many",
            "set",
            "set_many",
            "add",
            "incr",
            "delete",
            "delete_many",
        }:
            return attr

        def counted(*args, **kwargs):
            self.calls.append(name)
            return attr(*args, **kwargs)

        return counted


def test_round_trips_are_those_docs_caching_md_gives(cached, counted, monkeypatch):
    Client().get("/sitemap-counted-1.xml")  # the version tokens exist from here on
    versions.invalidate("counted")
    cache = CountingCache(sitemaps_conf.get_cache())
    monkeypatch.setattr(sitemaps_conf, "get_cache", lambda: cache)

    def trips(method: str, **headers: str) -> list[str]:
        cache.calls.clear()
        response = getattr(Client(), method)("/sitemap-counted-1.xml", **headers)
        assert response.status_code in (200, 304)
        return list(cache.calls)

    # Cold HEAD: lookup, lock, the entry (stored meanwhile?), release: no render.
    assert trips("head") == ["get_many", "add", "get", "get", "delete"]
    cold = trips("get")
    assert cold == ["get_many", "add", "get", "set_many", "set", "get", "delete"]
    etag = Client().get("/sitemap-counted-1.xml")["ETag"]
    assert trips("get") == ["get_many", "get_many"]
    assert trips("get", HTTP_IF_NONE_MATCH=etag) == ["get_many"]
    assert trips("head") == ["get_many"]
    # Stale while refresh: another process holds the lock to render the new
    # version; the previous one is served (its body read when it is sent).
    versions.invalidate("counted")
    elsewhere = locks.Lock(cache.real, cache_lookup("/sitemap-counted-1.xml").lock_key, 60)
    assert elsewhere.take()
    assert trips("get") == ["get_many", "add", "get_many"]
    assert trips("get", HTTP_IF_NONE_MATCH=etag) == ["get_many", "add"]
    assert trips("head") == ["get_many", "add"]
    elsewhere.release()
    assert counted.renders == 2


class TestLocking:
    @pytest.mark.django_db(transaction=True)
    def test_concurrent_cold_requests_render_once(self, cached, counted, monkeypatch):
        # The lock holder's render goes on only once both other requests wait.
        both_waiting = threading.Event()
        waiters: list[int] = []
        count = threading.Lock()
        wait_for_entry = sitemap_cache._wait_for_entry

        def counting_wait(*args):
            with count:
                waiters.append(threading.get_ident())
                if len(waiters) == 2:
                    both_waiting.set()
            return wait_for_entry(*args)

        monkeypatch.setattr(sitemap_cache, "_wait_for_entry", counting_wait)
        counted.hold = lambda: both_waiting.wait(10)
        barrier = threading.Barrier(3)
        statuses: list[int] = []

        def get() -> None:
            barrier.wait()
            response = Client().get("/sitemap-counted-1.xml")
            statuses.append(response.status_code)

        threads = [threading.Thread(target=get) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert both_waiting.is_set()
        assert statuses == [200, 200, 200]
        assert counted.renders == 1

    @pytest.mark.django_db(transaction=True)
    @pytest.mark.parametrize("path", ["/sitemap-held-1.xml", "/sitemap.xml"])
    def test_waiters_cost_the_database_nothing(self, cached, registry, monkeypatch, path):
        from django.db import connection

        waiting = threading.Semaphore(0)
        threads_count = 6
        wait_for_entry = sitemap_cache._wait_for_entry

        def counting_wait(*args):
            waiting.release()
            return wait_for_entry(*args)

        def hold() -> None:
            # The holder renders only once every other request is waiting.
            for _ in range(threads_count - 1):
                assert waiting.acquire(timeout=10)

        class Held(ModelSection):
            defines_own_page_info = True
            name = "held"

            def index_pages(self, site):
                hold()
                return super().index_pages(site)

            def page_info(self, number, site):
                hold()
                return super().page_info(number, site)

        monkeypatch.setattr(sitemap_cache, "_wait_for_entry", counting_wait)
        register(Article)(Held)
        articles(5)
        barrier = threading.Barrier(threads_count)
        queries: list[int] = []
        statuses: list[int] = []

        def get() -> None:
            ran = [0]

            def count(execute, sql, params, many, context):
                ran[0] += 1
                return execute(sql, params, many, context)

            barrier.wait()
            with connection.execute_wrapper(count):
                response = Client().get(path)
            statuses.append(response.status_code)
            queries.append(ran[0])
            connection.close()

        threads = [threading.Thread(target=get) for _ in range(threads_count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert statuses == [200] * threads_count
        # One request rendered; the others waited before any query.
        assert sorted(queries)[:-1] == [0] * (threads_count - 1), queries
        assert sorted(queries)[-1] > 0

    def test_holder_finishing_between_a_waiters_two_reads_is_not_taken_for_dead(
        self, cached, counted, monkeypatch
    ):
        # The waiter reads the metadata (not stored yet); the holder stores the
        # file and releases the lock before the waiter's next read.
        bodies = holder_finishes_during(
            monkeypatch,
            counted,
            lambda method, key: method == "get" and key.startswith(f"{versions.KEY_PREFIX}:f:"),
        )
        assert counted.renders == 1
        assert bodies[0] == bodies[1] and b"/about/" in bodies[0]

    def test_lock_taken_after_the_holder_released_it_serves_the_stored_file(
        self, cached, counted, monkeypatch
    ):
        # The lookup misses while the holder renders; by the time the request
        # takes the lock, the holder has stored the file and released it.
        bodies = holder_finishes_during(
            monkeypatch, counted, lambda method, key: method == "get_many"
        )
        assert counted.renders == 1
        assert bodies[0] == bodies[1] and b"/about/" in bodies[0]

    def test_dead_lock_holder_costs_a_bounded_wait(
        self, settings, counted, monkeypatch, caplog, polls
    ):
        settings.SITEMAPS_PLUS = {**CACHED, "CACHE_LOCK_WAIT": 0.3}
        request_path = "/sitemap-counted-1.xml"
        original = sitemap_cache._lookup
        held: list[str] = []

        def lookup(cache, site, request, source):
            where = original(cache, site, request, source)
            if not held:
                # A process took the lock and died without releasing it.
                cache.add(where.lock_key, "dead", timeout=60)
                held.append(where.lock_key)
            return where

        monkeypatch.setattr(sitemap_cache, "_lookup", lookup)
        response = Client().get(request_path)
        assert response.status_code == 200
        # It waited (polled) for the dead holder, gave up once CACHE_LOCK_WAIT
        # ran out, and rendered the file itself, once.
        assert polls
        assert caplog.text.count("holds the render lock of /sitemap-counted-1.xml") == 1
        assert counted.renders == 1


class TestFaults:
    @pytest.mark.parametrize(
        "cache_settings",
        [
            {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": "redis://127.0.0.1:9/0",
            },
            {
                "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
                "LOCATION": "127.0.0.1:9",
            },
        ],
        ids=["redis", "memcached"],
    )
    def test_cache_down_still_serves(self, settings, registry, cache_settings):
        require_module("redis" if "Redis" in cache_settings["BACKEND"] else "pymemcache")
        register(Article)
        articles(2)
        settings.CACHES = {**settings.CACHES, "down": cache_settings}
        settings.SITEMAPS_PLUS = {**CACHED, "CACHE_ALIAS": "down"}
        response, body = fetch("/sitemap-articles-1.xml")
        assert response.status_code == 200
        assert len(locs(body)) == 2
        assert fetch("/sitemap.xml")[0].status_code == 200
        versions.invalidate()  # logged, not raised
        article = Article.objects.get(pk=1)
        article.save()  # a save never breaks on the cache

    def test_a_database_failing_before_a_cold_render_stores_nothing_and_frees_the_lock(
        self, cached, registry, monkeypatch, caplog
    ):
        from django_sitemaps_plus.sections import ModelSection

        _saved_after_its_index()

        def broken(*args, **kwargs):
            raise OperationalError("database unavailable")

        # The rows' figures (their lastmod) are read under the render lock.
        with monkeypatch.context() as patched:
            patched.setattr(ModelSection, "range_figures", broken)
            failed = Client().get("/sitemap-articles-1.xml")
        assert failed.status_code == 503
        # Nothing stored, the lock freed: the next request renders and stores.
        with CaptureQueriesContext(connection) as queries:
            again = Client().get("/sitemap-articles-1.xml")
        assert again.status_code == 200 and len(locs(again.content)) == 200
        assert again["Last-Modified"] == http_date(at(4).timestamp()) and again["ETag"]
        assert queries.captured_queries
        assert "holds the render lock" not in caplog.text  # it took the lock
        with CaptureQueriesContext(connection) as queries:
            warm = Client().get("/sitemap-articles-1.xml")
        assert warm.content == again.content and not queries.captured_queries

    def test_database_down_cold_gives_503(self, cached, registry, monkeypatch):
        from django_sitemaps_plus.sections import ModelSection

        def broken(*args, **kwargs):
            raise OperationalError("database unavailable")

        register(Article)
        # The file's first query: page_info, or for a plain GET the layout's.
        monkeypatch.setattr(ModelSection, "page_info", broken)
        monkeypatch.setattr(ModelSection, "listed_info", broken)
        for headers in ({}, {"HTTP_IF_MODIFIED_SINCE": "Mon, 01 Jan 2024 00:00:00 GMT"}):
            response = Client().get("/sitemap-articles-1.xml", **headers)
            assert response.status_code == 503
            assert response["Retry-After"] == "120"

    def test_database_down_warm_still_serves(self, cached, registry, monkeypatch):
        from django_sitemaps_plus.sections import ModelSection

        register(Article)
        articles(1)
        fetch("/sitemap-articles-1.xml")

        def broken(*args, **kwargs):
            raise OperationalError("database unavailable")

        monkeypatch.setattr(ModelSection, "page_info", broken)
        assert Client().get("/sitemap-articles-1.xml").status_code == 200


def test_default_cache_alias_is_used(cached, counted):
    Client().get("/sitemap-counted-1.xml")
    assert default_cache.get(versions.version_key(versions.ALL)) is not None


@pytest.mark.django_db(transaction=True)
def test_database_cache_backend(settings, counted):
    """The database cache works too (its hits are queries on the cache table only)."""
    settings.CACHES = {
        **settings.CACHES,
        "db": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "sitemaps_plus_test_cache",
        },
    }
    call_command("createcachetable", "sitemaps_plus_test_cache", verbosity=0)
    settings.SITEMAPS_PLUS = {**CACHED, "CACHE_ALIAS": "db"}
    first = Client().get("/sitemap-counted-1.xml", HTTP_ACCEPT_ENCODING="gzip")
    second = Client().get("/sitemap-counted-1.xml", HTTP_ACCEPT_ENCODING="gzip")
    assert first.content == second.content
    assert counted.renders == 1
    versions.invalidate("counted")
    Client().get("/sitemap-counted-1.xml")
    assert counted.renders == 2


def test_invalidate_is_public_at_the_package_top(cached) -> None:
    """``from django_sitemaps_plus import invalidate`` (docs/caching.md) is the
    one ``invalidate``: a write that sends no signal shows once it is called."""
    from django_sitemaps_plus import invalidate

    register(
        Article, lastmod_fields=["updated_at"], url_name="article", url_kwargs={"slug": "slug"}
    )
    articles(2)
    before = fetch("/sitemap-articles-1.xml")[1]
    Article.objects.filter(pk=1).update(slug="moved")  # no signal: the file stays cached
    assert fetch("/sitemap-articles-1.xml")[1] == before
    invalidate("articles")
    assert "https://example.com/articles/moved/" in locs(fetch("/sitemap-articles-1.xml")[1])
