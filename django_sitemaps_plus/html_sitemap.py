"""The HTML sitemap for visitors: the site's sections and their URLs as
pages of links, inside the project's own base template.

Include ``django_sitemaps_plus.html_urls`` (``path("sitemap/", include(...))``);
``{% sitemap_sections %}`` (``templatetags/sitemaps_plus.py``) embeds the
list of sections in any page.

Everything is read through the sections' engine API, as the XML views read
it: ``listed_pages(site)`` for the counts (the queries of ``/sitemap.xml``),
and ``page_entries(number, site, info)`` for one file's URLs. An HTML page is
a slice of one of the section's files (a file of 50,000 URLs is 100 HTML
pages of 500), so page N costs the index's query and one file's rows up to
the slice, never a scan of the section: the queries do not grow with N.
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.template import engines
from django.template.backends.django import DjangoTemplates
from django.urls import NoReverseMatch, reverse
from django.utils.encoding import uri_to_iri
from django.utils.safestring import SafeString

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.engine.lastmod import format_w3c, latest
from django_sitemaps_plus.registry import site as registry
from django_sitemaps_plus.sections import LastmodValue, PageInfo, Section
from django_sitemaps_plus.serving.responses import close_iterator
from django_sitemaps_plus.sites import SiteContext, site_context

#: The app namespace of ``html_urls``.
APP_NAME = "sitemaps_plus_html"

#: What every HTML sitemap page is: the body, in the configured block of the
#: configured base template (a block name cannot be a template variable).
_WRAPPER = (
    "{%% extends sitemaps_plus_base %%}{%% block %s %%}{{ sitemaps_plus_body }}{%% endblock %%}"
)


@dataclass(frozen=True)
class Link:
    """One URL of a section as the HTML sitemap shows it."""

    #: The URL as the sitemap lists it (a URI, percent-encoded): the href.
    href: str
    #: The URL for humans: non-ASCII characters decoded (an IRI).
    text: str
    #: W3C Datetime text, or None when the section gives no lastmod.
    lastmod: str | None

    @property
    def linkable(self) -> bool:
        """Only http(s) URLs are links (a sitemap lists nothing else)."""
        return urlsplit(self.href).scheme in ("http", "https")


@dataclass(frozen=True)
class SectionSummary:
    """One registered section in the list of sections."""

    name: str
    url_count: int
    file_count: int
    #: The newest lastmod of its files (None: none known).
    lastmod: LastmodValue
    #: The path of its first HTML page (None: the URLconf is not included).
    url: str | None

    @property
    def lastmod_text(self) -> str | None:
        return format_w3c(self.lastmod)


def _reverse(request: HttpRequest | None, name: str, **kwargs: Any) -> str | None:
    """A path of the included ``html_urls``, in the request's instance
    namespace when it has one; None when the URLconf is not included."""
    match = getattr(request, "resolver_match", None) if request is not None else None
    namespace = match.namespace if match and APP_NAME in match.namespaces else APP_NAME
    try:
        return reverse(f"{namespace}:{name}", kwargs=kwargs or None)
    except NoReverseMatch:
        return None


def section_url(request: HttpRequest | None, name: str, page: int = 1) -> str | None:
    """The path of page ``page`` of section ``name``'s HTML sitemap."""
    if page == 1:
        return _reverse(request, "section", section=name)
    return _reverse(request, "section_page", section=name, page=page)


def summaries(request: HttpRequest | None, site: SiteContext) -> list[SectionSummary]:
    """Every registered section with its counts: the queries of the XML index."""
    found = []
    for section in registry:
        pages = section.listed_pages(site)
        name = section.get_name()
        found.append(
            SectionSummary(
                name=name,
                url_count=sum(page.url_count for page in pages),
                file_count=len(pages),
                lastmod=latest([page.lastmod for page in pages]),
                url=section_url(request, name) if pages else None,
            )
        )
    return found


def page_count(pages: Sequence[PageInfo], size: int) -> int:
    """HTML pages of a section whose files are ``pages``: each file is cut
    into pages of ``size`` links (a file's last one may be shorter)."""
    return sum(-(-page.url_count // size) for page in pages)


def locate(pages: Sequence[PageInfo], size: int, number: int) -> tuple[PageInfo, int] | None:
    """The file HTML page ``number`` is a slice of, and the slice's start
    in it; None past the last page."""
    if number < 1:
        return None
    remaining = number - 1
    for page in pages:
        slices = -(-page.url_count // size)
        if remaining < slices:
            return page, remaining * size
        remaining -= slices
    return None


def display_url(uri: str) -> str:
    """``uri`` for humans (an IRI): percent-encoded UTF-8 decoded where it
    stands for a character (``uri_to_iri``), and an internationalised host
    in its Unicode form (``xn--bcher-kva.example`` is ``bücher.example``)."""
    iri = uri_to_iri(uri)
    if "xn--" not in iri.lower():
        return iri
    parts = urlsplit(iri)
    host = parts.hostname or ""
    try:
        unicode_host = host.encode("ascii").decode("idna")
    except UnicodeError:
        return iri
    # ``hostname`` is lower-cased: find it in the netloc whatever its case.
    start = parts.netloc.lower().rindex(host)
    netloc = parts.netloc[:start] + unicode_host + parts.netloc[start + len(host) :]
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _entry_link(entry: str) -> Link:
    """The loc and lastmod of one ``<url>`` entry as the engine writes it
    (``<url><loc>...</loc><lastmod>...</lastmod>...``)."""
    start = entry.index("<loc>") + len("<loc>")
    end = entry.index("</loc>", start)
    href = html.unescape(entry[start:end])
    lastmod = None
    rest = end + len("</loc>")
    if entry.startswith("<lastmod>", rest):
        rest += len("<lastmod>")
        lastmod = entry[rest : entry.index("</lastmod>", rest)]
    return Link(href=href, text=display_url(href), lastmod=lastmod)


def links(section: Section, site: SiteContext, info: PageInfo, start: int, size: int) -> list[Link]:
    """``size`` links of ``info``'s file from ``start``.

    The file's entries are streamed and the stream closed after the slice:
    the rows past it are never fetched, the rows before it once.
    """
    entries: Iterator[str] = iter(section.page_entries(info.number, site, info))
    try:
        return [_entry_link(entry) for entry in islice(entries, start, start + size)]
    finally:
        close_iterator(entries)


def _backend() -> DjangoTemplates:
    """The project's first Django template engine (the base template is one)."""
    for engine in engines.all():
        if isinstance(engine, DjangoTemplates):
            return engine
    raise Http404("The HTML sitemap needs the Django template engine in TEMPLATES.")


def render_page(
    request: HttpRequest, template_name: str, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    """``template_name`` rendered, inside the base template's block."""
    backend = _backend()
    body = backend.get_template(template_name).render(context, request)
    wrapper = backend.from_string(_WRAPPER % conf.HTML_SITEMAP_BLOCK)
    page = wrapper.render(
        {
            **context,
            "sitemaps_plus_base": conf.HTML_SITEMAP_BASE_TEMPLATE,
            "sitemaps_plus_body": SafeString(body),
        },
        request,
    )
    return HttpResponse(page, status=status)


def _page_links(request: HttpRequest, name: str, number: int, last: int) -> dict[str, Any]:
    """First, previous, next and last pages' paths around page ``number``."""

    def url(page: int) -> str | None:
        return section_url(request, name, page)

    return {
        "first_url": url(1) if number > 1 else None,
        "previous_url": url(number - 1) if number > 1 else None,
        "next_url": url(number + 1) if number < last else None,
        "last_url": url(last) if number < last else None,
    }


# Views ---------------------------------------------------------------------------


def index(request: HttpRequest) -> HttpResponse:
    """Every registered section, with its number of URLs and its newest lastmod."""
    site = site_context(request)
    return render_page(
        request,
        "django_sitemaps_plus/html_sitemap/index.html",
        {"sitemap_sections": summaries(request, site)},
    )


def section(request: HttpRequest, section: str, page: int = 1) -> HttpResponse:
    """One page of a section's URLs: ``HTML_SITEMAP_PAGE_SIZE`` links."""
    found = registry.get(section)
    if found is None:
        raise Http404("No such sitemap section.")
    site = site_context(request)
    size = conf.HTML_SITEMAP_PAGE_SIZE
    pages = found.listed_pages(site)
    located = locate(pages, size, page)
    if located is None:
        raise Http404("No such page of this sitemap section.")
    info, start = located
    shown = links(found, site, info, start, size)
    if not shown:
        # Every URL of the slice was left out (logged by the section).
        raise Http404("No URL on this page of this sitemap section.")
    last = page_count(pages, size)
    first_number = start + 1 + sum(p.url_count for p in pages if p.number < info.number)
    context = {
        "sitemap_section": found.get_name(),
        "sitemap_links": shown,
        "page_number": page,
        "page_count": last,
        "first_number": first_number,
        "last_number": first_number + len(shown) - 1,
        "url_count": sum(p.url_count for p in pages),
        "index_url": _reverse(request, "index"),
        **_page_links(request, found.get_name(), page, last),
    }
    return render_page(request, "django_sitemaps_plus/html_sitemap/section.html", context)


def first_page(request: HttpRequest, section: str) -> HttpResponsePermanentRedirect:
    """``<section>/1/``: the first page's one address is ``<section>/``."""
    target = section_url(request, section)
    if target is None:  # pragma: no cover - the URLconf that routed here reverses
        raise Http404("No such sitemap section.")
    return HttpResponsePermanentRedirect(target)
