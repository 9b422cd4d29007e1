"""The sitemap views: the index, each section's files, text files, robots.txt.

Every response streams, so memory stays flat in page size. Headers that
need no rendering (Last-Modified, 304, HEAD, 404) are answered from the
page's lastmod, which costs one aggregate query and no row fetch.
"""

from __future__ import annotations

import calendar
import datetime as dt
import logging
from collections.abc import Callable, Iterator
from functools import wraps
from typing import Any

from django.db import DatabaseError
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    StreamingHttpResponse,
)
from django.urls import reverse
from django.utils.cache import get_conditional_response
from django.utils.http import http_date

from django_sitemaps_plus import protocol, xml
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.lastmod import format_w3c, latest
from django_sitemaps_plus.location import SiteContext, site_context
from django_sitemaps_plus.registry import site as registry
from django_sitemaps_plus.sections import Section

logger = logging.getLogger("django_sitemaps_plus")

XML_CONTENT_TYPE = "application/xml; charset=utf-8"
TEXT_CONTENT_TYPE = "text/plain; charset=utf-8"
#: Seconds a client is asked to wait when the database is unavailable.
RETRY_AFTER_SECONDS = 120

View = Callable[..., HttpResponseBase]


def _unavailable_on_database_error(view: View) -> View:
    """A database that is down gives 503 with Retry-After, not a traceback."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        try:
            return view(request, *args, **kwargs)
        except DatabaseError:
            logger.exception("Sitemap view %s: database unavailable", view.__name__)
            response = HttpResponse(
                "Sitemap temporarily unavailable.\n", status=503, content_type=TEXT_CONTENT_TYPE
            )
            response["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response

    return wrapper


def _timestamp(value: dt.date | dt.datetime | None) -> int | None:
    if value is None:
        return None
    if not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    return calendar.timegm(value.utctimetuple())


def _url_name(request: HttpRequest, name: str) -> str:
    match = request.resolver_match
    namespace = match.namespace if match and match.namespace else "sitemaps_plus"
    return f"{namespace}:{name}"


def file_url(request: HttpRequest, site: SiteContext, section: str, page: int, ext: str) -> str:
    """The absolute URL of one section file."""
    name = "section" if ext == "xml" else "section_txt"
    return site.absolute(
        reverse(_url_name(request, name), kwargs={"section": section, "page": page})
    )


def _respond(
    request: HttpRequest,
    body: Callable[[], Iterator[bytes]],
    content_type: str,
    lastmod: dt.date | dt.datetime | None,
) -> HttpResponseBase:
    last_modified = _timestamp(lastmod)
    not_modified = get_conditional_response(request, last_modified=last_modified)
    if not_modified is not None:
        response: HttpResponseBase = not_modified
    elif request.method == "HEAD":
        response = HttpResponse(content_type=content_type)
    else:
        response = StreamingHttpResponse(body(), content_type=content_type)
    if last_modified is not None:
        response["Last-Modified"] = http_date(last_modified)
    response["X-Robots-Tag"] = conf.X_ROBOTS_TAG
    return response


def _section_or_404(name: str) -> Section:
    section = registry.get(name)
    if section is None:
        raise Http404("No such sitemap section.")
    return section


@_unavailable_on_database_error
def index(request: HttpRequest) -> HttpResponseBase:
    """``/sitemap.xml``: always a sitemap index, one entry per section file.

    Always an index, even for one small section, so the URL and the format
    never change as the site grows. With no URL at all it is a 404.
    """
    site = site_context(request)
    entries: list[str] = []
    lastmods: list[dt.date | dt.datetime | None] = []
    for section in registry:
        name = section.get_name()
        for page in section.index_pages(site):
            loc = xml.escape(file_url(request, site, name, page.number, "xml"))
            entries.append(xml.sitemap_entry(loc, format_w3c(page.lastmod)))
            lastmods.append(page.lastmod)
    if not entries:
        # An index needs at least one <sitemap> (XSD); an empty one is invalid.
        raise Http404("No sitemap section has any URL yet.")
    if len(entries) > protocol.MAX_SITEMAPS_PER_INDEX:
        logger.error(
            "The sitemap index would list %s files; the protocol allows %s. "
            "Raise the sections' limit so fewer files are needed.",
            len(entries),
            protocol.MAX_SITEMAPS_PER_INDEX,
        )
        entries = entries[: protocol.MAX_SITEMAPS_PER_INDEX]
    return _respond(request, lambda: xml.stream_index(entries), XML_CONTENT_TYPE, latest(lastmods))


@_unavailable_on_database_error
def section(request: HttpRequest, section: str, page: int) -> HttpResponseBase:
    """``/sitemap-<section>-<page>.xml``: one file of a section."""
    found = _section_or_404(section)
    site = site_context(request)
    info = found.page_info(page, site)
    if info is None:
        raise Http404("No such sitemap page.")
    return _respond(
        request,
        lambda: xml.stream_urlset(found.page_entries(page, site), found.namespaces()),
        XML_CONTENT_TYPE,
        info.lastmod,
    )


@_unavailable_on_database_error
def section_txt(request: HttpRequest, section: str, page: int) -> HttpResponseBase:
    """``/sitemap-<section>-<page>.txt``: the same URLs as text, one per line."""
    found = _section_or_404(section)
    site = site_context(request)
    info = found.page_info(page, site)
    if info is None:
        raise Http404("No such sitemap page.")
    return _respond(
        request,
        lambda: xml.stream_text(found.page_locations(page, site)),
        TEXT_CONTENT_TYPE,
        info.lastmod,
    )


@_unavailable_on_database_error
def text(request: HttpRequest) -> HttpResponseBase:
    """``/sitemap.txt``: every section's URLs in one text file, when they fit.

    A text sitemap cannot be an index, so past one file's limits this is a
    404 and the per-section ``.txt`` files are the text sitemaps to use.
    """
    site = site_context(request)
    pages = [(s, p) for s in registry for p in s.index_pages(site)]
    capacity = min((s.urls_per_file() for s in registry), default=protocol.MAX_URLS_PER_FILE)
    if sum(p.url_count for _, p in pages) > capacity:
        raise Http404("Too many URLs for one text sitemap; use the per-section .txt files.")

    def body() -> Iterator[bytes]:
        for section_, page in pages:
            yield from xml.stream_text(section_.page_locations(page.number, site))

    return _respond(request, body, TEXT_CONTENT_TYPE, latest([p.lastmod for _, p in pages]))


def robots_sitemap_line(request: HttpRequest | None = None) -> str:
    """``Sitemap: https://example.com/sitemap.xml`` for robots.txt."""
    site = site_context(request)
    return f"Sitemap: {site.absolute(reverse('sitemaps_plus:index'))}"


def robots_txt(request: HttpRequest) -> HttpResponse:
    """A minimal robots.txt naming the sitemap (when ``ROBOTS_TXT`` is on)."""
    if not conf.ROBOTS_TXT:
        raise Http404("robots.txt is not served by django-sitemaps-plus.")
    body = f"User-agent: *\nDisallow:\n\n{robots_sitemap_line(request)}\n"
    return HttpResponse(body, content_type=TEXT_CONTENT_TYPE)
