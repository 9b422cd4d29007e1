"""Helpers shared by the tests: fetch through the real views, parse, validate."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NoReturn

import pytest
from django.test import Client, RequestFactory
from django.urls import resolve
from lxml import etree

from django_sitemaps_plus import conf as sitemaps_conf
from django_sitemaps_plus.serving import cache as sitemap_cache
from tests.testapp.models import Article

NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
SCHEMAS = Path(__file__).parent / "schemas"
#: The official XSDs, beside the repository (absent outside this workplace).
OFFICIAL_XSD = Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "xsd"


def unavailable(reason: str) -> NoReturn:
    """What a test needs is missing: a failure in CI (``CI`` set, as .ci/run
    does, which installs and starts everything), a skip on a contributor's
    checkout."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (in CI it must be there)")
    pytest.skip(reason)


def require_module(name: str) -> None:
    """Import ``name`` (an extra's module), or ``unavailable``."""
    try:
        __import__(name)
    except ImportError:
        unavailable(f"{name} is not installed (the test and cache extras install it)")


def reference_missing(path: Path) -> NoReturn:
    """A reference file (../shared beside the repository) is absent."""
    unavailable(f"reference file {path} not found (../shared must be beside the repository)")


def require_reference(path: Path) -> Path:
    if not path.exists():
        reference_missing(path)
    return path


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing (pytest shows what matters)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def http_server(
    handler: type[BaseHTTPRequestHandler],
    host: str = "127.0.0.1",
    port: int = 0,
    tls: ssl.SSLContext | None = None,
) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 (a free port, unless given) in a thread
    for the block; yields its base URL, ``http://127.0.0.1:PORT`` (``https``
    with a ``tls`` server context)."""
    server = ThreadingHTTPServer((host, port), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    # A short poll: shutdown() waits for the loop to notice, up to 0.5 s by default.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"{'http' if tls is None else 'https'}://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, for a server a test starts."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[Any], seconds: float = 30) -> None:
    """Return once ``process`` accepts connections on 127.0.0.1:``port``;
    RuntimeError (with its output, when piped) if it ends or takes longer."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                out = process.stdout.read() if process.stdout else ""
                raise RuntimeError(f"server did not start: {out}") from None
            time.sleep(0.1)


def failing_page(monkeypatch: Any, number: int, fault: Callable[[], None] | None = None) -> None:
    """Rendering page ``number`` of a model section raises, as a build that
    dies there stops (``BuildFailed`` names that file and those after it);
    or, with ``fault``, runs it first (it may raise, or hold the render)."""
    from django_sitemaps_plus.sections import ModelSection

    original = ModelSection.page_entries

    def failing(self: Any, page: int, site: Any, info: Any = None) -> Any:
        if page == number:
            if fault is None:
                raise RuntimeError("killed mid-build")
            fault()
        return original(self, page, site, info)

    monkeypatch.setattr(ModelSection, "page_entries", failing)


def worker_dies_writing(monkeypatch: Any, name: str) -> None:
    """The build worker that writes the file ``name`` dies (SIGKILL) as its
    content is first read: into the temporary file of a ``FileSystemStorage``,
    or by an object store for the upload. Workers are forked, so they inherit
    the patch; the process that holds the build lock never dies."""
    from django_sitemaps_plus.build import files
    from django_sitemaps_plus.serving.storage import write_atomic

    class DyingSource:
        def __init__(self, source: Any) -> None:
            self._source = source

        def read(self, size: int = -1) -> bytes:
            os.kill(os.getpid(), signal.SIGKILL)
            raise AssertionError("unreachable: the process ended")

        def __getattr__(self, attribute: str) -> Any:
            return getattr(self._source, attribute)

    def dying(storage: Any, path: str, source: Any) -> None:
        if os.path.basename(path) == name and multiprocessing.parent_process() is not None:
            source = DyingSource(source)
        write_atomic(storage, path, source)

    monkeypatch.setattr(files, "write_atomic", dying)


def at(day: int, hour: int = 12) -> dt.datetime:
    """A moment in January 2024, UTC."""
    return dt.datetime(2024, 1, day, hour, tzinfo=dt.timezone.utc)


def articles(count: int, **fields: object) -> list[Article]:
    """``count`` articles with primary keys 1, 2, ... so page ranges are known
    on every database (PostgreSQL does not reset sequences between tests)."""
    return Article.objects.bulk_create(
        Article(pk=i + 1, title=f"t{i}", slug=f"article-{i}", **fields) for i in range(count)
    )


def fetch(url: str, client: Client | None = None, **headers: Any) -> tuple[Any, bytes]:
    """GET ``url``; return the response and its whole body."""
    response = (client or Client()).get(url, **headers)
    if getattr(response, "streaming", False):
        body = b"".join(response.streaming_content)
    else:
        body = response.content
    return response, body


def cache_lookup(path: str) -> sitemap_cache.Lookup:
    """Where the view keeps the file at ``path`` in the sitemap cache,
    described as the view does: its keys, its lock, the entry held."""
    request = RequestFactory().get(path)
    match = resolve(path)
    site, source, _ = match.func.__wrapped__(request, *match.args, **match.kwargs)
    return sitemap_cache._lookup(sitemaps_conf.get_cache(), site, request, source)


def url_entries(body: bytes) -> dict[str, dict[str, Any]]:
    """loc -> {"lastmod": text, "alternates": {hreflang: href}, "images": [loc]}
    of a urlset (the CMS integrations' tests read files this way)."""
    xhtml = "{http://www.w3.org/1999/xhtml}link"
    image = ".//{http://www.google.com/schemas/sitemap-image/1.1}loc"
    found: dict[str, dict[str, Any]] = {}
    for element in etree.fromstring(body).iterfind("sm:url", NS):
        found[element.findtext("sm:loc", namespaces=NS) or ""] = {
            "lastmod": element.findtext("sm:lastmod", namespaces=NS),
            "alternates": {
                link.get("hreflang"): link.get("href") for link in element.iterfind(xhtml)
            },
            "images": [e.text for e in element.iterfind(image)],
        }
    return found


@cache
def _schema(path: Path) -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(path)))


def assert_schema_valid(body: bytes) -> etree._Element:
    """Validate a urlset or sitemapindex against our schema and the official
    ones (extension namespaces included: image, news, video, xhtml); return
    the root element. Without ../shared: a skip, or in CI a failure."""
    root = etree.fromstring(body)
    name = "sitemap.xsd" if etree.QName(root).localname == "urlset" else "sitemapindex.xsd"
    ours = _schema(SCHEMAS / name)
    assert ours.validate(root), ours.error_log
    if name == "sitemapindex.xsd":
        schema = _schema(require_reference(OFFICIAL_XSD / "siteindex.xsd"))
    elif root.nsmap.keys() - {None}:
        from tests.i18napp.xmlcheck import official_schema

        require_reference(OFFICIAL_XSD / "sitemap.xsd")
        official = official_schema()
        assert official is not None
        schema = official
    else:
        schema = _schema(require_reference(OFFICIAL_XSD / "sitemap.xsd"))
    assert schema.validate(root), schema.error_log
    return root


def locs(body: bytes) -> list[str]:
    return [str(e) for e in etree.fromstring(body).xpath("//sm:loc/text()", namespaces=NS)]


def lastmods(body: bytes) -> list[str | None]:
    """Each entry's lastmod text (None where the entry has none)."""
    root = etree.fromstring(body)
    out: list[str | None] = []
    for entry in root:
        found = entry.find("sm:lastmod", NS)
        out.append(None if found is None else found.text)
    return out


def measured_runs(monkeypatch: Any) -> list[int]:
    """Count the runs of rows that get measured (``measuring._measured_rows``)."""
    from django_sitemaps_plus.engine import measuring

    calls: list[int] = []
    original = measuring._measured_rows

    def counted(*args: Any) -> Any:
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(measuring, "_measured_rows", counted)
    return calls


def failing_file(monkeypatch: Any, number: int, message: str) -> Any:
    """``ModelSection.page_entries`` raises ``RuntimeError(message)`` for
    file ``number`` (a build failing there); returns the real one."""
    from django_sitemaps_plus.sections import ModelSection

    original = ModelSection.page_entries

    def failing(self: Any, page: int, site: Any, info: Any = None) -> Any:
        if page == number:
            raise RuntimeError(message)
        return original(self, page, site, info)

    monkeypatch.setattr(ModelSection, "page_entries", failing)
    return original


def files_of(folder: Path) -> dict[str, bytes]:
    """Every file a build left in ``folder`` (its lock file aside), by path."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != ".sitemaps-build.lock"
    }
