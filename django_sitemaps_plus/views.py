"""The sitemap views: the index, each section's files, text files, robots.txt.

With ``SITEMAPS_PLUS["CACHE"]`` on (the default) files are served from
Django's cache (``cache.py``): rendered once as a stream into gzip and
stored compressed, sent to a gzip client as an ``HttpResponse`` of the
compressed bytes and to others as a stream decompressed on the fly (memory
follows the compressed size). With the cache off (or down) every response
streams while it renders, so memory stays flat in page size. With
``SERVE_BUILT`` files come from what ``build_sitemaps`` wrote
(``storage.py``). Headers that need no rendering (Last-Modified, 304, HEAD,
404) are answered from the page's lastmod, which costs one aggregate query
and no row fetch.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial, wraps
from itertools import chain
from typing import Any, TypeVar

from django.db import DatabaseError
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    HttpResponsePermanentRedirect,
)
from django.urls import NoReverseMatch, reverse

from django_sitemaps_plus import names, protocol
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.engine import layout, pagination, xml
from django_sitemaps_plus.engine.lastmod import format_w3c, latest_of_all
from django_sitemaps_plus.registry import site as registry
from django_sitemaps_plus.sections import ModelSection, PageInfo, Section
from django_sitemaps_plus.serving import cache as sitemap_cache
from django_sitemaps_plus.serving import responses, storage
from django_sitemaps_plus.serving.cache import Source
from django_sitemaps_plus.serving.responses import Prepared
from django_sitemaps_plus.sites import SiteContext, site_context

logger = logging.getLogger("django_sitemaps_plus")

XML_CONTENT_TYPE = "application/xml; charset=utf-8"
TEXT_CONTENT_TYPE = "text/plain; charset=utf-8"
#: Seconds a client is asked to wait when the database is unavailable.
RETRY_AFTER_SECONDS = 120

T = TypeVar("T")
#: What a sitemap view serves: the site, the file, and its name among built files.
Served = tuple[SiteContext, Source, str]


def _unavailable(view: Callable[..., Any], error: DatabaseError) -> HttpResponse:
    """A database that is down gives 503 with Retry-After, not a traceback."""
    logger.error("Sitemap view %s: database unavailable", view.__name__, exc_info=error)
    response = HttpResponse(
        "Sitemap temporarily unavailable.\n", status=503, content_type=TEXT_CONTENT_TYPE
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def sitemap_view(describe: Callable[..., Served]) -> Callable[..., HttpResponseBase]:
    """The view serving what ``describe(request, ...)`` names: the site, the
    file's ``Source`` and its name among built files.

    A plain sync view: Django calls it in the request's thread under WSGI,
    and in a thread (``sync_to_async``) under ASGI, where a streamed body is
    still sent as it is produced (``cache.streaming_response``).
    """

    @wraps(describe)
    def view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        try:
            return _serve(request, *describe(request, *args, **kwargs))
        except DatabaseError as error:
            return _unavailable(view, error)

    view.__name__ = view.__qualname__ = describe.__name__.lstrip("_")
    return view


def _url_name(request: HttpRequest, name: str) -> str:
    match = request.resolver_match
    namespace = match.namespace if match and match.namespace else "sitemaps_plus"
    return f"{namespace}:{name}"


#: A page number no file has: reversed once per section and replaced by each
#: file's number, so an index of 200 files costs one ``reverse()`` a section,
#: not 200 (a fifth of the index's time after a save at 10^7 rows).
PAGE_PLACEHOLDER = 987_654_321


def file_urls(
    request: HttpRequest, site: SiteContext, section: str, ext: str
) -> Callable[[int], str]:
    """The absolute URL of each file of ``section``, by its number."""
    name = _url_name(request, "section" if ext == "xml" else "section_txt")

    def reversed_url(page: int) -> str:
        return site.absolute(reverse(name, kwargs={"section": section, "page": page}))

    try:
        url = reversed_url(PAGE_PLACEHOLDER)
    except NoReverseMatch:
        return reversed_url  # a project's own pattern, narrower than ours
    head, found, tail = url.partition(str(PAGE_PLACEHOLDER))
    if not found or str(PAGE_PLACEHOLDER) in tail:
        return reversed_url  # the number written otherwise, or twice
    return lambda page: f"{head}{page}{tail}"


def stylesheet_href(request: HttpRequest) -> str | None:
    """The path of the XSL stylesheet the XML files name, or None when off."""
    if not conf.STYLESHEET:
        return None
    return reverse(_url_name(request, "stylesheet"))


def _section_or_404(name: str) -> Section:
    section = registry.get(name)
    if section is None:
        raise Http404("No such sitemap section.")
    return section


def _earliest(values: Iterable[dt.datetime | None]) -> dt.datetime | None:
    found = [v for v in values if v is not None]
    return min(found) if found else None


def _serve(request: HttpRequest, site: SiteContext, source: Source, built: str) -> HttpResponseBase:
    """Answer from the built files, the cache, or a fresh render (by settings)."""
    if conf.SERVE_BUILT:
        return storage.serve_built(request, built, source.content_type)
    if conf.CACHE:
        return sitemap_cache.serve(request, site, source)
    return responses.respond_uncached(request, source.prepare(), source.content_type)


def _once(compute: Callable[[], T]) -> Callable[[], T]:
    """``compute``, run at most once: a cache miss with ``CACHE_FRESHNESS_CHECK``
    needs the same queries for the fingerprint and for ``prepare()``."""
    results: list[T] = []

    def get() -> T:
        if not results:
            results.append(compute())
        return results[0]

    return get


#: Each section with its files, computed once, when asked.
AllPages = Callable[[], list[tuple[Section, list[PageInfo]]]]


def _all_pages(site: SiteContext) -> tuple[list[Section], AllPages]:
    """The registered sections, and each one's files as ``index_pages``
    counts them (computed once, when asked)."""
    sections = list(registry)
    return sections, _once(lambda: [(s, s.index_pages(site)) for s in sections])


def _all_sections_source(
    sections: list[Section], content_type: str, prepare: Callable[[], Prepared], pages: AllPages
) -> Source:
    """A file showing every section: the index or ``sitemap.txt``."""
    return Source(sections, content_type, prepare, lambda: [(s.get_name(), p) for s, p in pages()])


def _index(request: HttpRequest) -> Served:
    """``/sitemap.xml``: always a sitemap index, one entry per section file.
    Always an index, even for one small section, so the URL and the format
    never change as the site grows. With no URL at all it is a 404.
    """
    site = site_context(request)
    sections, counted = _all_pages(site)
    # The files listed: none that would have no URL (``Section.listed_pages``);
    # the fingerprint stays the counts, which read no row.
    all_pages = _once(lambda: [(s, s.listed_pages(site, pages)) for s, pages in counted()])

    def prepare() -> Prepared:
        href = stylesheet_href(request)
        entries: list[xml.IndexedFile] = []
        lastmods: list[dt.date | dt.datetime | None] = []
        expiries: list[dt.datetime | None] = []
        for section, pages in all_pages():
            name = section.get_name()
            # A contrib sitemap's own protocol names its files too, as in contrib.
            file_url = file_urls(request, section.own_site(site), name, "xml")
            for page in pages:
                loc = file_url(page.number)
                entries.append(xml.IndexedFile(loc, format_w3c(page.lastmod), page.url_count))
                lastmods.append(page.lastmod)
                expiries.append(section.page_expires_at(page, site))
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
        # Any file without a lastmod: none for the index (a new such file
        # must not be hidden by a 304).
        return Prepared(
            latest_of_all(lastmods), lambda: xml.stream_index(entries, href), _earliest(expiries)
        )

    source = _all_sections_source(sections, XML_CONTENT_TYPE, prepare, counted)
    return site, source, "sitemap.xml"


def _first_or_404(entries: Iterable[str]) -> Iterator[str]:
    """``entries``, after reading the first: a file whose rows were all
    refused (each logged) is a 404, never an empty ``urlset`` (invalid
    against sitemap.xsd) or an empty text file. Called before the response
    starts, so the 404 can still be sent."""
    iterator = iter(entries)
    for first in iterator:
        return chain((first,), iterator)
    raise Http404("Every URL of this sitemap page was left out (see the log).")


def _section_file(request: HttpRequest, section: str, page: int, ext: str) -> Served:
    """One file of a section, as XML (``ext`` "xml") or text ("txt")."""
    found = _section_or_404(section)
    site = site_context(request)

    def body(info: PageInfo) -> Iterator[bytes]:
        # The body gets the info: what page_info computed is not computed twice.
        if ext == "xml":
            return xml.stream_urlset(
                _first_or_404(found.page_entries(page, site, info)),
                found.namespaces(),
                label=f"Sitemap section {found.get_name()!r}",
                stylesheet=stylesheet_href(request),
            )
        return xml.stream_text(_first_or_404(found.page_locations(page, site, info)))

    if conf.CACHE or conf.SERVE_BUILT or responses.is_conditional(request):
        page_info = _once(lambda: found.page_info(page, site))
    else:
        # Rendered per request and not conditional: the Last-Modified the
        # latest index listed the file with (no query before the first byte
        # when the layout is kept); it may lag a change, which a later
        # conditional request, answered from page_info, does not.
        page_info = _once(lambda: found.listed_info(page, site))

    def prepare() -> Prepared:
        info = page_info()
        if info is None:
            raise Http404("No such sitemap page.")
        return Prepared(info.lastmod, lambda: body(info), found.page_expires_at(info, site))

    scope = None
    if (
        conf.CACHE
        and not conf.SERVE_BUILT
        and isinstance(found, ModelSection)
        and found.files_keyed_by_blocks()
    ):
        # Keyed by the blocks it holds: a save elsewhere leaves it warm.
        scope = layout.file_scope(found, page, site, partial(_file_span, page_info))
    source = Source(
        [found],
        XML_CONTENT_TYPE if ext == "xml" else TEXT_CONTENT_TYPE,
        prepare,
        page_info,
        scope=scope,
    )
    return site, source, names.file_name(section, page, ext)


def _file_span(page_info: Callable[[], PageInfo | None]) -> pagination.Span | None:
    info = page_info()
    span = None if info is None else info.prepared
    return span if isinstance(span, pagination.Span) else None


def _section_xml(request: HttpRequest, section: str, page: int) -> Served:
    """``/sitemap-<section>-<page>.xml``: one file of a section."""
    return _section_file(request, section, page, "xml")


def _section_txt(request: HttpRequest, section: str, page: int) -> Served:
    """``/sitemap-<section>-<page>.txt``: the same URLs as text, one per line."""
    return _section_file(request, section, page, "txt")


def _once_each(pages: Sequence[tuple[Section, PageInfo]], site: SiteContext) -> Iterator[str]:
    """Every file's URLs in order, each once: sections may list the same URL
    (a news section's articles), and one text file must not (Google: SM313).
    At most 50,000 URLs are held (``_fits_one_text_file``)."""
    seen: set[str] = set()
    for section, page in pages:
        for location in section.page_locations(page.number, site, page):
            if location not in seen:
                seen.add(location)
                yield location


def _fits_one_text_file(pages: Sequence[tuple[Section, PageInfo]]) -> bool:
    """Whether every file's URLs fit one text file: 50,000 lines, and bytes
    under the limit, bounded by the files' entry bytes (a line is shorter
    than its ``<url>`` entry) or by ``max_loc_length``, the lower."""
    if sum(page.url_count for _, page in pages) > protocol.MAX_URLS_PER_FILE:
        return False
    size = 0
    for section, page in pages:
        # A line: the location (ASCII: iri_to_uri) and "\n", at most.
        lines = page.url_count * (section.get_max_loc_length() + 1)
        # Entry bytes bound the lines too (a line is shorter than its entry),
        # but a file sized by its worst case counts every extension's
        # largest children: whichever bound is lower.
        size += lines if page.entry_bytes is None else min(page.entry_bytes, lines)
    return size <= protocol.MAX_FILE_BYTES


def _text(request: HttpRequest) -> Served:
    """``/sitemap.txt``: every section's URLs in one text file, when they fit.
    A text sitemap cannot be an index, so past one file's limits this is a
    404 and the per-section ``.txt`` files are the text sitemaps to use.
    """
    site = site_context(request)
    sections, all_pages = _all_pages(site)

    def prepare() -> Prepared:
        # Every counted file: one without a URL adds no line (none is probed).
        pages = [(s, p) for s, section_pages in all_pages() for p in section_pages]
        if not _fits_one_text_file(pages):
            raise Http404("Too many URLs for one text sitemap; use the per-section .txt files.")

        return Prepared(
            latest_of_all([p.lastmod for _, p in pages]),
            lambda: xml.stream_text(_first_or_404(_once_each(pages, site))),
            _earliest(s.page_expires_at(p, site) for s, p in pages),
        )

    source = _all_sections_source(sections, TEXT_CONTENT_TYPE, prepare, all_pages)
    return site, source, "sitemap.txt"


index = sitemap_view(_index)
section = sitemap_view(_section_xml)
section_txt = sitemap_view(_section_txt)
text = sitemap_view(_text)


def legacy_section(request: HttpRequest, section: str) -> HttpResponseBase:
    """``/sitemap-<section>.xml?p=N``, django.contrib.sitemaps' file URL: a
    permanent redirect to ``/sitemap-<section>-<N>.xml``.

    Sitemaps submitted to Search Console and named in robots.txt while the
    site used contrib keep working after the migration (docs/migration.md).
    """
    page = names.page_number(request.GET.get("p", "1"))
    if page is None:
        raise Http404("No such sitemap page.")
    target = reverse(_url_name(request, "section"), kwargs={"section": section, "page": page})
    return HttpResponsePermanentRedirect(target)


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
