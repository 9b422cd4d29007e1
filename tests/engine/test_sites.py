"""Per-request sites: the site resolver, sections that list per site, cache keys."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.contrib.sites.models import Site
from django.core.checks import run_checks
from django.http import HttpRequest
from django.test import Client, RequestFactory, override_settings
from lxml import etree

from django_sitemaps_plus import ModelSection, Section, register
from django_sitemaps_plus.receivers import sections_for
from django_sitemaps_plus.sites import SiteContext, get_site_resolver, site_context
from tests.testapp.models import Article, Author
from tests.utils import NS, articles, fetch

pytestmark = pytest.mark.django_db


def _locs(url: str, client: Client | None = None, **headers: str) -> list[str]:
    response, body = fetch(url, client, **headers)
    assert response.status_code == 200, body
    return [e.text or "" for e in etree.fromstring(body).iterfind(".//sm:loc", NS)]


def _files(client: Client | None = None, **headers: str) -> list[str]:
    """The paths of the files the index lists: file numbers follow the rows'
    keys, which don't restart at 1 between tests on every database."""
    return [urlsplit(loc).path for loc in _locs("/sitemap.xml", client, **headers)]


@pytest.fixture
def two_sites(settings):
    """example.com (id 1) and example.org, chosen by the request's host."""
    settings.SITEMAPS_PLUS = {"CACHE": False}
    settings.SITE_ID = None
    Site.objects.clear_cache()
    Site.objects.update_or_create(pk=1, defaults={"domain": "example.com", "name": "com"})
    org = Site.objects.create(domain="example.org", name="org")
    yield org
    Site.objects.clear_cache()


def _per_site_section(registry) -> None:
    @register(Article)
    class PerSiteArticles(ModelSection):
        url_name = "article"
        url_kwargs = {"slug": "slug"}

        def get_queryset(self, site):
            # Each site lists the articles whose title names its domain.
            queryset = super().get_queryset()
            return queryset if site is None else queryset.filter(title=site.domain)


class TestDefaultResolver:
    def test_sites_framework_site_and_request_are_handed_on(self, two_sites):
        request = RequestFactory().get("/sitemap.xml", HTTP_HOST="example.org")
        site = site_context(request)
        assert site.base_url == "https://example.org"
        assert site.site == two_sites
        assert site.request is request
        assert site.site_key == f"sites.site:{two_sites.pk}"

    def test_base_url_names_the_host_and_no_site_is_looked_up(
        self, settings, django_assert_num_queries
    ):
        settings.SITEMAPS_PLUS = {"BASE_URL": "https://canonical.example"}
        Site.objects.clear_cache()
        with django_assert_num_queries(0):
            site = site_context(RequestFactory().get("/"))
        assert site.base_url == "https://canonical.example"
        assert site.site is None
        assert site.cache_key == "https://canonical.example"


class TestSectionsPerSite:
    def test_model_section_lists_each_sites_rows(self, two_sites, registry):
        _per_site_section(registry)
        Article.objects.create(title="example.com", slug="on-com")
        Article.objects.create(title="example.org", slug="on-org")
        (com_file,) = _files(HTTP_HOST="example.com")
        (org_file,) = _files(HTTP_HOST="example.org")
        assert com_file.startswith("/sitemap-articles-")
        com = _locs(com_file, HTTP_HOST="example.com")
        org = _locs(org_file, HTTP_HOST="example.org")
        assert com == ["https://example.com/articles/on-com/"]
        assert org == ["https://example.org/articles/on-org/"]

    def test_a_site_without_rows_has_no_file(self, two_sites, registry):
        _per_site_section(registry)
        Article.objects.create(title="example.com", slug="on-com")
        (com_file,) = _files(HTTP_HOST="example.com")
        # No file, so no index either: an empty site is a 404, not an empty sitemapindex.
        assert Client().get("/sitemap.xml", HTTP_HOST="example.org").status_code == 404
        assert Client().get(com_file, HTTP_HOST="example.org").status_code == 404

    def test_plain_section_items_take_the_site(self, two_sites, registry):
        @register
        class Landing(Section):
            def items(self, site):
                return ["/" if site is None else f"/{site.name}/"]

        assert _locs("/sitemap-landing-1.xml", HTTP_HOST="example.org") == [
            "https://example.org/org/"
        ]

    def test_overrides_without_the_argument_still_work(self, two_sites, registry):
        @register(Article)
        class Published(ModelSection):
            def get_queryset(self):
                return super().get_queryset().filter(is_published=True)

        _first, second = articles(2)
        Article.objects.filter(pk=second.pk).update(is_published=False)
        (file,) = _files(HTTP_HOST="example.org")
        assert _locs(file, HTTP_HOST="example.org") == ["https://example.org/articles/article-0/"]

    def test_dependencies_are_found_with_no_site(self, registry):
        @register(Article)
        class ByAuthor(ModelSection):
            def get_queryset(self, site):
                assert site is None  # discovery happens outside any request
                return super().get_queryset().filter(author__name="x")

        assert "articles" in sections_for(Author)


def _site_from_cookie(request: HttpRequest | None) -> SiteContext:
    """A resolver choosing the site by a cookie: one host, two sites."""
    chosen = request.COOKIES.get("site", "example.com") if request is not None else "example.com"
    return SiteContext("https://shared.example", Site.objects.get(domain=chosen), request)


class TestResolverSetting:
    @override_settings(
        SITEMAPS_PLUS={"SITE_RESOLVER": "tests.engine.test_sites._site_from_cookie", "CACHE": True}
    )
    def test_cached_files_are_keyed_by_site_not_only_host(self, two_sites, registry):
        _per_site_section(registry)
        Article.objects.create(title="example.com", slug="on-com")
        Article.objects.create(title="example.org", slug="on-org")
        com = Client()
        org = Client()
        org.cookies["site"] = "example.org"
        (com_file,) = _files(com)
        (org_file,) = _files(org)
        for _ in range(2):  # the second round is served from the cache
            assert _locs(com_file, com) == ["https://shared.example/articles/on-com/"]
            assert _locs(org_file, org) == ["https://shared.example/articles/on-org/"]

    def test_an_app_config_names_the_resolver(self, settings, monkeypatch):
        from django.apps import apps

        config = apps.get_app_config("testapp")
        monkeypatch.setattr(
            config,
            "sitemaps_plus_site_resolver",
            "tests.engine.test_sites._site_from_cookie",
            raising=False,
        )
        assert get_site_resolver() is _site_from_cookie
        settings.SITEMAPS_PLUS = {
            "SITE_RESOLVER": "django_sitemaps_plus.sites.default_site_context"
        }
        assert get_site_resolver() is not _site_from_cookie

    @pytest.mark.parametrize(
        ("value", "problem"),
        [
            ("tests.engine.test_sites.nothing_here", "cannot be imported"),
            ("tests.engine.test_sites.NS", "not callable"),
        ],
    )
    def test_a_bad_resolver_fails_check_e016(self, settings, value, problem):
        settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "SITE_RESOLVER": value}
        errors = [e for e in run_checks() if e.id == "sitemaps_plus.E016"]
        assert len(errors) == 1
        assert problem in errors[0].msg
