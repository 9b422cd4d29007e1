"""The views end to end through Django's test client."""

from __future__ import annotations

import datetime as dt
import logging

import pytest
from django.contrib.sitemaps import GenericSitemap, Sitemap
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.utils.http import http_date

from django_sitemaps_plus import Section, register
from django_sitemaps_plus.serving import versions
from tests.testapp.models import Article, Author, Comment, Event, Tag
from tests.utils import articles, assert_schema_valid, at, fetch, lastmods, locs

pytestmark = pytest.mark.django_db

UTC = dt.timezone.utc


class TestIndex:
    def test_lists_one_entry_per_file_with_that_files_lastmod(self, registry):
        register(Article, lastmod_fields=["updated_at"], limit=2)
        a, b, c = articles(3)
        Article.objects.filter(pk=a.pk).update(updated_at=at(1))
        Article.objects.filter(pk=b.pk).update(updated_at=at(5))
        Article.objects.filter(pk=c.pk).update(updated_at=at(3))
        response, body = fetch("/sitemap.xml")
        assert response.status_code == 200
        root = assert_schema_valid(body)
        assert root.tag.endswith("sitemapindex")
        assert locs(body) == [
            "https://example.com/sitemap-articles-1.xml",
            "https://example.com/sitemap-articles-2.xml",
        ]
        # contrib would give every file the section's maximum (5 Jan).
        assert lastmods(body) == ["2024-01-05T12:00:00Z", "2024-01-03T12:00:00Z"]
        assert response["Last-Modified"] == http_date(at(5).timestamp())

    def test_sections_in_registration_order_and_without_lastmod(self, registry):
        @register
        class PagesSection(Section):
            def items(self):
                return ["home", "about"]

        register(Article)
        articles(1)
        _, body = fetch("/sitemap.xml")
        assert locs(body) == [
            "https://example.com/sitemap-pages-1.xml",
            "https://example.com/sitemap-articles-1.xml",
        ]
        assert lastmods(body) == [None, None]

    def test_empty_sections_are_not_listed(self, registry):
        register(Article)
        register(Event)
        Event.objects.create(name="e", day=dt.date(2024, 2, 1))
        _, body = fetch("/sitemap.xml")
        assert locs(body) == ["https://example.com/sitemap-events-1.xml"]

    def test_nothing_to_list_is_404_not_an_invalid_empty_index(self, registry):
        register(Article)
        assert Client().get("/sitemap.xml").status_code == 404

    def test_index_query_count_is_constant_per_section(self, registry):
        register(
            Article,
            lastmod_fields=["updated_at", "comments__created_at", "tags__updated_at"],
            limit=1,
        )
        for article in articles(5, updated_at=at(1)):
            Comment.objects.create(article=article, created_at=at(2))
        with CaptureQueriesContext(connection) as queries:
            _response, body = fetch("/sitemap.xml")
        assert len(locs(body)) == 5
        # The largest key (the pages), one range-aggregate query for own
        # fields, one per many-valued relation; then the sample: the first
        # file's first rows, which show the section's items give URLs.
        assert len(queries) == 5


class TestSectionPage:
    def test_page_content_headers_and_schema(self, registry):
        register(Article, lastmod_fields=["updated_at"])
        (_article,) = articles(1, updated_at=at(7, 9))
        response, body = fetch("/sitemap-articles-1.xml")
        assert response.status_code == 200
        assert response["Content-Type"] == "application/xml; charset=utf-8"
        assert response["X-Robots-Tag"] == "noindex, noodp, noarchive"
        assert response["Last-Modified"] == http_date(at(7, 9).timestamp())
        assert_schema_valid(body)
        assert body == (
            b'<?xml version="1.0" encoding="UTF-8"?>\n'
            b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            b"<url><loc>https://example.com/articles/article-0/</loc>"
            b"<lastmod>2024-01-07T09:00:00Z</lastmod></url>\n"
            b"</urlset>\n"
        )

    @pytest.mark.parametrize(
        "url",
        [
            "/sitemap-articles-2.xml",
            "/sitemap-articles-0.xml",
            "/sitemap-articles-01.xml",
            "/sitemap-articles-x.xml",
            "/sitemap-nosuch-1.xml",
            "/sitemap-nosuch.xml",  # contrib's file URL, of no registered section
        ],
    )
    def test_missing_or_malformed_page_is_404(self, registry, url):
        register(Article)
        articles(1)
        assert Client().get(url).status_code == 404

    def test_malformed_page_costs_no_query(self, registry):
        register(Article)
        with CaptureQueriesContext(connection) as queries:
            assert Client().get("/sitemap-articles-01.xml").status_code == 404
        assert len(queries) == 0

    def test_page_costs_constant_queries_whatever_its_size(self, registry):
        register(
            Article,
            lastmod_fields=["updated_at", "comments__created_at"],
            url_name="article",
            url_kwargs={"slug": "slug"},
        )
        for article in articles(30, updated_at=at(1)):
            Comment.objects.create(article=article, created_at=at(2))
        with CaptureQueriesContext(connection) as queries:
            _, body = fetch("/sitemap-articles-1.xml")
        assert len(locs(body)) == 30
        # The layout: the largest key, then the figures of the own fields and
        # of the reverse FK; then the rows.
        assert len(queries) == 4

    def test_rows_deleted_between_index_and_page(self, registry):
        register(Article, limit=2)
        _a, b, c = articles(3)
        _, index = fetch("/sitemap.xml")
        assert len(locs(index)) == 2
        Article.objects.filter(pk__in=[b.pk, c.pk]).delete()
        _response, body = fetch("/sitemap-articles-1.xml")
        assert locs(body) == ["https://example.com/articles/article-0/"]
        # Page 2 lost all its rows: now a plain 404, no error.
        assert Client().get("/sitemap-articles-2.xml").status_code == 404

    def test_non_ascii_slugs_are_percent_encoded_on_both_paths(self, registry):
        register(Article)
        register(Article, name="fast", url_name="article", url_kwargs={"slug": "slug"})
        Article.objects.create(pk=1, title="x", slug="über-café")
        Article.objects.create(pk=2, title="y", slug="日本")
        expected = [
            "https://example.com/articles/%C3%BCber-caf%C3%A9/",
            "https://example.com/articles/%E6%97%A5%E6%9C%AC/",
        ]
        _, slow = fetch("/sitemap-articles-1.xml")
        _, fast = fetch("/sitemap-fast-1.xml")
        assert locs(slow) == locs(fast) == expected
        assert_schema_valid(fast)

    def test_conditional_get_gives_304_without_fetching_rows(self, registry):
        register(Article, lastmod_fields=["updated_at"])
        articles(3, updated_at=at(3))
        client = Client()
        with CaptureQueriesContext(connection) as queries:
            response = client.get(
                "/sitemap-articles-1.xml", HTTP_IF_MODIFIED_SINCE=http_date(at(3).timestamp())
            )
        assert response.status_code == 304
        assert len(queries) == 2  # the layout (largest key, figures); no rows
        stale = client.get(
            "/sitemap-articles-1.xml", HTTP_IF_MODIFIED_SINCE=http_date(at(2).timestamp())
        )
        assert stale.status_code == 200

    def test_head_sends_headers_only(self, registry):
        register(Article, lastmod_fields=["updated_at"])
        articles(2, updated_at=at(3))
        response = Client().head("/sitemap-articles-1.xml")
        assert response.status_code == 200
        assert response["Last-Modified"] == http_date(at(3).timestamp())
        assert response.content == b""

    def test_changefreq_and_priority_when_set(self, registry):
        register(Article, changefreq="weekly", priority=0.8)
        articles(1)
        _, body = fetch("/sitemap-articles-1.xml")
        assert b"<changefreq>weekly</changefreq><priority>0.8</priority></url>" in body
        assert_schema_valid(body)

    def test_changefreq_and_priority_omitted_by_default(self, registry):
        register(Article)
        articles(1)
        _, body = fetch("/sitemap-articles-1.xml")
        assert b"changefreq" not in body and b"priority" not in body


class TestLocations:
    def test_invalid_locations_are_dropped_and_logged(self, registry, caplog):
        class OddSection(Section):
            name = "odd"

            def items(self):
                return [
                    "/fine/",
                    "relative/path",
                    "https://other.example/x",
                    "/" + "a" * 2100,
                    "home",
                ]

        register(OddSection)
        with caplog.at_level(logging.WARNING, logger="django_sitemaps_plus"):
            _, body = fetch("/sitemap-odd-1.xml")
        assert locs(body) == ["https://example.com/fine/", "https://example.com/"]
        messages = " ".join(r.getMessage() for r in caplog.records)
        assert "'relative/path'" in messages and "is relative" in messages
        assert "other.example" in messages
        assert "longer than 2,048" in messages

    def test_same_host_absolute_location_is_kept_and_escaped(self, registry):
        class QuerySection(Section):
            name = "q"

            def items(self):
                return ["https://example.com/search?a=1&b='2'"]

        register(QuerySection)
        _, body = fetch("/sitemap-q-1.xml")
        assert b"<loc>https://example.com/search?a=1&amp;b=&apos;2&apos;</loc>" in body
        assert locs(body) == ["https://example.com/search?a=1&b='2'"]

    @override_settings(SITEMAPS_PLUS={})
    def test_sites_framework_gives_the_host_without_base_url(self, registry):
        from django.contrib.sites.models import Site

        Site.objects.update_or_create(pk=1, defaults={"domain": "shop.example.org"})
        register(Article)
        articles(1)
        _, body = fetch("/sitemap.xml")
        assert locs(body) == ["https://shop.example.org/sitemap-articles-1.xml"]

    @override_settings(SITEMAPS_PLUS={})
    def test_request_host_without_base_url_or_sites(self, registry, monkeypatch):
        from django.apps import apps

        monkeypatch.setattr(apps, "is_installed", lambda name: name != "django.contrib.sites")
        register(Article)
        articles(1)
        _, body = fetch("/sitemap.xml", HTTP_HOST="shop.test")
        assert locs(body) == ["http://shop.test/sitemap-articles-1.xml"]

    @override_settings(SITEMAPS_PLUS={"BASE_URL": "http://127.0.0.1:8000/"})
    def test_base_url_setting_with_port_and_trailing_slash(self, registry):
        register(Article)
        articles(1)
        _, body = fetch("/sitemap-articles-1.xml")
        assert locs(body) == ["http://127.0.0.1:8000/articles/article-0/"]


class TestLastmod:
    def test_latest_of_own_forward_reverse_and_m2m_fields(self, registry):
        register(
            Article,
            lastmod_fields=[
                "updated_at",
                "author__updated_at",
                "comments__created_at",
                "tags__updated_at",
            ],
        )
        author = Author.objects.create(name="a", updated_at=at(4))
        tag = Tag.objects.create(name="t", updated_at=at(6))
        own, by_author, by_comment, by_tag, _none = articles(5)
        Article.objects.filter(pk=own.pk).update(updated_at=at(9))
        Article.objects.filter(pk=by_author.pk).update(updated_at=at(1), author=author)
        Comment.objects.create(article=by_comment, created_at=at(2))
        Comment.objects.create(article=by_comment, created_at=at(8))
        by_tag.tags.add(tag)
        _, body = fetch("/sitemap-articles-1.xml")
        assert lastmods(body) == [
            "2024-01-09T12:00:00Z",
            "2024-01-04T12:00:00Z",
            "2024-01-08T12:00:00Z",
            "2024-01-06T12:00:00Z",
            None,
        ]
        # One URL without a lastmod: the file has none (as in contrib).
        _, index = fetch("/sitemap.xml")
        assert lastmods(index) == [None]
        Article.objects.filter(pk=_none.pk).update(updated_at=at(3))
        _, index = fetch("/sitemap.xml")
        assert lastmods(index) == ["2024-01-09T12:00:00Z"]

    def test_a_url_added_without_a_lastmod_is_not_hidden_by_a_304(self, registry):
        register(Article, lastmod_fields=["updated_at"])
        articles(2, updated_at=at(5))
        response, _ = fetch("/sitemap-articles-1.xml")
        since = response["Last-Modified"]
        assert fetch("/sitemap-articles-1.xml", HTTP_IF_MODIFIED_SINCE=since)[0].status_code == 304
        # A new row without a date (bulk_create: no signal, no new lastmod).
        Article.objects.bulk_create([Article(pk=3, title="t", slug="undated")])
        response, body = fetch("/sitemap-articles-1.xml", HTTP_IF_MODIFIED_SINCE=since)
        assert response.status_code == 200
        assert "Last-Modified" not in response
        assert any(loc.endswith("/articles/undated/") for loc in locs(body))
        assert lastmods(fetch("/sitemap.xml")[1]) == [None]

    def test_a_related_date_dates_a_row_without_its_own(self, registry):
        register(Article, lastmod_fields=["updated_at", "comments__created_at"])
        first, second = articles(2)
        Article.objects.filter(pk=first.pk).update(updated_at=at(3))
        Comment.objects.create(article=second, created_at=at(7))
        # Both rows have a lastmod (the second from its comment): the file has one.
        assert lastmods(fetch("/sitemap.xml")[1]) == ["2024-01-07T12:00:00Z"]
        Comment.objects.all().delete()
        assert lastmods(fetch("/sitemap.xml")[1]) == [None]

    @pytest.mark.parametrize(
        ("model", "fields", "missing"),
        [
            ("Comment", ["created_at"], False),
            ("Comment", ["article__updated_at"], True),
            ("Comment", ["created_at", "article__updated_at"], False),
            ("Article", ["updated_at", "comments__created_at"], True),
        ],
    )
    def test_which_rows_can_lack_a_lastmod(self, model, fields, missing):
        from django_sitemaps_plus.engine.lastmod import LastmodSpec
        from tests.testapp import models as testmodels

        assert LastmodSpec(getattr(testmodels, model), fields).can_be_missing is missing

    def test_date_field_gives_a_date(self, registry):
        register(Event, lastmod_fields=["day"])
        Event.objects.create(name="e", day=dt.date(2024, 2, 29))
        _, body = fetch("/sitemap-events-1.xml")
        assert lastmods(body) == ["2024-02-29"]
        assert_schema_valid(body)

    def test_date_mixed_with_datetime_counts_as_midnight_utc(self, registry):
        register(Article, lastmod_fields=["updated_at", "published_on"])
        later_date, later_time = articles(2)
        Article.objects.filter(pk=later_date.pk).update(
            updated_at=at(1, 23), published_on=dt.date(2024, 1, 2)
        )
        Article.objects.filter(pk=later_time.pk).update(
            updated_at=at(2, 1), published_on=dt.date(2024, 1, 2)
        )
        _, body = fetch("/sitemap-articles-1.xml")
        assert lastmods(body) == ["2024-01-02T00:00:00Z", "2024-01-02T01:00:00Z"]

    def test_aware_datetimes_in_other_zones_are_written_in_utc(self, registry):
        register(Article, lastmod_fields=["updated_at"])
        tokyo = dt.timezone(dt.timedelta(hours=9))
        articles(1, updated_at=dt.datetime(2024, 3, 1, 8, 30, tzinfo=tokyo))
        _, body = fetch("/sitemap-articles-1.xml")
        assert lastmods(body) == ["2024-02-29T23:30:00Z"]

    @override_settings(USE_TZ=False, TIME_ZONE="Europe/Berlin")
    def test_use_tz_off_naive_local_times_become_utc(self, registry):
        register(Article, lastmod_fields=["updated_at", "comments__created_at"])
        (article,) = articles(1, updated_at=dt.datetime(2024, 7, 1, 12, 0))
        Comment.objects.create(article=article, created_at=dt.datetime(2024, 1, 1, 12, 0))
        _, body = fetch("/sitemap-articles-1.xml")
        # Berlin is UTC+2 in July.
        assert lastmods(body) == ["2024-07-01T10:00:00Z"]
        _, index = fetch("/sitemap.xml")
        assert lastmods(index) == ["2024-07-01T10:00:00Z"]

    def test_generation_time_is_never_used(self, registry):
        register(Article, lastmod_fields=["updated_at"])
        articles(2)
        _, body = fetch("/sitemap-articles-1.xml")
        assert lastmods(body) == [None, None]
        response, index = fetch("/sitemap.xml")
        assert lastmods(index) == [None]
        assert not response.has_header("Last-Modified")


class TestContribAndPlainSections:
    def test_contrib_generic_sitemap_registered_unchanged(self, registry):
        for article in articles(3):
            Article.objects.filter(pk=article.pk).update(updated_at=at(article.pk % 28 + 1))
        register(
            GenericSitemap(
                {"queryset": Article.objects.order_by("pk"), "date_field": "updated_at"},
                priority=0.6,
                changefreq="daily",
            ),
            name="generic",
        )
        _, body = fetch("/sitemap-generic-1.xml")
        assert_schema_valid(body)
        assert locs(body) == [f"https://example.com/articles/article-{i}/" for i in range(3)]
        assert b"<changefreq>daily</changefreq><priority>0.6</priority>" in body

    def test_contrib_sitemap_subclass_with_pages_and_per_file_lastmod(self, registry):
        class StaticSitemap(Sitemap):
            limit = 1

            def items(self):
                return ["home", "about"]

            def location(self, item):
                from django.urls import reverse

                return reverse(item)

            def lastmod(self, item):
                return at(1) if item == "home" else at(2)

        register(StaticSitemap)
        _, index = fetch("/sitemap.xml")
        assert locs(index) == [
            "https://example.com/sitemap-static-1.xml",
            "https://example.com/sitemap-static-2.xml",
        ]
        assert lastmods(index) == ["2024-01-01T12:00:00Z", "2024-01-02T12:00:00Z"]
        _, page = fetch("/sitemap-static-2.xml")
        assert locs(page) == ["https://example.com/about/"]

    def test_contrib_page_with_lastmod_is_rendered_once_per_request(self, registry):
        calls: list[str] = []

        class CountingSitemap(Sitemap):
            def items(self):
                return ["home", "about"]

            def location(self, item):
                calls.append(item)
                from django.urls import reverse

                return reverse(item)

            def lastmod(self, item):
                return at(3)

        register(CountingSitemap)
        response, body = fetch("/sitemap-counting-1.xml")
        assert response["Last-Modified"] == http_date(at(3).timestamp())
        assert locs(body) == ["https://example.com/", "https://example.com/about/"]
        # page_info's rendering (for Last-Modified) is reused for the body.
        assert calls == ["home", "about"]

    def test_contrib_without_lastmod_counts_pages_without_fetching_rows(
        self, registry, django_assert_num_queries
    ):
        articles(9)
        sitemap = GenericSitemap({"queryset": Article.objects.order_by("pk")})
        sitemap.limit = 2
        register(sitemap, name="generic")
        # One COUNT for the five files: no paginator per access; then the
        # sample, contrib's get_urls() of the first file (its COUNT, its rows).
        with django_assert_num_queries(3):
            response, index = fetch("/sitemap.xml")
        assert response.status_code == 200
        assert len(locs(index)) == 5
        # The file: a COUNT for its page info, then contrib's get_urls() (its
        # own COUNT and the page's rows).
        with django_assert_num_queries(3):
            _, page = fetch("/sitemap-generic-5.xml")
        assert locs(page) == ["https://example.com/articles/article-8/"]
        assert Client().get("/sitemap-generic-6.xml").status_code == 404

    @override_settings(LANGUAGES=[("en", "English"), ("de", "German")])
    def test_contrib_i18n_alternates(self, registry):
        class I18nSitemap(Sitemap):
            i18n = True
            alternates = True
            x_default = True

            def items(self):
                return ["/page/"]

            def location(self, item):
                return item

        register(I18nSitemap)
        _, body = fetch("/sitemap-i18n-1.xml")
        assert b'xmlns:xhtml="http://www.w3.org/1999/xhtml"' in body
        assert body.count(b"<url>") == 2
        assert b'hreflang="x-default"' in body

    def test_plain_section_with_url_names_paths_and_lastmod(self, registry):
        class PagesSection(Section):
            has_lastmod = True
            changefreq = "monthly"

            def items(self):
                return ["home", "/contact/"]

            def lastmod(self, item):
                return dt.date(2024, 5, 1) if item == "home" else None

        register(PagesSection)
        _, body = fetch("/sitemap-pages-1.xml")
        assert_schema_valid(body)
        assert locs(body) == ["https://example.com/", "https://example.com/contact/"]
        assert lastmods(body) == ["2024-05-01", None]


class TestText:
    def test_section_text_file(self, registry):
        register(Article)
        Article.objects.create(pk=1, title="x", slug="über")
        response, body = fetch("/sitemap-articles-1.txt")
        assert response["Content-Type"] == "text/plain; charset=utf-8"
        assert body == b"https://example.com/articles/%C3%BCber/\n"

    def test_site_text_file_concatenates_sections(self, registry):
        @register
        class PagesSection(Section):
            def items(self):
                return ["home"]

        register(Article)
        articles(2)
        _, body = fetch("/sitemap.txt")
        assert body.decode().splitlines() == [
            "https://example.com/",
            "https://example.com/articles/article-0/",
            "https://example.com/articles/article-1/",
        ]

    def test_site_text_file_lists_a_url_of_two_sections_once(self, registry):
        """A news section lists articles its articles section lists too: each
        in its own XML file, but one text file lists each URL once (SM313)."""
        register(Article)
        register(Article, name="also-articles")
        articles(2)
        _, body = fetch("/sitemap.txt")
        assert body.decode().splitlines() == [
            "https://example.com/articles/article-0/",
            "https://example.com/articles/article-1/",
        ]
        assert len(fetch("/sitemap-also-articles-1.txt")[1].splitlines()) == 2

    def test_site_text_file_holds_sections_of_several_xml_files(self, registry):
        # The sections' limit is about their XML files; one text file takes
        # up to 50,000 lines.
        register(Article, limit=2)
        articles(3)
        assert len(fetch("/sitemap.txt")[1].splitlines()) == 3

    @pytest.mark.parametrize(
        ("limit", "value"), [("MAX_URLS_PER_FILE", 2), ("MAX_FILE_BYTES", 100)]
    )
    def test_site_text_file_404_when_over_one_file(self, registry, monkeypatch, limit, value):
        from django_sitemaps_plus import protocol

        register(Article)
        articles(3)
        assert Client().get("/sitemap.txt").status_code == 200
        monkeypatch.setattr(protocol, limit, value)
        assert Client().get("/sitemap.txt").status_code == 404


class TestRobots:
    def test_robots_txt_off_by_default(self):
        assert Client().get("/robots.txt").status_code == 404

    @override_settings(SITEMAPS_PLUS={"BASE_URL": "https://example.com", "ROBOTS_TXT": True})
    def test_robots_txt_names_the_index(self):
        response = Client().get("/robots.txt")
        assert response.content.decode().endswith("\nSitemap: https://example.com/sitemap.xml\n")

    def test_template_tag(self):
        from django.template import Context, Template

        rendered = Template("{% load sitemaps_plus %}{% sitemap_robots_line %}").render(Context({}))
        assert rendered == "Sitemap: https://example.com/sitemap.xml"


def test_database_down_gives_503_with_retry_after(registry, monkeypatch):
    from django.db import OperationalError

    from django_sitemaps_plus.sections import ModelSection as Model

    def broken(*args, **kwargs):
        raise OperationalError("database unavailable")

    register(Article)
    # A plain GET asks listed_info, a conditional one page_info: both fail.
    monkeypatch.setattr(Model, "page_info", broken)
    monkeypatch.setattr(Model, "listed_info", broken)
    response = Client().get("/sitemap-articles-1.xml")
    assert response.status_code == 503
    assert response["Retry-After"] == "120"


class TestSettings:
    """Each setting changes what is served (docs/settings.md)."""

    @override_settings(SITEMAPS_PLUS={"BASE_URL": "https://example.com", "X_ROBOTS_TAG": "none"})
    def test_x_robots_tag(self, registry):
        register(Article)
        articles(1)
        for url in ("/sitemap.xml", "/sitemap-articles-1.xml", "/sitemap-articles-1.txt"):
            assert Client().get(url)["X-Robots-Tag"] == "none"

    @pytest.mark.parametrize(("protocol", "scheme"), [(None, "https"), ("http", "http")])
    def test_protocol_of_the_sites_framework_domain(self, registry, protocol, scheme):
        # No BASE_URL: the Sites framework's domain ("example.com") with PROTOCOL.
        options: dict[str, object] = {"CACHE": False}
        if protocol is not None:
            options["PROTOCOL"] = protocol
        register(Article)
        articles(1)
        with override_settings(SITEMAPS_PLUS=options):
            _, index = fetch("/sitemap.xml")
            _, body = fetch("/sitemap-articles-1.xml")
        assert locs(index) == [f"{scheme}://example.com/sitemap-articles-1.xml"]
        assert locs(body) == [f"{scheme}://example.com/articles/article-0/"]

    @override_settings(SITEMAPS_PLUS={"BASE_URL": "https://example.com", "LIMIT": 2})
    def test_limit(self, registry):
        register(Article)
        articles(5)
        _, index = fetch("/sitemap.xml")
        assert len(locs(index)) == 3
        _, body = fetch("/sitemap-articles-3.xml")
        assert locs(body) == ["https://example.com/articles/article-4/"]

    @override_settings(SITEMAPS_PLUS={"BASE_URL": "https://example.com", "MAX_LOC_LENGTH": 40})
    def test_max_loc_length(self, registry, caplog):
        register(Article)
        Article.objects.create(pk=1, title="a", slug="short")  # 35 characters
        Article.objects.create(pk=2, title="b", slug="x" * 20)  # 50 characters
        with caplog.at_level(logging.WARNING, logger="django_sitemaps_plus"):
            _, body = fetch("/sitemap-articles-1.xml")
        assert locs(body) == ["https://example.com/articles/short/"]
        assert "is longer than 40 characters" in caplog.text

    def test_files_past_the_index_maximum_are_left_out_and_logged(
        self, registry, monkeypatch, caplog
    ):
        from django_sitemaps_plus import protocol

        monkeypatch.setattr(protocol, "MAX_SITEMAPS_PER_INDEX", 2)
        register(Article, limit=1)
        articles(3)
        with caplog.at_level(logging.ERROR, logger="django_sitemaps_plus"):
            _, index = fetch("/sitemap.xml")
        assert locs(index) == [
            "https://example.com/sitemap-articles-1.xml",
            "https://example.com/sitemap-articles-2.xml",
        ]
        assert "would list 3 files; the protocol allows 2" in caplog.text


@override_settings(ROOT_URLCONF="tests.testapp.urls_namespaced")
def test_an_instance_namespace_names_its_own_files(registry):
    register(Article)
    articles(1)
    _, index = fetch("/maps/sitemap.xml")
    assert locs(index) == ["https://example.com/maps/sitemap-articles-1.xml"]
    _, root_index = fetch("/sitemap.xml")
    assert locs(root_index) == ["https://example.com/sitemap-articles-1.xml"]
    _, body = fetch("/maps/sitemap-articles-1.xml")
    assert locs(body) == ["https://example.com/articles/article-0/"]


@pytest.mark.parametrize(
    ("url", "method"),
    [
        ("/sitemap.xml", "index_pages"),
        ("/sitemap.txt", "index_pages"),
        ("/sitemap-articles-1.txt", "listed_info"),
    ],
)
def test_database_down_gives_503_on_every_view(registry, monkeypatch, url, method):
    from django.db import OperationalError

    from django_sitemaps_plus.sections import ModelSection

    def broken(*args, **kwargs):
        raise OperationalError("database unavailable")

    register(Article)
    monkeypatch.setattr(ModelSection, method, broken)
    response = Client().get(url)
    assert response.status_code == 503
    assert response["Retry-After"] == "120"


@pytest.mark.parametrize(
    ("url", "limit", "queries"),
    [
        # The largest key, then one UNION of per-range aggregates; the sample
        # of the first file's rows.
        ("/sitemap.xml", 2, 3),
        ("/sitemap.txt", 50_000, 2 + 1),  # and the one file's rows
        # The layout (largest key, figures), then the page's rows.
        ("/sitemap-articles-1.xml", 2, 3),
        ("/sitemap-articles-1.txt", 2, 3),
    ],
)
def test_a_cache_miss_with_the_freshness_check_queries_once(
    settings, registry, django_assert_num_queries, url, limit, queries
):

    settings.SITEMAPS_PLUS = {
        "BASE_URL": "https://example.com",
        "CACHE": True,
        "CACHE_FRESHNESS_CHECK": True,
    }
    versions.invalidate()
    register(Article, lastmod_fields=["updated_at"], limit=limit)
    articles(5, updated_at=at(1))
    # The fingerprint (checked on a hit) is what prepare() computes: not run twice.
    with django_assert_num_queries(queries):
        response, _ = fetch(url)
    assert response.status_code == 200
    with django_assert_num_queries(1 if url.startswith("/sitemap-") else 2):
        fetch(url)  # a hit: the freshness queries only


@override_settings(ROOT_URLCONF="tests.i18napp.urls", MEDIA_URL="/media/")
def test_a_text_file_fetches_no_extension_data(registry, django_assert_num_queries):
    from django_sitemaps_plus import ModelSection
    from django_sitemaps_plus.extensions import Images
    from tests.i18napp.models import Gallery, Photo

    class GallerySection(ModelSection):
        model = Gallery
        name = "galleries"
        extensions = [Images("photos__file")]

    gallery = Gallery.objects.create(pk=1, slug="alps", cover="c.jpg")
    Photo.objects.create(gallery=gallery, file="p/1.jpg")
    Gallery.objects.create(pk=2, slug="beach", cover="d.jpg")
    register(GallerySection)
    _, xml_body = fetch("/sitemap-galleries-1.xml")
    assert b"<image:loc>" in xml_body
    # Its rows only (its layout and Last-Modified kept from the XML file's
    # request); not the photos.
    with django_assert_num_queries(1):
        _, text = fetch("/sitemap-galleries-1.txt")
    assert text.decode().splitlines() == locs(xml_body)


@pytest.mark.parametrize("ext", ["xml", "txt"])
def test_a_plain_section_file_reads_items_and_lastmod_once(registry, ext):
    calls: list[str] = []

    @register
    class PagesSection(Section):
        has_lastmod = True
        limit = 2

        def items(self):
            calls.append("items")
            return ["home", "/a?b=1&c=2", "/c/"]

        def lastmod(self, item):
            calls.append(f"lastmod {item}")
            return at(2) if item == "home" else at(1)

    response, body = fetch(f"/sitemap-pages-1.{ext}")
    assert response["Last-Modified"] == http_date(at(2).timestamp())
    expected = ["https://example.com/", "https://example.com/a?b=1&c=2"]
    assert (locs(body) if ext == "xml" else body.decode().splitlines()) == expected
    assert calls == ["items", "lastmod home", "lastmod /a?b=1&c=2"]
    calls.clear()
    assert Client().get(f"/sitemap-pages-3.{ext}").status_code == 404
    assert Client().get(f"/sitemap-pages-2.{ext}").status_code == 200


@pytest.mark.parametrize(
    ("given", "written"),
    [(0.55, "0.55"), (0.25, "0.25"), (1, "1.0"), (0, "0.0"), ("0.8", "0.8"), (0.123456, "0.1235")],
)
def test_priority_is_written_as_given(registry, given, written):
    class Prioritised(Section):
        varies_per_item = True
        name = "prioritised"

        def items(self):
            return ["/a/"]

        def get_priority(self, item):
            return given

    register(Prioritised)
    _, body = fetch("/sitemap-prioritised-1.xml")
    assert f"<priority>{written}</priority>".encode() in body


@pytest.mark.parametrize("given", [1.5, -0.1, "high", float("nan")])
def test_priority_outside_the_protocol_is_left_out(registry, given):
    class Prioritised(Section):
        varies_per_item = True
        name = "prioritised"

        def items(self):
            return ["/a/"]

        def get_priority(self, item):
            return given

    register(Prioritised)
    response, body = fetch("/sitemap-prioritised-1.xml")
    assert response.status_code == 200
    assert b"<priority>" not in body


def test_contrib_priority_is_not_rounded(registry):
    articles(1)
    register(GenericSitemap({"queryset": Article.objects.order_by("pk")}, priority=0.55))
    (name,) = [s.get_name() for s in registry]
    _, body = fetch(f"/sitemap-{name}-1.xml")
    assert b"<priority>0.55</priority>" in body


@pytest.mark.django_db
def test_index_file_urls_are_each_files_own_whatever_the_prefix(registry, settings):
    """The index names its files with one ``reverse()`` a section, the file
    number put in place of a placeholder; a URLconf whose prefix holds the
    placeholder's digits makes it reverse each file: the same URLs."""
    from django.urls import reverse

    from django_sitemaps_plus import views

    assert str(views.PAGE_PLACEHOLDER) == "987654321"
    settings.ROOT_URLCONF = "tests.placeholder_urls"
    register(Article, lastmod_fields=["updated_at"], limit=2)
    articles(5)
    _, body = fetch("/maps987654321/sitemap.xml")
    expected = [
        "https://example.com"
        + reverse("sitemaps_plus:section", kwargs={"section": "articles", "page": n})
        for n in (1, 2, 3)
    ]
    assert locs(body) == expected
    assert expected[2] == "https://example.com/maps987654321/sitemap-articles-3.xml"
