"""The flags the engine asks a section (and an extension) instead of
comparing its methods with the base class's: each declared by the class,
never inferred from the methods it defines (check W009 warns of a hook
overridden without its flag: tests/sections/test_checks.py)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from django_sitemaps_plus import ModelSection, Section
from django_sitemaps_plus.contrib.django_sitemaps import ContribSection
from django_sitemaps_plus.engine import measuring, render
from django_sitemaps_plus.extensions.base import Extension
from django_sitemaps_plus.extensions.hreflang import Hreflang
from django_sitemaps_plus.sections import PageInfo
from django_sitemaps_plus.sites import SiteContext
from tests.testapp.models import Article
from tests.utils import articles

SITE = SiteContext("https://example.com")
UPDATED = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
EDITED = dt.datetime(2025, 6, 7, 8, 0, 0, tzinfo=dt.timezone.utc)


def _entries(section: Section, number: int = 1) -> list[str]:
    return list(section.page_entries(number, SITE, section.page_info(number, SITE)))


# varies_per_item ----------------------------------------------------------------


class _Pages(Section):
    name = "pages"
    priority = 0.5

    def items(self) -> list[str]:
        return ["/a/", "/b/"]


class _PerItem(_Pages):
    varies_per_item = True

    def get_priority(self, item: Any) -> float:
        return 0.9 if item == "/a/" else 0.1


def test_a_section_declaring_varies_per_item_asks_each_item():
    assert not _Pages.varies_per_item
    assert _PerItem.varies_per_item
    entries = _entries(_PerItem())
    assert "<priority>0.9</priority>" in entries[0]
    assert "<priority>0.1</priority>" in entries[1]


def test_a_hook_without_its_flag_is_not_inferred():
    class Weekly:
        def get_changefreq(self, item: Any) -> str:
            return "weekly" if item == "/a/" else "yearly"

    class Mixed(Weekly, _Pages):
        changefreq = "daily"

    class Declared(Weekly, _Pages):
        varies_per_item = True

    assert not Mixed.varies_per_item
    assert all("<changefreq>daily</changefreq>" in entry for entry in _entries(Mixed()))
    entries = _entries(Declared())
    assert "<changefreq>weekly</changefreq>" in entries[0]
    assert "<changefreq>yearly</changefreq>" in entries[1]


def test_a_section_that_says_it_does_not_vary_writes_its_own_priority():
    class Uniform(_PerItem):
        varies_per_item = False

    assert render.renders_plain(Uniform())
    assert all("<priority>0.5</priority>" in entry for entry in _entries(Uniform()))


def test_a_section_may_say_it_varies_per_item_as_an_option():
    section = _Pages(varies_per_item=True)
    assert not render.renders_plain(section)
    assert all("<priority>0.5</priority>" in entry for entry in _entries(section))


def test_a_method_given_as_an_option_is_asked_with_its_flag():
    section = _Pages(get_priority=lambda item: 0.9 if item == "/a/" else 0.1, varies_per_item=True)
    entries = _entries(section)
    assert "<priority>0.9</priority>" in entries[0]
    assert "<priority>0.1</priority>" in entries[1]


# has_lastmod --------------------------------------------------------------------


class _Listed(Section):
    name = "listed"

    def items(self) -> Any:
        return Article.objects.order_by("pk")


@pytest.mark.django_db
def test_a_queryset_section_defining_lastmod_dates_its_files():
    class Dated(_Listed):
        has_lastmod = True

        def lastmod(self, item: Any) -> Any:
            return item.updated_at

    articles(3, updated_at=UPDATED)
    assert Dated.has_lastmod and not _Listed.has_lastmod
    (page,) = Dated().index_pages(SITE)
    assert page.lastmod == UPDATED
    with CaptureQueriesContext(connection) as queries:
        (page,) = _Listed().index_pages(SITE)
    assert all("COUNT(" in q["sql"].upper() for q in queries.captured_queries)
    assert page.lastmod is None and page.url_count == 3


@pytest.mark.django_db
def test_a_section_that_says_it_has_no_lastmod_is_counted():
    class Undated(_Listed):
        has_lastmod = False

        def lastmod(self, item: Any) -> Any:
            raise AssertionError("not asked")

    articles(3, updated_at=UPDATED)
    with CaptureQueriesContext(connection) as queries:
        (page,) = Undated().index_pages(SITE)
    assert all("COUNT(" in q["sql"].upper() for q in queries.captured_queries)
    assert page.lastmod is None and page.url_count == 3


# defines_own_pages --------------------------------------------------------------


class _Numbered(_Pages):
    defines_own_pages = True

    def index_pages(self, site: SiteContext) -> list[PageInfo]:
        return [PageInfo(7, None, 2)]


def test_a_section_listing_its_own_pages_answers_page_info_from_them():
    assert _Numbered.defines_own_pages and not _Pages.defines_own_pages
    assert _Numbered().page_info(7, SITE) == PageInfo(7, None, 2)
    assert _Numbered().page_info(1, SITE) is None


def test_a_section_wrapping_index_pages_may_keep_pages_of_its_items():
    class Wrapped(_Numbered):
        defines_own_pages = False

    info = Wrapped().page_info(1, SITE)
    assert info is not None and info.url_count == 2


def test_model_and_contrib_sections_define_their_own_pages():
    assert ModelSection.defines_own_pages and ContribSection.defines_own_pages
    assert ContribSection.writes_own_entries and not ModelSection.writes_own_entries
    assert ContribSection.defines_own_page_info


# defines_own_page_info ------------------------------------------------------------


class _EditorialDates(ModelSection):
    """A user's ModelSection whose files take their lastmod from elsewhere."""

    model = Article
    name = "edited"
    lastmod_fields = ["updated_at"]
    defines_own_page_info = True

    def page_info(self, number: int, site: SiteContext) -> PageInfo | None:
        info = super().page_info(number, site)
        return None if info is None else replace(info, lastmod=EDITED)


@pytest.mark.django_db
def test_a_model_section_defining_page_info_is_asked_it_by_a_plain_get(registry, settings):
    """Cache off, a plain GET after the index (the layout kept): the
    subclass's own page_info gives Last-Modified, not the kept layout's
    figures (which ModelSection's listed_info would answer from)."""
    from django.utils.http import http_date

    from django_sitemaps_plus import register
    from tests.utils import fetch

    assert settings.SITEMAPS_PLUS["CACHE"] is False
    register(_EditorialDates)
    articles(3, updated_at=UPDATED)
    fetch("/sitemap.xml")
    response, _ = fetch("/sitemap-edited-1.xml")
    assert response.status_code == 200
    assert response["Last-Modified"] == http_date(EDITED.timestamp())
    assert _EditorialDates.defines_own_page_info and not ModelSection.defines_own_page_info


def test_news_sections_answer_a_plain_get_from_their_own_page_info():
    from django_sitemaps_plus.sections import NewsSection

    assert NewsSection.defines_own_page_info and NewsSection.writes_own_entries
    assert "listed_info" not in vars(NewsSection)


# page_rows / range_rows -------------------------------------------------------------


def _upper_rows(rows: Any) -> Any:
    """Each batch of rows with its URL in capitals (a visible override)."""
    for batch in rows:
        yield [
            (item, url.upper() if url else url, lastmod, values)
            for item, url, lastmod, values in batch
        ]


class _Ranged(ModelSection):
    model = Article
    name = "ranged"

    def range_rows(self, after: int | None, last: int, site: SiteContext) -> Any:
        return _upper_rows(super().range_rows(after, last, site))


@pytest.mark.django_db
def test_range_rows_is_what_the_layout_measures(registry, monkeypatch):
    """Measured (a 30,000-byte limit: two worst-case entries would not fit),
    the layout counts the URLs of the rows range_rows gives."""
    from django_sitemaps_plus import protocol

    class FirstOnly(ModelSection):
        model = Article
        name = "first"

        def range_rows(self, after: int | None, last: int, site: SiteContext) -> Any:
            for rows in super().range_rows(after, last, site):
                yield [row for row in rows if row[0].pk == 1]

    monkeypatch.setattr(protocol, "MAX_FILE_BYTES", 30_000)
    articles(3)
    section = FirstOnly()
    assert measuring.measure_blocks(section, SITE) == 1
    (page,) = section.index_pages(SITE)
    assert page.url_count == 1


@pytest.mark.django_db
def test_range_rows_is_what_files_read(registry):
    articles(2)
    (page,) = _Ranged().index_pages(SITE)
    assert list(_Ranged().page_locations(1, SITE, page)) == [
        "HTTPS://EXAMPLE.COM/ARTICLES/ARTICLE-0/",
        "HTTPS://EXAMPLE.COM/ARTICLES/ARTICLE-1/",
    ]


# writes_own_entries -------------------------------------------------------------


class _Landing(_Pages):
    writes_own_entries = True

    def page_entries(self, number: int, site: SiteContext, info: PageInfo | None = None) -> Any:
        yield "<url><loc>https://example.com/landing/</loc></url>\n"
        yield from super().page_entries(number, site, info)


def test_the_text_sitemap_of_a_section_writing_its_own_entries_reads_them():
    assert _Landing.writes_own_entries
    assert list(_Landing().page_locations(1, SITE)) == [
        "https://example.com/landing/",
        "https://example.com/a/",
        "https://example.com/b/",
    ]


def test_a_section_that_says_its_entries_are_its_rows_lists_the_rows():
    class Logged(_Landing):
        writes_own_entries = False

    assert list(Logged().page_locations(1, SITE)) == [
        "https://example.com/a/",
        "https://example.com/b/",
    ]


# Extension.gives_versions -------------------------------------------------------


class _Twice(Extension):
    prefix = "x"
    namespace = "urn:x"
    gives_versions = True

    def urls_per_item(self, section: Any) -> int:
        return 2

    def versions(self, section: Any, item: Any, data: Any, site: Any, locate: Any) -> Any:
        return [(f"https://example.com{item}one/", ""), (f"https://example.com{item}two/", "")]


def test_an_extension_declaring_gives_versions_gives_the_entries():
    assert _Twice.gives_versions and Hreflang.gives_versions
    assert not Extension.gives_versions
    section = _Pages(extensions=[_Twice()])
    assert list(section.page_locations(1, SITE)) == [
        "https://example.com/a/one/",
        "https://example.com/a/two/",
        "https://example.com/b/one/",
        "https://example.com/b/two/",
    ]


def test_an_extension_that_says_it_gives_no_versions_keeps_the_location():
    class Once(_Twice):
        gives_versions = False

        def urls_per_item(self, section: Any) -> int:
            return 1

    section = _Pages(extensions=[Once()])
    assert list(section.page_locations(1, SITE)) == [
        "https://example.com/a/",
        "https://example.com/b/",
    ]
