"""With the database down, warm files are served from the cache whatever gives the host."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.contrib.sites.models import Site
from django.db import OperationalError, connection
from django.test import Client

from django_sitemaps_plus import register
from django_sitemaps_plus.sites import _remembered_sites
from tests.testapp.models import Article
from tests.utils import articles, fetch, locs

pytestmark = [pytest.mark.cache, pytest.mark.django_db]


@contextmanager
def database_down() -> Iterator[None]:
    """Every query fails, as when the database server is unreachable."""

    def refuse(execute, sql, params, many, context):
        raise OperationalError("could not connect to server: Connection refused")

    with connection.execute_wrapper(refuse):
        yield


@pytest.fixture
def sites_framework(settings, registry) -> Iterator[Site]:
    """URLs from the Sites framework (no BASE_URL), served from the cache."""
    settings.SITEMAPS_PLUS = {"CACHE": True}
    Site.objects.clear_cache()
    _remembered_sites.clear()
    site, _ = Site.objects.update_or_create(pk=1, defaults={"domain": "example.com"})
    register(Article)
    articles(2)
    yield site
    Site.objects.clear_cache()


@pytest.mark.parametrize("site_id", [1, None])
def test_warm_file_is_served_with_the_database_down(settings, sites_framework, site_id):
    settings.SITE_ID = site_id
    warm = locs(fetch("/sitemap-articles-1.xml", HTTP_HOST="example.com")[1])
    assert warm[0] == "https://example.com/articles/article-0/"
    fetch("/sitemap.xml", HTTP_HOST="example.com")
    # A new process (or a cleared Site cache) must look the site up again.
    Site.objects.clear_cache()
    _remembered_sites.clear()
    with database_down():
        response, body = fetch("/sitemap-articles-1.xml", HTTP_HOST="example.com")
        index = Client().get("/sitemap.xml", HTTP_HOST="example.com")
    assert response.status_code == 200
    assert locs(body) == warm
    assert index.status_code == 200


def test_cold_file_with_the_database_down_is_a_503(settings, sites_framework):
    settings.SITE_ID = 1
    fetch("/sitemap.xml")  # the site is remembered; the file is not rendered
    Site.objects.clear_cache()
    with database_down():
        response = Client().get("/sitemap-articles-1.xml")
    assert response.status_code == 503
    assert response["Retry-After"]


def test_a_changed_domain_is_remembered_again(settings, sites_framework):
    settings.SITE_ID = 1
    fetch("/sitemap-articles-1.xml")
    sites_framework.domain = "www.example.org"
    sites_framework.save()
    Site.objects.clear_cache()
    fresh = locs(fetch("/sitemap-articles-1.xml")[1])
    assert fresh[0].startswith("https://www.example.org/")
    Site.objects.clear_cache()
    _remembered_sites.clear()
    with database_down():
        response, body = fetch("/sitemap-articles-1.xml")
    assert response.status_code == 200
    assert locs(body) == fresh
