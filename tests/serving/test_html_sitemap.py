"""The HTML sitemap for visitors (django_sitemaps_plus.html_urls): sections,
their URLs paginated, inside the project's base template."""

from __future__ import annotations

import re

import pytest
from django.core.checks import run_checks
from django.db import connection
from django.template.loader import render_to_string
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext

from django_sitemaps_plus import register
from django_sitemaps_plus.sections import Section
from tests.testapp.models import Article
from tests.utils import articles, at, fetch

pytestmark = pytest.mark.django_db


class StaticSection(Section):
    name = "static"

    def items(self):
        return ["/one/", "/two/"]


class QuotedSection(Section):
    """Characters HTML must escape, in a URL the sitemap lists as given."""

    name = "quoted"

    def items(self):
        return ["/q/?a=1&b='x'"]


@pytest.fixture
def html_site(settings, registry):
    settings.ROOT_URLCONF = "tests.html_sitemap_urls"
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": False}
    return registry


def page_size(settings, size: int) -> None:
    settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "HTML_SITEMAP_PAGE_SIZE": size}


def get(url: str) -> tuple[int, str]:
    response = Client().get(url)
    return response.status_code, response.content.decode()


def hrefs(html: str) -> list[str]:
    """The links of the page's list of URLs, in order."""
    listed = html.split('<ol class="sitemaps-plus-links"', 1)[1].split("</ol>", 1)[0]
    return re.findall(r'<a href="([^"]+)"', listed)


def test_an_empty_site_lists_no_section_in_the_base_template(html_site):
    response = Client().get("/sitemap/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "No pages are listed yet." in html
    # The project's base template, its block filled, with the request in context.
    assert "base.html" in [t.name for t in response.templates]
    assert html.startswith("<!doctype html>")
    assert '<header id="test-site-header">Test site (/sitemap/)</header>' in html
    assert re.search(r"<main>\s*<section class=\"sitemaps-plus\">", html)


def test_the_sections_with_their_url_counts_and_newest_lastmod(html_site):
    register(Article, lastmod_fields=["updated_at"], limit=3)
    html_site.add(StaticSection())
    for day, article in enumerate(articles(7), start=1):
        Article.objects.filter(pk=article.pk).update(updated_at=at(day))
    status, html = get("/sitemap/")
    assert status == 200
    articles_item = html.split('data-name="articles"', 1)[1].split("</li>", 1)[0]
    assert '<a href="/sitemap/articles/">articles</a>' in articles_item
    assert '<span class="sitemaps-plus-count">7</span> URLs' in articles_item
    assert '<time datetime="2024-01-07T12:00:00Z">2024-01-07</time>' in articles_item
    static_item = html.split('data-name="static"', 1)[1].split("</li>", 1)[0]
    assert '<span class="sitemaps-plus-count">2</span> URLs' in static_item
    assert "<time" not in static_item  # no lastmod known
    # Registration order, as in the XML index.
    assert html.index('data-name="articles"') < html.index('data-name="static"')


def test_a_section_page_lists_its_urls_with_lastmod(html_site):
    register(Article, lastmod_fields=["updated_at"])
    articles(2)
    Article.objects.filter(pk=1).update(updated_at=at(3))
    status, html = get("/sitemap/articles/")
    assert status == 200
    assert hrefs(html) == [
        "https://example.com/articles/article-0/",
        "https://example.com/articles/article-1/",
    ]
    assert (
        '<a href="https://example.com/articles/article-0/">https://example.com/articles/article-0/'
        '</a>\n      <time datetime="2024-01-03T12:00:00Z">2024-01-03</time>'
    ) in html
    assert "URLs 1 to 2 of 2" in html
    assert "sitemaps-plus-pagination" not in html  # one page: no page links
    assert '<a href="/sitemap/" rel="up">All sections</a>' in html


def test_exactly_one_page(html_site, settings):
    page_size(settings, 3)
    register(Article)
    articles(3)
    status, html = get("/sitemap/articles/")
    assert status == 200
    assert len(hrefs(html)) == 3
    assert "sitemaps-plus-pagination" not in html
    assert get("/sitemap/articles/2/")[0] == 404


def test_one_over_a_page(html_site, settings):
    page_size(settings, 3)
    register(Article)
    articles(4)
    html = get("/sitemap/articles/")[1]
    assert len(hrefs(html)) == 3
    assert '<a href="/sitemap/articles/2/" rel="next">Next</a>' in html
    assert '<a href="/sitemap/articles/2/" rel="last">Last</a>' in html
    assert "Page 1 of 2" in html
    assert 'rel="prev"' not in html
    status, html = get("/sitemap/articles/2/")
    assert status == 200
    assert hrefs(html) == ["https://example.com/articles/article-3/"]
    assert '<ol class="sitemaps-plus-links" start="4">' in html
    assert "URLs 4 to 4 of 4" in html
    assert '<a href="/sitemap/articles/" rel="prev">Previous</a>' in html
    assert '<a href="/sitemap/articles/" rel="first">First</a>' in html
    assert 'rel="next"' not in html
    assert get("/sitemap/articles/3/")[0] == 404


def test_past_the_end_and_unknown_sections_are_404(html_site):
    register(Article)
    articles(1)
    assert get("/sitemap/articles/2/")[0] == 404
    assert get("/sitemap/articles/999999999/")[0] == 404
    assert get("/sitemap/articles/0/")[0] == 404  # not a page number
    assert get("/sitemap/nope/")[0] == 404
    assert get("/sitemap/static/")[0] == 404


def test_an_empty_section_has_no_page(html_site):
    register(Article)
    html = get("/sitemap/")[1]
    assert '<span class="sitemaps-plus-count">0</span> URLs' in html
    assert 'href="/sitemap/articles/"' not in html  # nothing to link to
    assert get("/sitemap/articles/")[0] == 404


def test_page_one_has_one_address(html_site):
    register(Article)
    articles(1)
    response = Client().get("/sitemap/articles/1/")
    assert response.status_code == 301
    assert response["Location"] == "/sitemap/articles/"


def test_a_section_with_two_files_is_paginated_per_file(html_site, settings):
    # Two files (pk 1-3 and 4-5): pages of 2 cut each file, so the first
    # file's last page has one URL and the second file starts a page.
    page_size(settings, 2)
    register(Article, limit=3)
    articles(5)
    assert fetch("/sitemap.xml")[1].count(b"<sitemap>") == 2
    expected = {1: [0, 1], 2: [2], 3: [3, 4]}
    for number, slugs in expected.items():
        status, html = get("/sitemap/articles/" + (f"{number}/" if number > 1 else ""))
        assert status == 200, number
        assert hrefs(html) == [f"https://example.com/articles/article-{i}/" for i in slugs]
        assert f'start="{slugs[0] + 1}"' in html
        assert f"Page {number} of 3" in html
    assert get("/sitemap/articles/4/")[0] == 404


def test_the_query_count_does_not_grow_with_the_page(html_site, settings):
    page_size(settings, 2)
    register(Article, lastmod_fields=["updated_at"], limit=4)
    articles(12, updated_at=at(1))
    counts = []
    for number in (1, 2, 4, 6):
        url = "/sitemap/articles/" + (f"{number}/" if number > 1 else "")
        with CaptureQueriesContext(connection) as queries:
            assert Client().get(url).status_code == 200
        counts.append(len(queries))
    assert counts == [counts[0]] * 4
    assert counts[0] <= 4  # the index's aggregate and sample, and the file's rows


def test_a_plain_section_in_pages(html_site, settings):
    page_size(settings, 1)
    html_site.add(StaticSection())
    assert hrefs(get("/sitemap/static/")[1]) == ["https://example.com/one/"]
    assert hrefs(get("/sitemap/static/2/")[1]) == ["https://example.com/two/"]
    assert get("/sitemap/static/3/")[0] == 404


def test_non_ascii_urls_are_shown_decoded_and_linked_encoded(html_site):
    register(Article)
    Article.objects.create(pk=1, title="t", slug="café-über")
    html = get("/sitemap/articles/")[1]
    assert (
        '<a href="https://example.com/articles/caf%C3%A9-%C3%BCber/">'
        "https://example.com/articles/café-über/</a>"
    ) in html


def test_an_internationalised_host_is_shown_in_unicode(html_site, settings):
    settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "BASE_URL": "https://bücher.example"}
    register(Article)
    Article.objects.create(pk=1, title="t", slug="straße")
    html = get("/sitemap/articles/")[1]
    assert (
        '<a href="https://xn--bcher-kva.example/articles/stra%C3%9Fe/">'
        "https://bücher.example/articles/straße/</a>"
    ) in html


def test_display_url_keeps_what_is_not_a_character():
    from django_sitemaps_plus.html_sitemap import display_url

    # A reserved character stays escaped; an invalid punycode host stays as is.
    assert display_url("https://example.com/a%2Fb/%C3%A9") == "https://example.com/a%2Fb/é"
    assert display_url("https://xn--zz.example/") == "https://xn--zz.example/"
    assert display_url("https://XN--BCHER-KVA.example:8443/") == "https://bücher.example:8443/"


def test_urls_are_escaped(html_site):
    html_site.add(QuotedSection())
    html = get("/sitemap/quoted/")[1]
    assert (
        '<a href="https://example.com/q/?a=1&amp;b=&#x27;x&#x27;">'
        "https://example.com/q/?a=1&amp;b=&#x27;x&#x27;</a>"
    ) in html


def test_the_base_template_and_block_are_settings(html_site, settings):
    settings.SITEMAPS_PLUS = {
        **settings.SITEMAPS_PLUS,
        "HTML_SITEMAP_BASE_TEMPLATE": "testapp/other_base.html",
        "HTML_SITEMAP_BLOCK": "main",
    }
    response = Client().get("/sitemap/")
    html = response.content.decode()
    assert "testapp/other_base.html" in [t.name for t in response.templates]
    assert re.search(r'<div id="other-base">\s*<section class="sitemaps-plus">', html)
    assert "NOT THIS" in html  # the other block keeps the base's own content


def test_the_template_tag_embeds_the_sections(html_site):
    html_site.add(StaticSection())
    request = RequestFactory().get("/anywhere/")
    html = render_to_string("testapp/embeds_sections.html", request=request)
    assert html.startswith('<aside id="embedded">')
    assert '<a href="/sitemap/static/">static</a>' in html
    assert '<span class="sitemaps-plus-count">2</span> URLs' in html


def test_the_template_tag_without_the_html_urls_names_the_sections(registry):
    # tests.urls does not include html_urls: the names, unlinked.
    registry.add(StaticSection())
    html = render_to_string("testapp/embeds_sections.html", request=RequestFactory().get("/"))
    assert 'data-name="static">\n    static\n' in html
    assert "<a " not in html


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("HTML_SITEMAP_PAGE_SIZE", 0),
        ("HTML_SITEMAP_PAGE_SIZE", 50_001),
        ("HTML_SITEMAP_PAGE_SIZE", "500"),
        ("HTML_SITEMAP_PAGE_SIZE", True),
        ("HTML_SITEMAP_BASE_TEMPLATE", ""),
        ("HTML_SITEMAP_BASE_TEMPLATE", None),
        ("HTML_SITEMAP_BLOCK", "my block"),
        ("HTML_SITEMAP_BLOCK", "%}{% evil"),
        ("HTML_SITEMAP_BLOCK", 3),
    ],
)
def test_checks_refuse_bad_html_sitemap_settings(settings, key, value):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", key: value}
    found = [m for m in run_checks() if m.id == "sitemaps_plus.E023"]
    assert len(found) == 1
    assert key in found[0].msg


def test_checks_accept_the_defaults_and_good_values(settings):
    settings.SITEMAPS_PLUS = {
        "BASE_URL": "https://example.com",
        "HTML_SITEMAP_PAGE_SIZE": 50_000,
        "HTML_SITEMAP_BASE_TEMPLATE": "site/layout.html",
        "HTML_SITEMAP_BLOCK": "main_content",
    }
    assert not [m for m in run_checks() if m.id == "sitemaps_plus.E023"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_in_a_real_browser(html_site, live_server, settings, browser, tmp_path):
    import os
    from pathlib import Path

    from selenium.webdriver.common.by import By

    settings.SITEMAPS_PLUS = {
        "BASE_URL": live_server.url,
        "CACHE": False,
        "HTML_SITEMAP_PAGE_SIZE": 2,
    }
    register(Article, lastmod_fields=["updated_at"], limit=3)
    html_site.add(StaticSection())
    articles(5, updated_at=at(2))
    browser.get(f"{live_server.url}/sitemap/")
    assert browser.find_element(By.ID, "test-site-header").text.startswith("Test site")
    row = browser.find_element(By.CSS_SELECTOR, "li.sitemaps-plus-section[data-name=articles]")
    assert row.find_element(By.CLASS_NAME, "sitemaps-plus-count").text == "5"
    row.find_element(By.LINK_TEXT, "articles").click()
    seen = []
    while True:
        links = browser.find_elements(By.CSS_SELECTOR, "ol.sitemaps-plus-links a")
        seen.extend(link.text for link in links)
        following = browser.find_elements(By.CSS_SELECTOR, "a[rel=next]")
        if not following:
            break
        following[0].click()
    assert seen == [f"{live_server.url}/articles/article-{i}/" for i in range(5)]
    assert "Page 3 of 3" in browser.find_element(By.CLASS_NAME, "sitemaps-plus-current").text
    screenshots = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    browser.save_screenshot(str(screenshots / "html-sitemap.png"))
