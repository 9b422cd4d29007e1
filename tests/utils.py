"""Helpers shared by the tests: fetch through the real views, parse, validate."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from django.test import Client
from lxml import etree

from tests.testapp.models import Article

NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
SCHEMAS = Path(__file__).parent / "schemas"
#: The official XSDs, beside the repository (absent outside this workplace).
OFFICIAL_XSD = Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "xsd"


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing (pytest shows what matters)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def http_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 (a free port) in a thread for the block;
    yields its base URL, ``http://127.0.0.1:PORT``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # A short poll: shutdown() waits for the loop to notice, up to 0.5 s by default.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


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


@cache
def _schema(path: Path) -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(path)))


def assert_schema_valid(body: bytes) -> etree._Element:
    """Validate a urlset or sitemapindex against our schema and, when present,
    the official one; return the root element."""
    root = etree.fromstring(body)
    name = "sitemap.xsd" if etree.QName(root).localname == "urlset" else "sitemapindex.xsd"
    ours = _schema(SCHEMAS / name)
    assert ours.validate(root), ours.error_log
    official_name = "sitemap.xsd" if name == "sitemap.xsd" else "siteindex.xsd"
    official = OFFICIAL_XSD / official_name
    if official.exists() and not root.nsmap.keys() - {None}:
        schema = _schema(official)
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
