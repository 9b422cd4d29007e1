"""Parity with django.contrib.sitemaps: the same Sitemap classes through
contrib's views and through ours, entries and headers compared.

The classes are our own equivalents of the shapes Django's own sitemap tests
use (``tests/sitemaps_tests`` of Django 5.2: plain, paged, i18n, alternates,
limited languages, x-default, languages per item, fixed and mixed lastmod,
dates, time zones, callable lastmod, generic, https), written for this
project's test data. Deliberate differences, each asserted where it shows:

- file names: ``/sitemap-<section>-<n>.xml``, not ``/sitemap-<section>.xml?p=n``
  (old URLs redirect permanently: ``test_contrib_urls_redirect``);
- a naive lastmod is read in ``TIME_ZONE`` (contrib's ``Last-Modified`` reads
  it in the server's local time);
- lastmod written as the full time in UTC with ``Z`` (contrib writes the date
  alone, ``Y-m-d`` in ``TIME_ZONE``: Google reads the time when given); compared
  as the same date;
- the index gives each file the lastmod of its own URLs (contrib: the
  section's latest for every file); a file without lastmod on every URL has
  none in either;
- an empty section has no file and an empty site a 404 index (contrib: an
  empty ``urlset``, invalid against sitemap.xsd): ``test_an_empty_section_has_no_file``;
- locations are URIs (IRIs percent-encoded), as the protocol requires.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from email.utils import parsedate_to_datetime
from typing import Any

import pytest
from django.contrib.sitemaps import GenericSitemap, Sitemap
from django.contrib.sites.models import Site
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.http import http_date
from lxml import etree

from django_sitemaps_plus import register
from tests import parity_urls
from tests.testapp.models import Article, Event
from tests.utils import NS, articles, fetch

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.parity_urls")]

UTC = dt.timezone.utc
FIXED = dt.datetime(2013, 3, 13, 10, 0, 0)
XHTML = "{http://www.w3.org/1999/xhtml}link"


class Item:
    """A plain object item, as Django's tests use ``object()``."""

    def __init__(self, number: int, lastmod: dt.datetime | dt.date | None = None) -> None:
        self.number = number
        self.lastmod = lastmod

    def __repr__(self) -> str:
        return f"<item {self.number}>"


# The sitemaps ----------------------------------------------------------------


class SimpleSitemap(Sitemap):  # type: ignore[type-arg]
    changefreq = "never"
    priority = 0.5
    location = "/location/"
    lastmod = FIXED

    def items(self) -> list[Any]:
        return [Item(1)]


class PagedSitemap(Sitemap):  # type: ignore[type-arg]
    limit = 3

    def items(self) -> list[Any]:
        return [Item(n) for n in range(7)]

    def location(self, item: Item) -> str:
        return f"/location/?n={item.number}"


class I18nSitemap(Sitemap):  # type: ignore[type-arg]
    changefreq = "never"
    priority = 0.5
    i18n = True

    def items(self) -> list[int]:
        return [1, 2]

    def location(self, item: int) -> str:
        return reverse("i18n-item", kwargs={"pk": item})


class AlternatesI18nSitemap(I18nSitemap):
    alternates = True


class LimitedI18nSitemap(I18nSitemap):
    languages = ["en", "de"]


class XDefaultI18nSitemap(AlternatesI18nSitemap):
    x_default = True


class ItemByLangSitemap(AlternatesI18nSitemap):
    def get_languages_for_item(self, item: int) -> list[str]:
        return ["en", "fr"] if item == 1 else ["de"]


class FixedLastmodSitemap(SimpleSitemap):
    lastmod = dt.datetime(2013, 4, 20, 5, 0, 0)


class MixedLastmodSitemap(Sitemap):  # type: ignore[type-arg]
    location = "/location/"

    def items(self) -> list[Item]:
        return [Item(1, FIXED), Item(2)]

    def lastmod(self, item: Item) -> Any:
        return item.lastmod


class CallableLastmodFullSitemap(MixedLastmodSitemap):
    def items(self) -> list[Item]:
        return [Item(1, FIXED), Item(2, dt.datetime(2014, 3, 13, 10, 0, 0))]

    def location(self, item: Item) -> str:
        return f"/location/?n={item.number}"


class DateSitemap(SimpleSitemap):
    lastmod = dt.date(2013, 3, 13)


class TimezoneSitemap(SimpleSitemap):
    lastmod = dt.datetime(2013, 3, 13, 10, 0, 0, tzinfo=dt.timezone(dt.timedelta(hours=-5)))


class HTTPSSitemap(SimpleSitemap):
    protocol = "https"


class PrioritySitemap(SimpleSitemap):
    priority = 0.55


CASES: list[tuple[str, Any]] = [
    ("simple", SimpleSitemap),
    ("paged", PagedSitemap),
    ("i18n", I18nSitemap),
    ("alternates", AlternatesI18nSitemap),
    ("limited", LimitedI18nSitemap),
    ("x-default", XDefaultI18nSitemap),
    ("by-lang", ItemByLangSitemap),
    ("fixed", FixedLastmodSitemap),
    ("mixed", MixedLastmodSitemap),
    ("callable-full", CallableLastmodFullSitemap),
    ("date", DateSitemap),
    ("timezone", TimezoneSitemap),
    ("https", HTTPSSitemap),
    ("priority", PrioritySitemap),
]


# Comparing -------------------------------------------------------------------


def _instant(text: str | None) -> Any:
    if not text:
        return None
    if len(text) == 10:
        return dt.date.fromisoformat(text)
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


def entries(body: bytes, dates: bool = False) -> list[tuple[Any, ...]]:
    """Each <url>: loc, lastmod instant, changefreq, priority, alternates.

    ``dates``: lastmod as the date in ``TIME_ZONE``, as contrib writes it
    (``Y-m-d``; ours is the full time in UTC, the same instant).
    """
    root = etree.fromstring(body)
    found = []
    for url in root.iterfind("sm:url", NS):
        priority = url.findtext("sm:priority", namespaces=NS)
        lastmod = _instant(url.findtext("sm:lastmod", namespaces=NS))
        if dates and isinstance(lastmod, dt.datetime):
            lastmod = timezone.localtime(lastmod).date()
        found.append(
            (
                url.findtext("sm:loc", namespaces=NS),
                lastmod,
                url.findtext("sm:changefreq", namespaces=NS),
                float(priority) if priority else None,
                sorted((link.get("hreflang"), link.get("href")) for link in url.iter(XHTML)),
            )
        )
    return found


def _same_instant(ours: str, theirs: str) -> bool:
    """Equal Last-Modified, but for a naive lastmod: contrib's comes from
    ``datetime.timestamp()`` (the server's local time), ours reads it in
    ``TIME_ZONE``, as Django reads naive datetimes (a deliberate difference)."""
    if ours == theirs:
        return True
    our_time = dt.datetime.fromtimestamp(parsedate_to_datetime(ours).timestamp(), UTC)
    their_time = dt.datetime.fromtimestamp(parsedate_to_datetime(theirs).timestamp(), UTC)
    naive = their_time.replace(tzinfo=None)
    offset = timezone.get_current_timezone().utcoffset(naive)
    return our_time == their_time - offset


def index_lastmods(body: bytes) -> list[Any]:
    root = etree.fromstring(body)
    return [_instant(s.findtext("sm:lastmod", namespaces=NS)) for s in root]


def serve_both(name: str, sitemap: Any, **options: Any) -> None:
    parity_urls.SITEMAPS.clear()
    parity_urls.SITEMAPS[name] = sitemap
    register(sitemap, name=name, **options)


def contrib_pages(name: str) -> list[tuple[Any, bytes]]:
    pages = []
    number = 1
    while True:
        suffix = "" if number == 1 else f"?p={number}"
        response, body = fetch(f"/contrib/sitemap-{name}.xml{suffix}")
        if response.status_code != 200:
            return pages
        pages.append((response, body))
        number += 1


def our_pages(name: str) -> list[tuple[Any, bytes]]:
    pages = []
    number = 1
    while True:
        response, body = fetch(f"/sitemap-{name}-{number}.xml")
        if response.status_code != 200:
            return pages
        pages.append((response, body))
        number += 1


@pytest.fixture
def parity(settings, registry):
    """http on the Sites framework's domain (no BASE_URL), as contrib's tests run."""
    settings.SITEMAPS_PLUS = {"CACHE": False}
    settings.SITE_ID = 1
    Site.objects.clear_cache()
    Site.objects.update_or_create(pk=1, defaults={"domain": "example.com"})
    settings.SITEMAPS_PLUS = {"CACHE": False, "PROTOCOL": "http"}
    yield
    parity_urls.SITEMAPS.clear()
    Site.objects.clear_cache()


@pytest.mark.parametrize(("name", "sitemap"), CASES)
def test_same_entries_and_headers(parity, name, sitemap):
    serve_both(name, sitemap)
    theirs, ours = contrib_pages(name), our_pages(name)
    assert len(ours) == len(theirs) >= 1
    for (their_response, their_body), (our_response, our_body) in zip(theirs, ours):
        assert entries(our_body, dates=True) == entries(their_body)
        # Last-Modified exactly when contrib sends one (every URL has a lastmod).
        assert our_response.has_header("Last-Modified") == their_response.has_header(
            "Last-Modified"
        )
        if their_response.has_header("Last-Modified"):
            assert _same_instant(our_response["Last-Modified"], their_response["Last-Modified"])
    their_index = fetch("/contrib/sitemap.xml")[1]
    our_index = fetch("/sitemap.xml")[1]
    their_locs = [s.findtext("sm:loc", namespaces=NS) for s in etree.fromstring(their_index)]
    our_locs = [s.findtext("sm:loc", namespaces=NS) for s in etree.fromstring(our_index)]
    assert len(our_locs) == len(their_locs)
    # Same scheme and host for the files (contrib: the sitemap's protocol).
    assert [loc.split("/sitemap")[0] for loc in our_locs] == [
        loc.split("/contrib/")[0] for loc in their_locs
    ]
    # A file without lastmod on every URL has none in the index, as in contrib.
    for ours_lastmod, theirs_lastmod in zip(index_lastmods(our_index), index_lastmods(their_index)):
        assert (ours_lastmod is None) == (theirs_lastmod is None)


def test_generic_sitemap_with_a_date_field(parity):
    for article in articles(3):
        Article.objects.filter(pk=article.pk).update(updated_at=FIXED.replace(tzinfo=UTC))
    sitemap = GenericSitemap(
        {"queryset": Article.objects.order_by("pk"), "date_field": "updated_at"},
        priority=0.6,
        changefreq="daily",
    )
    serve_both("generic", sitemap)
    (theirs,), (ours,) = contrib_pages("generic"), our_pages("generic")
    assert entries(ours[1], dates=True) == entries(theirs[1])
    assert _same_instant(ours[0]["Last-Modified"], theirs[0]["Last-Modified"])


@pytest.mark.parametrize("cache", [False, True], ids=["uncached", "cached"])
def test_partial_lastmod_hides_no_new_url_from_a_conditional_get(parity, settings, cache):
    # Cached or not (the default cache), as contrib: no Last-Modified, so no
    # If-Modified-Since can answer 304 for a file a URL without a date joins.
    settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "CACHE": cache}
    serve_both("mixed", MixedLastmodSitemap)
    assert not Client().get("/contrib/sitemap-mixed.xml").has_header("Last-Modified")
    cold = Client().get("/sitemap-mixed-1.xml")
    warm = Client().get("/sitemap-mixed-1.xml")
    assert not cold.has_header("Last-Modified")
    assert not warm.has_header("Last-Modified")
    for since in ["Wed, 13 Mar 2013 10:00:00 GMT", http_date(time.time() + 60)]:
        response = Client().get("/sitemap-mixed-1.xml", HTTP_IF_MODIFIED_SINCE=since)
        assert response.status_code == 200
    assert b"<lastmod>" not in fetch("/sitemap.xml")[1]


# What contrib's views do beyond entries ---------------------------------------


def test_a_registered_class_is_made_per_request(parity):
    served_by: list[int] = []
    made = [0]

    class Counting(Sitemap):  # type: ignore[type-arg]
        location = "/location/"

        def __init__(self) -> None:
            made[0] += 1
            self.snapshot = made[0]  # data read when made, as a class may

        def items(self) -> list[int]:
            served_by.append(self.snapshot)
            return [self.snapshot]

    register(Counting, name="counting")
    fetch("/sitemap-counting-1.xml")
    first = set(served_by)
    served_by.clear()
    fetch("/sitemap-counting-1.xml")
    # One instance per request, never one shared from register() on.
    assert len(first) == 1 and len(set(served_by)) == 1
    assert first != set(served_by)


def test_a_class_taking_the_request_gets_it(parity):
    seen: list[Any] = []

    class WithRequest(Sitemap):  # type: ignore[type-arg]
        def __init__(self, request: Any = None) -> None:
            self.request = request

        def items(self) -> list[str]:
            seen.append(self.request)
            return ["/location/"]

        def location(self, item: str) -> str:
            return item

    register(WithRequest, name="with-request")
    assert fetch("/sitemap-with-request-1.xml")[0].status_code == 200
    assert seen and seen[-1] is not None and seen[-1].path == "/sitemap-with-request-1.xml"


def test_the_site_is_a_real_site(parity):
    read: list[tuple[Any, Any]] = []

    class ReadsSite(Sitemap):  # type: ignore[type-arg]
        location = "/location/"

        def items(self) -> list[int]:
            return [1]

        def get_urls(self, page: Any = 1, site: Any = None, protocol: Any = None) -> Any:
            read.append((site.pk, site.name))  # as django CMS's CMSSitemap does
            return super().get_urls(page=page, site=site, protocol=protocol)

    Site.objects.filter(pk=1).update(name="Example")
    Site.objects.clear_cache()
    register(ReadsSite, name="reads-site")
    assert fetch("/sitemap-reads-site-1.xml")[0].status_code == 200
    assert read[-1] == (1, "Example")


def test_the_site_can_be_filtered_by(parity):
    """The site a sitemap is handed is a Site (django CMS's CMSSitemap filters
    PageUrl rows by it, which a stand-in object breaks), on the response's host."""
    handed: list[Any] = []

    class FiltersBySite(Sitemap):  # type: ignore[type-arg]
        site: Any = None  # the index counts items without get_urls(), as CMSSitemap

        def items(self) -> Any:
            handed.append(self.site)
            site = self.site or Site.objects.get_current()
            return Site.objects.filter(pk=site.pk).values_list("name", flat=True)

        def location(self, item: str) -> str:
            return f"/{item}/"

        def get_urls(self, page: Any = 1, site: Any = None, protocol: Any = None) -> Any:
            self.site = site
            return super().get_urls(page=page, site=site, protocol=protocol)

    Site.objects.filter(pk=1).update(name="Example")
    Site.objects.clear_cache()
    register(FiltersBySite, name="filters")
    response, body = fetch("/sitemap-filters-1.xml")
    assert response.status_code == 200, body
    assert b"/Example/</loc>" in body
    assert isinstance(handed[-1], Site) and handed[-1].domain == "example.com"
    assert Site.objects.get(pk=1).domain == "example.com"  # the copy was changed, not the row


def test_a_broken_item_is_left_out_and_logged(parity, caplog):
    class Broken(Sitemap):  # type: ignore[type-arg]
        def items(self) -> list[int]:
            return [1, 2, 3]

        def location(self, item: int) -> str:
            if item == 2:
                raise ValueError("no URL for item 2")
            return f"/location/?n={item}"

        def lastmod(self, item: int) -> dt.datetime:
            return FIXED.replace(tzinfo=UTC)

    register(Broken, name="broken")
    with caplog.at_level(logging.WARNING, "django_sitemaps_plus"):
        index = Client().get("/sitemap.xml")
        response, body = fetch("/sitemap-broken-1.xml")
    assert index.status_code == 200
    assert response.status_code == 200
    assert [e[0] for e in entries(body)] == [
        "http://example.com/location/?n=1",
        "http://example.com/location/?n=3",
    ]
    assert "no URL for item 2" in caplog.text


def test_invalidated_by_for_a_contrib_sitemap(parity, settings):
    from django_sitemaps_plus.receivers import sections_for

    class Events(Sitemap):  # type: ignore[type-arg]
        invalidated_by = [Event]
        location = "/location/"

        def items(self) -> list[int]:
            return [1]

    register(Events, name="events")
    register(SimpleSitemap, name="simple", invalidated_by=[Article])
    assert sections_for(Event) == {"events"}
    assert sections_for(Article) == {"simple"}


def test_a_list_of_objects_is_invalidated_by_their_model(parity, settings):
    settings.SITEMAPS_PLUS = {"CACHE": True, "PROTOCOL": "http"}
    articles(2)

    class Listed(Sitemap):  # type: ignore[type-arg]
        def items(self) -> list[Article]:
            return list(Article.objects.order_by("pk"))

    register(Listed, name="listed")
    assert len(entries(fetch("/sitemap-listed-1.xml")[1])) == 2
    # An explicit key: articles() set keys 1 and 2 without moving PostgreSQL's sequence.
    Article.objects.create(pk=3, title="new", slug="new")
    assert len(entries(fetch("/sitemap-listed-1.xml")[1])) == 3


# Migrating: old URLs, URL names, templates, tests --------------------------------


@pytest.mark.urls("tests.legacy_urls")
def test_contrib_urls_redirect(parity):
    register(PagedSitemap, name="paged")
    first = Client().get("/sitemap-paged.xml")
    assert first.status_code == 301
    assert first["Location"] == "/sitemap-paged-1.xml"
    third = Client().get("/sitemap-paged.xml?p=3")
    assert third.status_code == 301
    assert third["Location"] == "/sitemap-paged-3.xml"
    assert Client().get("/sitemap-paged.xml?p=x").status_code == 404
    # Only registered sections: other sitemap-*.xml URLs are not shadowed.
    assert Client().get("/sitemap-unknown.xml").status_code == 404


@pytest.mark.urls("tests.legacy_urls")
def test_contrib_url_names_keep_reversing(parity):
    register(PagedSitemap, name="paged")
    assert reverse("django.contrib.sitemaps.views.index") == "/sitemap.xml"
    old = reverse("django.contrib.sitemaps.views.sitemap", kwargs={"section": "paged"})
    assert old == "/sitemap-paged.xml"
    assert Client().get(old)["Location"] == "/sitemap-paged-1.xml"


@pytest.mark.urls("tests.legacy_urls")
def test_w006_template_name_given_to_a_contrib_view(parity):
    from django_sitemaps_plus.checks import check_contrib_templates

    (warning,) = check_contrib_templates()
    assert warning.id == "sitemaps_plus.W006"
    assert "custom_sitemap_index.xml" in warning.msg


def test_w006_quiet_without_templates(parity):
    from django_sitemaps_plus.checks import check_contrib_templates

    assert check_contrib_templates() == []


def test_a_small_cached_file_reads_as_content_as_with_contrib(parity, settings):
    from django_sitemaps_plus.testing import response_bytes

    settings.SITEMAPS_PLUS = {"CACHE": True, "PROTOCOL": "http"}
    register(SimpleSitemap, name="simple")
    response = Client().get("/sitemap-simple-1.xml")
    assert b"/location/" in response.content  # as a contrib site's own tests read it
    assert response_bytes(response) == response.content
    zipped = Client().get("/sitemap-simple-1.xml", HTTP_ACCEPT_ENCODING="gzip")
    assert response_bytes(zipped) == response.content
    settings.SITEMAPS_PLUS = {"CACHE": False, "PROTOCOL": "http"}
    streamed = Client().get("/sitemap-simple-1.xml")
    assert streamed.streaming
    assert response_bytes(streamed) == response.content


class EmptySitemap(Sitemap):  # type: ignore[type-arg]
    def items(self) -> list[Any]:
        return []


class NoItemsCallableLastmodSitemap(EmptySitemap):
    def lastmod(self, item: Any) -> Any:
        return FIXED


@pytest.mark.parametrize("sitemap", [EmptySitemap, NoItemsCallableLastmodSitemap])
def test_an_empty_section_has_no_file(parity, sitemap):
    # Deliberate: contrib serves an empty urlset (invalid against sitemap.xsd).
    serve_both("empty", sitemap)
    their_response, their_body = fetch("/contrib/sitemap-empty.xml")
    assert their_response.status_code == 200 and entries(their_body) == []
    assert Client().get("/sitemap-empty-1.xml").status_code == 404
    assert Client().get("/sitemap.xml").status_code == 404


def test_each_file_gets_its_own_lastmod_in_the_index(parity):
    # Deliberate: contrib gives every file of a section the section's latest.
    serve_both("callable-full", CallableLastmodFullSitemap)
    CallableLastmodFullSitemap.limit = 1  # one URL per file, in both
    try:
        ours = index_lastmods(fetch("/sitemap.xml")[1])
        theirs = index_lastmods(fetch("/contrib/sitemap.xml")[1])
    finally:
        del CallableLastmodFullSitemap.limit
    assert len(ours) == len(theirs) == 2
    assert theirs[0] == theirs[1]
    assert ours[0] < ours[1]


def test_without_the_sites_framework_a_request_site(parity, settings):
    settings.INSTALLED_APPS = [a for a in settings.INSTALLED_APPS if a != "django.contrib.sites"]
    read: list[Any] = []

    class ReadsSite(SimpleSitemap):
        def get_urls(self, page: Any = 1, site: Any = None, protocol: Any = None) -> Any:
            read.append(site.name)
            return super().get_urls(page=page, site=site, protocol=protocol)

    serve_both("reads-site", ReadsSite)
    their = entries(fetch("/contrib/sitemap-reads-site.xml", HTTP_HOST="testserver")[1])
    ours = entries(fetch("/sitemap-reads-site-1.xml", HTTP_HOST="testserver")[1], dates=True)
    assert ours == their
    assert read == ["testserver", "testserver"]  # RequestSite.name is the host, in both
