"""What a crawler can send to the sitemap URLs: odd page numbers and section
names answer 404 (or the right redirect), never 500.

Django's test client raises a view's exception, so a 500 fails the test at the
request that caused it.
"""

from __future__ import annotations

import pytest
from django.test import Client

from django_sitemaps_plus import names, register
from tests.testapp.models import Article
from tests.utils import articles

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.fuzz_urls")]

#: Page numbers as a crawler may write them in a path or in ``?p=``.
ODD_PAGES = [
    "0",
    "00",
    "-1",
    "+1",
    "",
    "x",
    "1.5",
    "1e3",
    "%20",
    "%00",
    "%C2%B2",  # "²": a digit to str.isdigit, not to int()
    "%D9%A3",  # Arabic-Indic three: a digit to int()
    "%EF%BC%91",  # fullwidth one
    str(names.MAX_PAGE + 1),
    str(10**30),
    "9" * 5000,  # past int()'s default digit limit
]
#: Section names: unknown, not a slug, too long, encoded.
ODD_SECTIONS = ["unknown", "Articles", "art%C3%A9", "-articles", "articles-", "a" * 300, "%2e%2e"]


@pytest.fixture
def site(registry):
    register(Article, name="articles", limit=2)
    articles(3)


def get(url: str) -> int:
    return Client().get(url).status_code


@pytest.mark.parametrize("page", ODD_PAGES)
def test_the_contrib_url_with_an_odd_page_is_a_404(site, page):
    assert get(f"/sitemap-articles.xml?p={page}") == 404


@pytest.mark.parametrize(
    ("query", "target"),
    [("", "/sitemap-articles-1.xml"), ("?p=2", "/sitemap-articles-2.xml"),
     ("?p=02", "/sitemap-articles-2.xml"), ("?p=3", "/sitemap-articles-3.xml"),
     (f"?p={names.MAX_PAGE}", f"/sitemap-articles-{names.MAX_PAGE}.xml")],
)  # fmt: skip
def test_the_contrib_url_redirects_to_the_file_its_page_names(site, query, target):
    # Contrib read ``?p=02`` as page 2; a page past the last still redirects
    # (the file answers 404, as contrib's page did).
    response = Client().get(f"/sitemap-articles.xml{query}")
    assert response.status_code == 301
    assert response["Location"] == target


@pytest.mark.parametrize("page", ODD_PAGES)
@pytest.mark.parametrize("ext", ["xml", "txt"])
def test_a_file_url_with_an_odd_page_is_a_404(site, page, ext):
    assert get(f"/sitemap-articles-{page}.{ext}") == 404


@pytest.mark.parametrize("section", ODD_SECTIONS)
@pytest.mark.parametrize(
    "url",
    ["/sitemap-{}-1.xml", "/sitemap-{}-1.txt", "/sitemap-{}.xml", "/sitemap-{}.xml?p=1",
     "/sitemap/{}/", "/sitemap/{}/2/"],
)  # fmt: skip
def test_an_odd_section_name_is_a_404(site, section, url):
    assert get(url.format(section)) == 404


@pytest.mark.parametrize("page", ODD_PAGES)
def test_an_html_sitemap_page_with_an_odd_number_is_a_404(site, page):
    assert get(f"/sitemap/articles/{page}/") == 404


@pytest.mark.parametrize("settings_value", [{}, {"CACHE": True}])
def test_the_sites_urls_answer_with_the_cache_on_or_off(site, settings, settings_value):
    settings.SITEMAPS_PLUS = {**settings_value, "ROBOTS_TXT": True}
    for url in ["/sitemap.xml", "/sitemap.txt", "/sitemap-articles-1.xml",
                "/sitemap-articles-2.txt", "/sitemap/", "/sitemap/articles/", "/robots.txt",
                "/sitemap.xml?p=2", "/sitemap.txt?p=%C2%B2", "/sitemap.xsl",
                "/sitemap.xsl?p=0", "/sitemap/articles/2/"]:  # fmt: skip
        assert get(url) == 200, url
    assert get("/sitemap/articles/1/") == 301
    for url in ["/sitemap-articles-3.xml", "/sitemap-articles-3.txt", "/sitemap/articles/3/",
                f"/sitemap-articles-{names.MAX_PAGE}.xml"]:  # fmt: skip
        assert get(url) == 404, url
