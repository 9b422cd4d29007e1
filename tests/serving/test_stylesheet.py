"""Styled sitemaps, opt-in: with ``STYLESHEET`` on, every XML file names the XSL
stylesheet the app serves and a browser (a real headless Chromium) shows the
index and a file as tables; by default no file names it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.core.files.storage import FileSystemStorage
from django.test import Client
from lxml import etree

from django_sitemaps_plus import register
from django_sitemaps_plus.build import build
from django_sitemaps_plus.extensions import Images
from django_sitemaps_plus.stylesheet import XSL
from django_sitemaps_plus.validation import validate
from tests.testapp.models import Article
from tests.utils import articles, assert_schema_valid, at, fetch

pytestmark = pytest.mark.django_db

INSTRUCTION = b'<?xml-stylesheet type="text/xsl" href="/sitemap.xsl"?>\n'


#: The settings of the suite with the stylesheet turned on.
STYLED = {"BASE_URL": "https://example.com", "CACHE": False, "STYLESHEET": True}


@pytest.fixture
def styled(settings):
    settings.SITEMAPS_PLUS = STYLED


@pytest.fixture
def site_with_files(registry, styled):
    register(Article, lastmod_fields=["updated_at"], limit=3)
    for day, article in enumerate(articles(7), start=1):
        Article.objects.filter(pk=article.pk).update(updated_at=at(day))


class TestInstruction:
    @pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-articles-1.xml"])
    def test_off_by_default(self, registry, settings, path):
        """Browsers are removing XSLT: no file names the stylesheet, and the
        index carries no counts for it, unless the setting turns it on."""
        settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com"}
        register(Article, lastmod_fields=["updated_at"], limit=3)
        articles(4, updated_at=at(1))
        body = fetch(path)[1]
        assert body.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<')
        assert b"xml-stylesheet" not in body and b"<!--" not in body
        assert_schema_valid(body)

    def test_off_by_default_in_built_files(self, registry, settings, tmp_path):
        settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com"}
        register(Article, lastmod_fields=["updated_at"])
        articles(2, updated_at=at(1))
        build(FileSystemStorage(location=str(tmp_path)))
        assert b"xml-stylesheet" not in (tmp_path / "sitemap.xml").read_bytes()
        assert b"xml-stylesheet" not in (tmp_path / "sitemap-articles-1.xml").read_bytes()
        assert not (tmp_path / "sitemap.xsl").exists()

    @pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-articles-1.xml"])
    def test_every_xml_file_names_the_stylesheet(self, site_with_files, path):
        _, body = fetch(path)
        assert body.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n' + INSTRUCTION)
        assert_schema_valid(body)
        assert validate(body, base_url=f"https://example.com{path}").findings == []

    @pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-articles-1.xml"])
    def test_the_setting_removes_it(self, site_with_files, settings, path):
        settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "STYLESHEET": False}
        assert b"xml-stylesheet" not in fetch(path)[1]

    def test_text_files_never_carry_it(self, site_with_files):
        assert b"xml-stylesheet" not in fetch("/sitemap-articles-1.txt")[1]
        assert fetch("/sitemap-articles-1.txt")[1].startswith(b"https://")

    def test_built_files_name_it_too(self, site_with_files, tmp_path):
        build(FileSystemStorage(location=str(tmp_path)))
        for name in ("sitemap.xml", "sitemap-articles-1.xml"):
            assert INSTRUCTION in (tmp_path / name).read_bytes()

    @pytest.mark.urls("tests.no_app_urls")
    def test_without_the_apps_urls_a_build_writes_its_own_copy(self, site_with_files, tmp_path):
        build(FileSystemStorage(location=str(tmp_path)))
        assert b'href="/sitemap.xsl"' in (tmp_path / "sitemap.xml").read_bytes()
        assert (tmp_path / "sitemap.xsl").read_text() == XSL


class TestStylesheet:
    def test_served_as_xsl(self):
        response = Client().get("/sitemap.xsl")
        assert response.status_code == 200
        assert response["Content-Type"] == "text/xsl; charset=utf-8"
        assert response.content.decode() == XSL

    def test_tables_from_a_real_xslt_processor(self, registry, styled):
        # lxml's libxslt is an XSLT 1.0 processor, as browsers have.
        transform = etree.XSLT(etree.fromstring(XSL.encode()))
        register(Article, lastmod_fields=["updated_at"], extensions=[Images(method="pics")])
        urlset = (
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
            'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
            'xmlns:xhtml="http://www.w3.org/1999/xhtml">'
            "<url><loc>https://example.com/a</loc><lastmod>2024-01-03T12:00:00Z</lastmod>"
            "<image:image><image:loc>https://example.com/1.jpg</image:loc></image:image>"
            "<image:image><image:loc>https://example.com/2.jpg</image:loc></image:image>"
            '<xhtml:link rel="alternate" hreflang="en" href="https://example.com/a"/>'
            "</url><url><loc>https://example.com/b</loc></url></urlset>"
        )
        html = transform(etree.fromstring(urlset.encode()))
        rows = html.xpath("//table[@id='urls']/tbody/tr")
        assert len(rows) == 2
        first = [cell.xpath("string()") for cell in rows[0].xpath("td")]
        # Images and alternates are present, news and videos not: no column for them.
        assert [th.text for th in html.xpath("//table[@id='urls']/thead/tr/th")] == [
            "#", "URL", "Last modified", "Images", "Alternates"
        ]  # fmt: skip
        assert first == ["1", "https://example.com/a", "2024-01-03", "2", "1"]
        assert rows[0].xpath("td/a/@href") == ["https://example.com/a"]
        # The date as an ISO date; the whole value on hover.
        assert rows[0].xpath("td[@class='date']/@title") == ["2024-01-03T12:00:00Z"]
        # A plain file: three columns, the cells a browser lays out per row.
        plain = transform(
            etree.fromstring(
                b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                b"<url><loc>https://example.com/a</loc></url></urlset>"
            )
        )
        assert len(plain.xpath("//table[@id='urls']/tbody/tr/td")) == 3

    def test_the_index_table_shows_each_files_url_count(self, site_with_files):
        transform = etree.XSLT(etree.fromstring(XSL.encode()))
        body = fetch("/sitemap.xml")[1]
        assert body.count(b"<!-- urls: ") == 3
        assert_schema_valid(body)  # the counts are comments: still sitemap.xsd-valid
        rows = etree.fromstring(body).getroottree()
        html = transform(rows)
        cells = [
            [cell.xpath("string()").strip() for cell in row.xpath("td")]
            for row in html.xpath("//table[@id='sitemaps']/tbody/tr")
        ]
        assert [row[3] for row in cells] == ["3", "3", "1"]
        assert [row[2] for row in cells] == ["2024-01-03", "2024-01-06", "2024-01-07"]

    def test_no_counts_without_the_stylesheet(self, site_with_files, settings):
        settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "STYLESHEET": False}
        assert b"<!--" not in fetch("/sitemap.xml")[1]

    def test_built_indexes_carry_the_counts(self, site_with_files, tmp_path):
        build(FileSystemStorage(location=str(tmp_path)))
        assert (tmp_path / "sitemap.xml").read_bytes().count(b"<!-- urls: ") == 3


# A real browser ------------------------------------------------------------------


#: Locations and how people read them: the stylesheet's script gives what
#: ``html_sitemap.display_url`` gives (the admin, the HTML sitemap).
IRI_CASES = [
    "https://example.com/plain/",
    "https://example.com/gr%C3%BC%C3%9Fe/%E2%82%AC?q=%C3%A4#%C3%B6",
    "https://example.com/a%20b/%2F/%3F/%25/%7E/%41",  # reserved stay escaped, unreserved not
    "https://example.com/broken/%C3/%FF/%E2%82/%80",  # not UTF-8: stays escaped
    "https://example.com/emoji/%F0%9F%98%80/",
    "https://xn--bcher-kva.example/b%C3%BCcher/",
    "https://user@xn--bcher-kva.example:8443/",
    "https://www.xn--mnchen-3ya.xn--tst-qla.example/",
    "https://xn--fsqu00a.xn--3lr804guic/",  # CJK labels
    "https://xn--invalid-.example/",  # no Punycode: stays
    "http://localhost:8000/%D0%BF%D1%80%D0%B8%D0%B2%D0%B5%D1%82",
]


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_a_browser_shows_the_index_and_a_file_as_tables(
    live_server, settings, registry, browser, tmp_path
):
    from selenium.webdriver.common.by import By

    from django_sitemaps_plus.html_sitemap import display_url

    # An internationalised host (Chromium resolves *.localhost to this
    # machine) and a non-ASCII path: shown decoded, linked as URIs.
    port = live_server.url.rsplit(":", 1)[1]
    base = f"http://xn--bcher-kva.localhost:{port}"
    settings.SITEMAPS_PLUS = {**STYLED, "BASE_URL": base}
    register(Article, lastmod_fields=["updated_at"], limit=3)
    articles(7, updated_at=at(3))
    Article.objects.filter(pk=1).update(slug="grüße-ü")
    browser.get(f"{live_server.url}/sitemap.xml")
    rows = browser.find_elements(By.CSS_SELECTOR, "table#sitemaps tbody tr")
    assert len(rows) == 3
    assert browser.find_element(By.ID, "count").text == "3"
    first_link = rows[0].find_element(By.TAG_NAME, "a")
    assert first_link.get_attribute("href") == f"{base}/sitemap-articles-1.xml"
    assert first_link.text == f"http://bücher.localhost:{port}/sitemap-articles-1.xml"
    assert [row.find_element(By.CLASS_NAME, "urls").text for row in rows] == ["3", "3", "1"]
    # Screenshots for the docs: SCREENSHOT_DIR=docs/images when regenerating them.
    screenshots = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    browser.save_screenshot(str(screenshots / "styled-sitemap-index.png"))
    first_link.click()
    rows = browser.find_elements(By.CSS_SELECTOR, "table#urls tbody tr")
    assert len(rows) == 3
    cells = [cell.text for cell in rows[0].find_elements(By.TAG_NAME, "td")]
    assert cells[1] == f"http://bücher.localhost:{port}/articles/grüße-ü/"
    assert cells[2] == "2024-01-03"
    link = rows[0].find_element(By.TAG_NAME, "a").get_attribute("href")
    assert link == f"{base}/articles/gr%C3%BC%C3%9Fe-%C3%BC/"
    second = rows[1].find_elements(By.TAG_NAME, "td")[1].text
    assert second == f"http://bücher.localhost:{port}/articles/article-1/"
    browser.save_screenshot(str(screenshots / "styled-sitemap-file.png"))
    # The script's decoding is the admin's, case by case.
    shown = browser.execute_script("return arguments[0].map(sitemapIri);", IRI_CASES)
    assert shown == [display_url(uri) for uri in IRI_CASES]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_full_file_of_50000_urls_is_readable_in_a_browser(
    live_server, settings, registry, browser, capsys
):
    """The largest file the protocol allows renders whole (every row) in Chromium.

    Not a timed assertion: the time is printed (``-s``) for docs/styled.md.
    """
    import time

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    settings.SITEMAPS_PLUS = {**STYLED, "BASE_URL": live_server.url}
    # Short locations spliced from the slug: their bound admits the
    # protocol's 50,000 per file, with nothing measured.
    register(
        Article,
        lastmod_fields=["updated_at"],
        url_name="article",
        url_kwargs={"slug": "slug"},
    )
    articles(50_000, updated_at=at(3))
    browser.set_page_load_timeout(300)
    started = time.perf_counter()
    browser.get(f"{live_server.url}/sitemap-articles-1.xml")
    WebDriverWait(browser, 300).until(lambda b: b.find_elements(By.ID, "count"))
    assert browser.find_element(By.ID, "count").text == "50000"
    rendered = browser.execute_script("return document.querySelectorAll('#urls tbody tr').length")
    elapsed = time.perf_counter() - started
    assert rendered == 50_000
    last = browser.execute_script(
        "var rows = document.querySelectorAll('#urls tbody tr');"
        "return rows[rows.length - 1].cells[1].textContent;"
    )
    assert last == f"{live_server.url}/articles/article-49999/"
    with capsys.disabled():
        print(f"\n50,000-URL file styled in Chromium in {elapsed:.1f} s")
