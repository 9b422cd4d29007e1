"""News: the last two days' articles, their own file in the index, never empty."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import pytest
from django.core.checks import Error
from django.test import TestCase, override_settings

from django_sitemaps_plus.checks import check_sections
from django_sitemaps_plus.extensions import Images
from django_sitemaps_plus.extensions.news import news_language
from django_sitemaps_plus.extensions.rules import news as news_rules
from django_sitemaps_plus.registry import site
from django_sitemaps_plus.sections import NewsSection
from django_sitemaps_plus.sites import SiteContext
from tests.i18napp.models import Dispatch, NewsItem
from tests.i18napp.xmlcheck import NS, assert_valid, urlset
from tests.utils import fetch, locs

NOW = dt.datetime(2026, 5, 20, 12, 0, tzinfo=dt.timezone.utc)
SITE = SiteContext("https://example.com")


@contextmanager
def clock(now: dt.datetime) -> Iterator[None]:
    with mock.patch("django.utils.timezone.now", return_value=now):
        yield


class DailySection(NewsSection):
    model = NewsItem
    publication_name = "The Daily & Co"
    landing_location = "news-index"


@pytest.mark.usefixtures("registry")
@override_settings(ROOT_URLCONF="tests.i18napp.urls", LANGUAGE_CODE="en")
class NewsTests(TestCase):
    maxDiff = None

    def setUp(self) -> None:
        super().setUp()
        site.register(DailySection)

    def add(self, slug: str, hours_ago: float, title: str = "") -> NewsItem:
        return NewsItem.objects.create(
            slug=slug,
            title=title or slug.title(),
            published_at=NOW - dt.timedelta(hours=hours_ago),
        )

    def test_whole_document(self) -> None:
        self.add("fresh", 1, title='Rates <up> & "out"')
        self.add("old", 49)  # left the window an hour ago
        self.add("scheduled", -5)  # not published yet
        with clock(NOW):
            _, body = fetch("/sitemap-news-1.xml")
        assert_valid(body)
        self.assertXMLEqual(
            body.decode(),
            urlset(
                "<url><loc>https://example.com/news/fresh/</loc>"
                "<lastmod>2026-05-20T11:00:00Z</lastmod>"
                "<news:news><news:publication><news:name>The Daily &amp; Co</news:name>"
                "<news:language>en</news:language></news:publication>"
                "<news:publication_date>2026-05-20T11:00:00Z</news:publication_date>"
                "<news:title>Rates &lt;up&gt; &amp; &quot;out&quot;</news:title>"
                "</news:news></url>",
                prefixes=["news"],
            ),
        )

    def test_window_moves_with_the_clock(self) -> None:
        self.add("a", 1)
        self.add("b", 30)
        with clock(NOW):
            assert locs(fetch("/sitemap-news-1.xml")[1]) == [
                "https://example.com/news/a/",
                "https://example.com/news/b/",
            ]
        # Twenty hours later b is over two days old: gone, with no save.
        with clock(NOW + dt.timedelta(hours=20)):
            assert locs(fetch("/sitemap-news-1.xml")[1]) == ["https://example.com/news/a/"]

    def test_the_overview_counts_the_window_not_the_table(self) -> None:
        # The files list the last two days' articles: the admin overview's
        # counts are of those, not of every row of the model.
        self.add("fresh", 1)
        self.add("old", 49)
        self.add("older", 100)
        section = site.get("news")
        assert section is not None
        with clock(NOW):
            counts = section.lastmod_counts(SITE)
        assert counts.by_day == {dt.date(2026, 5, 20): 1}
        assert counts.undated == 0

    def test_expires_when_the_oldest_leaves(self) -> None:
        self.add("a", 1)
        self.add("b", 30)
        section = site.get("news")
        assert section is not None
        with clock(NOW):
            assert section.expires_at(1, SITE) == NOW + dt.timedelta(hours=18)

    def test_expires_when_a_scheduled_article_enters(self) -> None:
        self.add("a", 47)
        self.add("later", -0.5)
        section = site.get("news")
        assert section is not None
        with clock(NOW):
            assert section.expires_at(1, SITE) == NOW + dt.timedelta(minutes=30)
        NewsItem.objects.all().delete()
        with clock(NOW):
            assert section.expires_at(1, SITE) is None

    def test_in_the_index_and_valid_when_empty(self) -> None:
        self.add("old", 72)
        with clock(NOW):
            _, index = fetch("/sitemap.xml")
            response, body = fetch("/sitemap-news-1.xml")
        assert locs(index) == ["https://example.com/sitemap-news-1.xml"]
        assert response.status_code == 200
        # One <url> (the landing page) without news:news: valid under every schema.
        assert_valid(body)
        self.assertXMLEqual(
            body.decode(),
            urlset("<url><loc>https://example.com/news/</loc></url>", prefixes=["news"]),
        )
        # The file changed when "old" left, 24 hours ago.
        page = site.get("news").index_pages(SITE)[0]  # type: ignore[union-attr]
        assert page.lastmod == NOW - dt.timedelta(hours=24)

    def test_at_most_1000_per_file(self) -> None:
        NewsItem.objects.bulk_create(
            [
                NewsItem(
                    slug=f"n{i}",
                    title=f"N {i}",
                    published_at=NOW - dt.timedelta(minutes=i + 1),
                )
                for i in range(1_001)
            ]
        )
        with clock(NOW):
            _, index = fetch("/sitemap.xml")
            assert locs(index) == [
                "https://example.com/sitemap-news-1.xml",
                "https://example.com/sitemap-news-2.xml",
            ]
            _, first = fetch("/sitemap-news-1.xml")
            _, second = fetch("/sitemap-news-2.xml")
        root = assert_valid(first)
        assert len(root.findall("sm:url", NS)) == news_rules.MAX_NEWS_PER_FILE
        # Newest first: the oldest article is alone on page 2.
        assert locs(second) == ["https://example.com/news/n1000/"]
        assert fetch("/sitemap-news-3.xml")[0].status_code == 404

    def test_queries_read_the_window_once(self) -> None:
        NewsItem.objects.bulk_create(
            [
                NewsItem(
                    slug=f"n{i}", title=f"N {i}", published_at=NOW - dt.timedelta(minutes=i + 1)
                )
                for i in range(2_500)
            ]
        )
        with clock(NOW):
            # The window's keys and lastmods, the clock; each file's expiry
            # comes with its page (PageInfo.expires_at); the sample, the first
            # page's rows (its keys come with it).
            with self.assertNumQueries(3):
                _, index = fetch("/sitemap.xml")
            assert len(locs(index)) == 3
            # The same two, then the page's rows (page_info's keys reused).
            with self.assertNumQueries(3):
                _, body = fetch("/sitemap-news-2.xml")
            with self.assertNumQueries(3):
                _, text = fetch("/sitemap-news-3.txt")
        assert locs(body)[0] == "https://example.com/news/n1000/"
        assert locs(body)[-1] == "https://example.com/news/n1999/"
        assert len(locs(body)) == news_rules.MAX_NEWS_PER_FILE
        assert text.decode().split() == [
            f"https://example.com/news/n{i}/" for i in range(2_000, 2_500)
        ]
        # Called on its own, expires_at reads the clock itself.
        section = site.get("news")
        assert section is not None
        with clock(NOW), self.assertNumQueries(1):
            assert section.expires_at(1, SITE) == NOW - dt.timedelta(minutes=2_500) + dt.timedelta(
                days=news_rules.WINDOW_DAYS
            )

    def test_with_images(self) -> None:
        class Illustrated(DailySection):
            name = "illustrated"
            extensions = [Images(method="pictures")]

            def pictures(self, item: NewsItem) -> list[str]:
                return [f"/media/{item.slug}.jpg"]

        site.register(Illustrated)
        self.add("pic", 2)
        with clock(NOW):
            _, body = fetch("/sitemap-illustrated-1.xml")
        root = assert_valid(body)
        assert root.xpath("//image:loc/text()", namespaces=NS) == [
            "https://example.com/media/pic.jpg"
        ]
        assert root.xpath("count(//news:news)", namespaces=NS) == 1

    def test_date_and_title_across_relations(self) -> None:
        fresh = self.add("fresh", 1)
        self.add("old", 72)
        Dispatch.objects.create(story=fresh, headline="Fresh & live", slug="fresh-live")
        Dispatch.objects.create(story=NewsItem.objects.get(slug="old"), headline="Old", slug="o")

        class Dispatches(NewsSection):
            model = Dispatch
            name = "dispatches"
            publication_name = "The Daily"
            date_field = "story__published_at"
            title_field = "headline"

        site.register(Dispatches)
        assert [m for m in check_sections() if isinstance(m, Error)] == []
        with clock(NOW):
            _, body = fetch("/sitemap-dispatches-1.xml")
        root = assert_valid(body)
        assert locs(body) == ["https://example.com/news/fresh-live/"]
        assert root.xpath("//news:title/text()", namespaces=NS) == ["Fresh & live"]
        assert root.xpath("//news:publication_date/text()", namespaces=NS) == [
            "2026-05-20T11:00:00Z"
        ]
        site._registry.clear()
        site.register(Dispatches, date_field="story__published_at", title_field="story__title")
        with clock(NOW):
            _, body = fetch("/sitemap-dispatches-1.xml")
        assert assert_valid(body).xpath("//news:title/text()", namespaces=NS) == ["Fresh"]

    def test_checks(self) -> None:
        site._registry.clear()
        site.register(
            DailySection,
            publication_name="",
            date_field="slug",
            title_field="nope",
            publication_language="english",
        )
        ids = {m.id for m in check_sections() if isinstance(m, Error)}
        assert {
            "sitemaps_plus.E122",
            "sitemaps_plus.E123",
            "sitemaps_plus.E124",
            "sitemaps_plus.E125",
        } <= ids

    def test_news_listed_as_an_extension(self) -> None:
        from django_sitemaps_plus import Section
        from django_sitemaps_plus.extensions import News

        class Wrong(Section):
            name = "wrong"
            extensions = [News()]

        site.register(Wrong)
        assert "sitemaps_plus.E121" in {m.id for m in check_sections()}

    def test_clean_checks(self) -> None:
        assert [m for m in check_sections() if isinstance(m, Error)] == []


def test_news_language() -> None:
    assert news_language("en-us") == "en"
    assert news_language("zh-hans") == "zh-cn"
    assert news_language("zh-hant") == "zh-tw"
    assert news_language("pt-br") == "pt"
