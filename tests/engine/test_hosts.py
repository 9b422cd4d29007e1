"""Hosts from the request are normalised before they enter a URL or a cache key."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from django_sitemaps_plus import register
from django_sitemaps_plus.sites import normalized_origin
from tests.testapp.models import Article
from tests.utils import articles, fetch, locs

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://WWW.EXAMPLE.COM", "http://www.example.com"),
        ("HTTPS://Example.com:443", "https://example.com"),
        ("http://example.com:80", "http://example.com"),
        ("https://example.com:80", "https://example.com:80"),
        ("http://example.com:8000", "http://example.com:8000"),
        ("https://BÜCHER.example", "https://xn--bcher-kva.example"),
        ("http://[2001:DB8::1]:80", "http://[2001:db8::1]"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
    ],
)
def test_normalized_origin(given, expected):
    assert normalized_origin(given) == expected


@pytest.fixture
def from_the_request(settings, registry):
    """URLs from the request's host: no BASE_URL, no Sites framework; cached."""
    settings.SITEMAPS_PLUS = {"CACHE": True}
    settings.INSTALLED_APPS = [a for a in settings.INSTALLED_APPS if a != "django.contrib.sites"]
    register(Article)
    articles(2)


@pytest.mark.parametrize("host", ["WWW.EXAMPLE.COM", "www.example.com:80", "Www.Example.Com"])
def test_urls_use_the_normalised_host(from_the_request, host):
    _, body = fetch("/sitemap-articles-1.xml", HTTP_HOST=host)
    assert locs(body)[0] == "http://www.example.com/articles/article-0/"


def test_spellings_of_one_host_share_one_render(from_the_request):
    fetch("/sitemap-articles-1.xml", HTTP_HOST="www.example.com")
    for host in ["WWW.EXAMPLE.COM", "www.example.com:80", "wWw.example.com"]:
        with CaptureQueriesContext(connection) as queries:
            response = Client().get("/sitemap-articles-1.xml", HTTP_HOST=host)
        assert response.status_code == 200
        assert len(queries) == 0, [q["sql"] for q in queries.captured_queries]


def test_another_port_is_another_site(from_the_request):
    _, body = fetch("/sitemap-articles-1.xml", HTTP_HOST="www.example.com:8080")
    assert locs(body)[0] == "http://www.example.com:8080/articles/article-0/"


class TestValidatingTheSiteIgnoresAllowedHosts:
    """``validate_sitemaps`` renders the site in-process on ``BASE_URL``'s host:
    a project whose ``ALLOWED_HOSTS`` lacks that host (a new one's) validates,
    while the served site still refuses the host."""

    @pytest.fixture
    def new_project(self, settings, registry):
        settings.ALLOWED_HOSTS = []
        settings.DEBUG = True  # a new project's: localhost and 127.0.0.1 only
        # As in a new project: CommonMiddleware reads the host of every request.
        settings.MIDDLEWARE = [*settings.MIDDLEWARE, "django.middleware.common.CommonMiddleware"]
        settings.SITEMAPS_PLUS = {"BASE_URL": "https://www.example.com"}
        register(Article)
        articles(2)

    def test_the_command_validates(self, new_project):
        from io import StringIO

        from django.core.management import call_command

        out = StringIO()
        call_command("validate_sitemaps", stdout=out)
        assert out.getvalue().strip().splitlines()[-1] == "0 errors, 0 warnings, 0 info"
        assert "https://www.example.com/sitemap-articles-1.xml" in out.getvalue()

    def test_the_served_site_still_checks_the_host(self, new_project):
        response = Client().get("/sitemap-articles-1.xml", HTTP_HOST="www.example.com")
        assert response.status_code == 400
        assert Client().get("/sitemap.xml", HTTP_HOST="localhost").status_code == 200
