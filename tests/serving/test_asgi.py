"""Serving under ASGI: streamed with asynchronous iterators, never buffered,
with the same bytes and headers as under WSGI.

Handler level: every behaviour through Django's test ``Client`` (WSGI) and
``AsyncClient`` (ASGI), compared. Server level: a real uvicorn (and hypercorn)
started on a free port, on a SQLite file seeded by the test.
"""

from __future__ import annotations

import asyncio
import gzip
import http.client
import os
import socket
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import django
import pytest
from asgiref.sync import async_to_sync
from django.core.cache import cache as django_cache
from django.db import OperationalError, connection
from django.test import AsyncClient, Client
from django.test.utils import CaptureQueriesContext
from django.utils.http import http_date

import django_sitemaps_plus.conf as sitemaps_conf
from django_sitemaps_plus import register
from django_sitemaps_plus.serving import cache as sitemap_cache
from django_sitemaps_plus.serving import responses, versions
from tests.testapp.models import Article
from tests.utils import articles, at, cache_lookup, free_port, wait_for_port

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
SYNC_ITERATOR_WARNING = "must consume synchronous iterators"


async def _body(response: Any) -> bytes:
    if response.streaming:
        if response.is_async:
            return b"".join([chunk async for chunk in response.streaming_content])
        return b"".join(response.streaming_content)
    return bytes(response.content)


def http_scope(path: str, host: str = "testserver", scheme: str = "http") -> dict[str, Any]:
    """The ASGI scope of a plain GET of ``path`` on ``host``."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": scheme,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", host.encode())],
        "client": ("127.0.0.1", 1),
        "server": (host, 443 if scheme == "https" else 80),
    }


def asgi_get(path: str, **headers: str) -> tuple[Any, bytes]:
    """GET through Django's ASGI handler; no warning may be raised.

    ``headers`` as for the test Client (``HTTP_ACCEPT_ENCODING="gzip"``).
    """
    named = {key.removeprefix("HTTP_").replace("_", "-"): value for key, value in headers.items()}

    async def run() -> tuple[Any, bytes]:
        response = await AsyncClient().get(path, headers=named)
        return response, await _body(response)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        response, body = async_to_sync(run)()
    assert not [w for w in caught if SYNC_ITERATOR_WARNING in str(w.message)]
    return response, body


def wsgi_get(path: str, **headers: str) -> tuple[Any, bytes]:
    response = Client().get(path, **headers)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response, body


@pytest.fixture
def section(registry, settings):
    register(Article, lastmod_fields=["updated_at"])
    articles(50, updated_at=at(1))


@pytest.mark.parametrize("cache", [False, True])
@pytest.mark.parametrize("path", ["/sitemap-articles-1.xml", "/sitemap.xml"])
def test_same_bytes_and_headers_under_both_handlers(section, settings, cache, path):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": cache}
    # Cold (the first request after a clear) and then warm, under each handler.
    answers = []
    for get in (wsgi_get, asgi_get):
        django_cache.clear()
        answers.append((get(path), get(path)))
    (cold_wsgi, warm_wsgi), (cold_asgi, warm_asgi) = answers
    for (ours_wsgi, body_wsgi), (ours_asgi, body_asgi) in [
        (cold_wsgi, cold_asgi),
        (warm_wsgi, warm_asgi),
    ]:
        assert ours_asgi.status_code == ours_wsgi.status_code == 200
        assert body_asgi == body_wsgi
        for header in ("Content-Type", "Last-Modified", "ETag", "X-Robots-Tag", "Vary"):
            assert ours_asgi.get(header) == ours_wsgi.get(header), header


@pytest.mark.parametrize("handler", ["wsgi", "asgi"])
def test_a_cold_file_after_a_save_carries_its_rows_lastmod(section, settings, handler):
    # The layout kept by the index predates the save: the cold file, rendered
    # into the cache, is answered from the stored entry with the rows' lastmod.
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    get = wsgi_get if handler == "wsgi" else asgi_get
    get("/sitemap.xml")
    Article.objects.filter(pk=3).update(updated_at=at(5))
    versions.invalidate("articles")
    cold, cold_body = get("/sitemap-articles-1.xml")
    assert cold["Last-Modified"] == http_date(at(5).timestamp())
    warm, warm_body = get("/sitemap-articles-1.xml")
    assert warm_body == cold_body
    for header in ("Last-Modified", "ETag", "Content-Length"):
        assert warm[header] == cold[header], header


def test_an_uncached_file_streams_asynchronously(section, settings):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": False}
    response, body = asgi_get("/sitemap-articles-1.xml")
    assert response.streaming and response.is_async
    assert body.count(b"<url>") == 50


def test_the_first_chunk_is_made_in_the_view_s_trip_to_the_sync_thread():
    # Made by the view (in its sync thread): the first chunk is produced at
    # once, so the first byte does not wait for another trip to that thread;
    # the rest is produced as it is sent.
    import io

    from django.core.handlers.asgi import ASGIRequest

    request = ASGIRequest(
        {"type": "http", "method": "GET", "path": "/", "headers": []}, io.BytesIO()
    )
    made: list[bytes] = []

    def chunks() -> Iterator[bytes]:
        for chunk in (b"<a>", b"<b>", b"<c>"):
            made.append(chunk)
            yield chunk

    response = responses.streaming_response(request, chunks(), "text/plain")
    assert made == [b"<a>"]

    async def read_all() -> bytes:
        return b"".join([chunk async for chunk in response.streaming_content])

    assert async_to_sync(read_all)() == b"<a><b><c>"


def test_a_large_cached_file_streams_asynchronously(section, settings, monkeypatch):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    monkeypatch.setattr(sitemap_cache, "IN_MEMORY_BYTES", 10)
    wsgi_get("/sitemap-articles-1.xml")  # stored
    response, body = asgi_get("/sitemap-articles-1.xml")
    assert response.streaming and response.is_async
    assert body.count(b"<url>") == 50


@pytest.mark.parametrize("cache", [False, True])
def test_conditional_get_head_and_gzip(section, settings, cache):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": cache}
    first, plain = asgi_get("/sitemap-articles-1.xml")
    since = first["Last-Modified"]
    assert asgi_get("/sitemap-articles-1.xml", HTTP_IF_MODIFIED_SINCE=since)[0].status_code == 304
    head = async_to_sync(AsyncClient().head)("/sitemap-articles-1.xml")
    assert head.status_code == 200 and head.content == b""
    zipped, data = asgi_get("/sitemap-articles-1.xml", HTTP_ACCEPT_ENCODING="gzip")
    if cache:
        assert zipped["Content-Encoding"] == "gzip"
        assert gzip.decompress(data) == plain
        etag = zipped["ETag"]
        again = asgi_get(
            "/sitemap-articles-1.xml", HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=etag
        )[0]
        assert again.status_code == 304
    else:
        assert data == plain


def test_database_down_is_a_503(section, settings):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": False}

    def refuse(execute, sql, params, many, context):
        raise OperationalError("could not connect to server")

    with connection.execute_wrapper(refuse):
        response, _ = asgi_get("/sitemap-articles-1.xml")
    assert response.status_code == 503
    assert response["Retry-After"]


def test_cache_down_falls_back_to_rendering(section, settings, monkeypatch):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}

    def down() -> Any:
        raise ConnectionError("cache unreachable")

    monkeypatch.setattr(sitemaps_conf, "get_cache", down)
    response, body = asgi_get("/sitemap-articles-1.xml")
    assert response.status_code == 200
    assert body.count(b"<url>") == 50


@pytest.mark.parametrize("handler", ["wsgi", "asgi"])
def test_cache_down_is_logged_with_its_error(section, settings, monkeypatch, caplog, handler):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}

    def down() -> Any:
        raise ConnectionError("cache unreachable")

    monkeypatch.setattr(sitemaps_conf, "get_cache", down)
    response, _ = (wsgi_get if handler == "wsgi" else asgi_get)("/sitemap-articles-1.xml")
    assert response.status_code == 200
    message = "Sitemap cache unavailable; rendering without it"
    [record] = [r for r in caplog.records if r.getMessage() == message]
    assert record.exc_info and record.exc_info[0] is ConnectionError


def test_the_views_are_plain_sync_views_under_both_handlers():
    from asgiref.sync import iscoroutinefunction

    from django_sitemaps_plus import views

    async def in_loop() -> bool:
        return iscoroutinefunction(views.section)

    # Django runs a sync view in the request's thread (WSGI) or in a thread
    # of its own (ASGI): no coroutine marker, whatever the handler.
    assert not iscoroutinefunction(views.section)
    assert not async_to_sync(in_loop)()


@pytest.mark.parametrize("gzip", [True, False])
@pytest.mark.parametrize("backend", ["RecordingLocMemCache", "SyncRecordingLocMemCache"])
def test_a_warm_file_is_read_in_two_round_trips_under_both_handlers(
    section, settings, gzip, backend
):
    # A backend with async methods of its own, or Django's defaults (one
    # ``aget`` per key): the view is sync, so both read the lookup and the
    # body with one ``get_many`` each, under ASGI as under WSGI.
    from tests import recording_cache

    settings.CACHES = {
        "default": {"BACKEND": f"tests.recording_cache.{backend}", "LOCATION": backend}
    }
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    headers = {"HTTP_ACCEPT_ENCODING": "gzip"} if gzip else {}
    _, wsgi_body = wsgi_get("/sitemap-articles-1.xml", **headers)  # renders, stores
    recording_cache.calls.clear()
    response, body = asgi_get("/sitemap-articles-1.xml", **headers)
    assert response.status_code == 200
    assert body == wsgi_body
    assert recording_cache.calls == ["get_many", "get_many"]
    recording_cache.calls.clear()
    warm_wsgi_response, _ = wsgi_get("/sitemap-articles-1.xml", **headers)
    assert recording_cache.calls == ["get_many", "get_many"]
    assert response["ETag"] == warm_wsgi_response["ETag"]


# A real server -----------------------------------------------------------------

SEED = textwrap.dedent(
    """
    import os, sys
    import django
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    django.setup()
    from django.core.management import call_command
    from tests.testapp.models import Article

    call_command("migrate", verbosity=0)
    Article.objects.bulk_create(
        Article(title=f"t{i}", slug=f"article-{i}") for i in range(int(sys.argv[1]))
    )
    """
)


@contextmanager
def server(
    command: list[str], database: Path, register: str = "articles", hold: Path | None = None
) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    """A real server of tests/asgi.py on a free port; ``hold``: the
    directory through which a test holds a render midway (tests/asgi.py)."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "PYTHONPATH": str(ROOT),
        "SITEMAPS_TEST_REGISTER": register,
        "SITEMAPS_TEST_HOLD": str(hold or ""),
    }
    env.pop("CACHE_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", *[part.format(port=port) for part in command]],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for_port(port, process)
        yield port, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a render held by a test that failed
            process.kill()
            process.wait(timeout=30)


def _get(port: int, path: str) -> tuple[int, bytes]:
    """Status and body."""
    connection_ = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection_.request("GET", path)
        response = connection_.getresponse()
        return response.status, response.read()
    finally:
        connection_.close()


def _until(condition: Any, what: str) -> None:
    """Wait until ``condition()`` holds (a minute at most: a hang fails)."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.01)


def _appears(path: Path) -> None:
    """Wait until the server creates ``path``, and remove it."""
    _until(path.exists, f"{path} appears")
    path.unlink()


def _get_held_midway(port: int, path: str, hold: Path) -> tuple[int, bytes]:
    """GET ``path`` while its render is held midway (``HOLD_AT`` of its URLs,
    tests/asgi.py): the status line and the first body byte must arrive while
    the render waits, since it goes on only once they have. A buffered body
    would wait for the end of a render that waits for it: the read fails."""
    (hold / "armed").touch()
    connection_ = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection_.request("GET", path)
        response = connection_.getresponse()
        first = response.read(1)
        _appears(hold / "reached")
        assert first, "no body byte before the hold"
        (hold / "go").touch()
        return response.status, first + response.read()
    finally:
        connection_.close()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    database = tmp_path_factory.mktemp("asgi") / "db.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", SEED, "16000"], cwd=ROOT, env=env, check=True)
    return database


UVICORN = ["uvicorn", "tests.asgi:application", "--port", "{port}", "--log-level", "warning"]
HYPERCORN = ["hypercorn", "tests.asgi:application", "--bind", "127.0.0.1:{port}"]
#: WSGI, one sync worker.
GUNICORN = ["gunicorn", "tests.asgi:wsgi", "--bind", "127.0.0.1:{port}", "--log-level", "warning"]


@pytest.mark.slow
@pytest.mark.parametrize("command", [UVICORN, HYPERCORN], ids=["uvicorn", "hypercorn"])
def test_a_real_asgi_server_streams_the_file(seeded, command, tmp_path):
    with server(command, seeded, hold=tmp_path) as (port, process):
        # The index first, as a crawler reads it: it lays the section out
        # (pagination.py), which a file's first byte would otherwise wait for.
        assert _get(port, "/sitemap.xml")[0] == 200
        # Streamed: the first byte arrives while the render is held midway.
        status, body = _get_held_midway(port, "/sitemap-articles-1.xml", tmp_path)
        process.terminate()
        log = process.stdout.read() if process.stdout else ""
    assert status == 200
    assert body.count(b"<url>") == 16000
    assert body.endswith(b"</urlset>\n")
    assert SYNC_ITERATOR_WARNING not in log


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [UVICORN, HYPERCORN, GUNICORN], ids=["uvicorn", "hypercorn", "gunicorn"]
)
def test_a_real_server_stores_a_cold_file_whose_client_left_during_its_render(
    seeded, command, tmp_path
):
    file = "/sitemap-counted-1.xml"
    with server(command, seeded, register="counted", hold=tmp_path) as (port, _):
        # A client that leaves while the file renders (held midway): the render
        # ends in the view's thread, stores the whole file and frees the lock.
        (tmp_path / "armed").touch()
        left = socket.create_connection(("127.0.0.1", port), timeout=60)
        left.sendall(f"GET {file} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
        _appears(tmp_path / "reached")
        left.close()
        (tmp_path / "go").touch()
        # The server waits for a holder's lock longer than this client waits
        # for its answer: a lock left behind fails the request.
        status, cold = _get(port, file)
        warm = _get(port, file)[1]
        rendered, _ = map(int, _get(port, "/renders/")[1].split())
    assert status == 200
    assert cold == warm and cold.count(b"<url>") == 16000 and cold.endswith(b"</urlset>\n")
    # One render: the next request found its entry (or waited for it).
    assert rendered == 1


@pytest.mark.slow
def test_a_cold_file_is_rendered_once_under_concurrent_requests(seeded, tmp_path):
    import threading

    statuses: list[int] = []
    with server(UVICORN, seeded, register="counted", hold=tmp_path) as (port, _):
        barrier = threading.Barrier(20)

        def get() -> None:
            barrier.wait()
            statuses.append(_get(port, "/sitemap-counted-1.xml")[0])

        # The first render is held midway until the 19 others wait for it.
        (tmp_path / "armed").touch()
        threads = [threading.Thread(target=get) for _ in range(20)]
        for thread in threads:
            thread.start()
        _appears(tmp_path / "reached")
        _until(lambda: _get(port, "/renders/")[1] == b"1 19", "19 requests waiting")
        (tmp_path / "go").touch()
        for thread in threads:
            thread.join(timeout=60)
        renders = _get(port, "/renders/")[1]
    assert statuses == [200] * 20
    # The requests ran at once, one rendered and the others waited for it.
    assert renders == b"1 19"


# A cold file: rendered into the cache, answered from the stored entry --------------

LARGE = "/sitemap-articles-1.xml"


@pytest.fixture
def large(registry, settings):
    """Caching on and a file of 1,500 URLs."""
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    register(Article, lastmod_fields=["updated_at"])
    articles(1500, updated_at=at(1))


def cache_state(path: str = LARGE) -> tuple[bool, bool]:
    """Whether the file's entry is stored, and whether its render lock is held."""
    where = cache_lookup(path)
    return where.held is not None, sitemaps_conf.get_cache().get(where.lock_key) is not None


@contextmanager
def keeping_the_connection() -> Iterator[None]:
    """As Django's test clients do around a request: the signals that end a
    request do not close the test's database connection (its transaction)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def bodies_sent_after_the_client_left(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The body messages the handler sent once its client had left. Django
    5.0+ cancels the response on ``http.disconnect``: none. Django 4.2's
    handler sends the whole response anyway (the server drops it), so there
    it is not the point: the lock and the stored entry are."""
    if django.VERSION < (5, 0):
        return []
    return [m for m in sent if m["type"] == "http.response.body" and m.get("body")]


def leave_during_the_render(path: str, rendering: Any) -> list[dict[str, Any]]:
    """GET ``path`` through Django's ASGI handler itself, from a client that
    disconnects once ``rendering`` (an event the render sets) is set: a
    crawler that gives up while the file renders. The messages sent to it."""
    from django.core.handlers.asgi import ASGIHandler

    sent: list[dict[str, Any]] = []
    asked = [False]

    async def receive() -> dict[str, Any]:
        if not asked[0]:
            asked[0] = True
            return {"type": "http.request", "body": b"", "more_body": False}
        while not rendering.is_set():
            await asyncio.sleep(0.005)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = http_scope(path)
    with keeping_the_connection():
        # ``handle``, not ``__call__``: its sync work in this test's thread (the
        # test's database connection), as the test clients run it; it returns
        # once that work has ended.
        async_to_sync(ASGIHandler().handle)(scope, receive, send)
    return sent


HANDLERS = pytest.mark.parametrize("handler", ["wsgi", "asgi"])


@HANDLERS
@pytest.mark.parametrize("gzip_", [False, True], ids=["plain", "gzip"])
def test_a_cold_file_is_answered_from_its_stored_entry_like_a_hit(large, handler, gzip_):
    headers = {"HTTP_ACCEPT_ENCODING": "gzip"} if gzip_ else {}
    get = wsgi_get if handler == "wsgi" else asgi_get
    cold, cold_body = get(LARGE, **headers)
    assert cold.status_code == 200
    assert cache_state() == (True, False)
    warm, warm_body = get(LARGE, **headers)
    assert cold_body == warm_body
    assert (gzip.decompress(warm_body) if gzip_ else warm_body).count(b"<url>") == 1500
    for header in (
        "Content-Type",
        "Content-Length",
        "ETag",
        "Last-Modified",
        "Vary",
        "Content-Encoding",
        "X-Robots-Tag",
    ):
        assert cold.get(header) == warm.get(header), header
    assert warm["ETag"]


def test_a_client_that_left_during_a_cold_render_frees_the_lock(large, monkeypatch):
    # Django cancels an async handler's view task once its client is gone;
    # the sync view's thread runs to its end: the render is whole, stored,
    # and the lock freed on the way out.
    import threading

    from django_sitemaps_plus.sections import ModelSection

    rendering, during = threading.Event(), []
    real = ModelSection.page_entries

    def page_entries(self, number, site, info=None):  # type: ignore[no-untyped-def]
        rendering.set()
        during.append(cache_state())
        time.sleep(0.05)  # the disconnect arrives meanwhile
        yield from real(self, number, site, info)

    monkeypatch.setattr(ModelSection, "page_entries", page_entries)
    sent = leave_during_the_render(LARGE, rendering)
    assert during == [(False, True)]  # it rendered under the lock
    assert not bodies_sent_after_the_client_left(sent)
    assert cache_state() == (True, False)
    # The next request is answered from the stored entry.
    monkeypatch.setattr(ModelSection, "page_entries", real)
    with CaptureQueriesContext(connection) as queries:
        response, body = asgi_get(LARGE)
    assert response.status_code == 200 and body.count(b"<url>") == 1500
    assert not queries.captured_queries


@HANDLERS
def test_a_render_failing_midway_stores_nothing_and_frees_the_lock(registry, settings, handler):
    from django_sitemaps_plus import ModelSection

    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    failing = [True]

    class Failing(ModelSection):
        writes_own_entries = True
        name = "articles"

        def page_entries(self, number, site, info=None):  # type: ignore[no-untyped-def]
            for count, entry in enumerate(super().page_entries(number, site, info)):
                if failing[0] and count == 1200:
                    raise RuntimeError("the database went away")
                yield entry

    register(Article)(Failing)
    articles(1500)
    with pytest.raises(RuntimeError):
        (wsgi_get if handler == "wsgi" else asgi_get)(LARGE)
    assert cache_state() == (False, False)
    failing[0] = False
    _, body = (wsgi_get if handler == "wsgi" else asgi_get)(LARGE)
    assert body.count(b"<url>") == 1500
    assert cache_state() == (True, False)


@HANDLERS
def test_a_cold_request_conditional_on_the_etag_is_answered_whole(large, handler):
    get = wsgi_get if handler == "wsgi" else asgi_get
    etag = get(LARGE)[0]["ETag"]
    versions.invalidate("articles")  # cold again, same bytes
    again, _ = get(LARGE, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    versions.invalidate("articles")
    other, body = get(LARGE, HTTP_IF_NONE_MATCH='"other"')
    assert other.status_code == 200 and other["ETag"] == etag
    assert body.count(b"<url>") == 1500


@HANDLERS
def test_a_hit_decides_its_conditional_response_once(section, settings, monkeypatch, handler):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    get = wsgi_get if handler == "wsgi" else asgi_get
    get("/sitemap-articles-1.xml")  # stored
    decided = []
    real = sitemap_cache.get_conditional_response

    def counting(*args: Any, **kwargs: Any) -> Any:
        decided.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(sitemap_cache, "get_conditional_response", counting)
    response, body = get("/sitemap-articles-1.xml")
    assert response.status_code == 200 and body.count(b"<url>") == 50
    assert len(decided) == 1


def test_a_client_that_left_while_waiting_for_another_render_leaves_its_lock(
    large, settings, monkeypatch
):
    """A request waiting (polling) for another request's render, whose client
    leaves: it never releases the lock it does not hold."""
    import threading

    from django_sitemaps_plus.serving import locks

    settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "CACHE_LOCK_WAIT": 0.3}
    cache = sitemaps_conf.get_cache()
    lock_key = cache_lookup(LARGE).lock_key
    cache.set(lock_key, "another request's token", 60)
    polling = threading.Event()
    real_delays = locks.poll_delays

    def delays() -> Iterator[float]:
        for delay in real_delays():
            polling.set()
            yield delay

    monkeypatch.setattr(locks, "poll_delays", delays)
    sent = leave_during_the_render(LARGE, polling)
    assert polling.is_set()
    assert not bodies_sent_after_the_client_left(sent)
    assert cache.get(lock_key) == "another request's token"
