"""The sitemap overview in the Django admin: figures from the index's own
queries, staff with the permission only."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from lxml import etree

from django_sitemaps_plus import register
from django_sitemaps_plus.overview import NO_TIME
from tests.testapp.models import Article
from tests.utils import NS, articles, at, fetch

OVERVIEW = "/admin/django_sitemaps_plus/sitemapoverview/"

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_site(settings, registry):
    settings.ROOT_URLCONF = "tests.admin_urls"
    register(Article, lastmod_fields=["updated_at"], limit=3)
    for day, article in enumerate(articles(7), start=1):
        if day != 7:  # the last file's only URL has no lastmod
            Article.objects.filter(pk=article.pk).update(updated_at=at(day))


@pytest.fixture(autouse=True)
def no_last_validation():
    """Each test starts with no validation run recorded (the cache outlives tests)."""
    from django_sitemaps_plus import site_validation

    key = f"{site_validation.KEY_PREFIX}:latest"
    site_validation._cache().delete(key)
    yield
    site_validation._cache().delete(key)


def _staff(permitted: bool) -> User:
    user = User.objects.create_user("owner", password="pw", is_staff=True)
    if permitted:
        user.user_permissions.add(Permission.objects.get(codename="view_sitemap_overview"))
    return user


def test_the_overview_shows_the_index_figures(admin_site):
    client = Client()
    client.force_login(_staff(permitted=True))
    response = client.get(OVERVIEW)
    assert response.status_code == 200
    html = response.content.decode()
    index = etree.fromstring(fetch("/sitemap.xml")[1])
    files = [loc.text for loc in index.iterfind("sm:sitemap/sm:loc", NS)]
    assert len(files) == 3
    assert '<strong id="total-urls">7</strong>' in html
    assert '<strong id="total-files">3</strong>' in html
    for number in (1, 2, 3):
        assert f'href="/sitemap-articles-{number}.xml"' in html
    row = html[html.index('data-name="articles"') :]
    # The newest lastmod: the ISO value for machines and on hover, and for
    # people DATETIME_FORMAT in the site's time zone (TIME_ZONE, Berlin), named.
    assert (
        '<td class="newest"><time datetime="2024-01-06T12:00:00+00:00" '
        'title="2024-01-06T12:00:00+00:00">Jan. 6, 2024, 1 p.m. CET</time></td>'
    ) in row
    # The day the least recently changed URL last changed (the counts' first day).
    assert '<td class="oldest"><time datetime="2024-01-01">Jan. 1, 2024</time></td>' in row
    assert '<td class="undated n">14%</td>' in row  # 1 of 7 URLs has no lastmod


def test_each_sections_files_are_linked_as_tables_on_a_row_of_their_own(admin_site, registry):
    from tests.testapp.models import Tag

    register(Tag, lastmod_fields=["updated_at"])  # no rows: no files
    client = Client()
    client.force_login(_staff(permitted=True))
    html = client.get(OVERVIEW).content.decode()
    files = html[html.index('<tr class="section-files" data-name="articles">') :]
    files = files[: files.index("</tr>")]
    for number in (1, 2, 3):
        assert (
            f'<a class="html-view" href="{OVERVIEW}file/articles/{number}/">'
            f"sitemap-articles-{number}.xml</a>"
        ) in files
        assert f'<a class="xml" href="/sitemap-articles-{number}.xml"' in files
    empty = html[html.index('<tr class="section-files" data-name="tags">') :]
    assert "No files: the section lists no URL." in empty[: empty.index("</tr>")]


def test_the_admin_index_links_to_it(admin_site):
    client = Client()
    client.force_login(_staff(permitted=True))
    assert OVERVIEW in client.get("/admin/").content.decode()


def test_staff_without_the_permission_are_refused(admin_site):
    client = Client()
    client.force_login(_staff(permitted=False))
    assert client.get(OVERVIEW).status_code == 403
    assert OVERVIEW not in client.get("/admin/").content.decode()


def test_anonymous_users_get_the_admin_login(admin_site):
    response = Client().get(OVERVIEW)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_in_a_real_browser(admin_site, live_server, settings, browser, tmp_path):
    import os
    from pathlib import Path

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from django_sitemaps_plus.html_sitemap import display_url

    # An internationalised host (Chromium resolves *.localhost to this machine)
    # and a path with non-ASCII characters: the tables show them decoded.
    port = live_server.url.rsplit(":", 1)[1]
    settings.SITEMAPS_PLUS = {"BASE_URL": f"http://xn--bcher-kva.localhost:{port}", "CACHE": False}
    Article.objects.filter(pk=1).update(slug="grüße-ü")
    User.objects.create_superuser("root", "root@example.com", "pw")
    browser.get(f"{live_server.url}{OVERVIEW}")
    browser.find_element(By.NAME, "username").send_keys("root")
    browser.find_element(By.NAME, "password").send_keys("pw")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # click() returns before the next page has loaded: wait for the overview.
    WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.ID, "total-files"))
    # The figures against the XML index the same server serves.
    index = etree.fromstring(fetch("/sitemap.xml")[1])
    files = len(index.findall("sm:sitemap", NS))
    assert browser.find_element(By.ID, "total-files").text == str(files) == "3"
    row = browser.find_element(By.CSS_SELECTOR, "tr.section[data-name=articles]")
    assert row.find_element(By.CLASS_NAME, "urls").text == "7"
    newest = row.find_element(By.CSS_SELECTOR, ".newest time")
    assert newest.get_attribute("datetime") == "2024-01-06T12:00:00+00:00"
    assert newest.text == "Jan. 6, 2024, 1 p.m. CET"
    # The plot: one bar a day from the first lastmod to the last, 6 dated URLs.
    bars = row.find_elements(By.CSS_SELECTOR, "svg.lastmod-plot rect")
    assert len(bars) == 6
    assert sum(int(bar.get_attribute("data-urls")) for bar in bars) == 6
    screenshots = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    browser.save_screenshot(str(screenshots / "admin-overview.png"))
    # A file as a table, reached from the overview's row, no XSLT involved:
    # its rows against the XML, the locations decoded (IRIs), the links the URIs.
    files = browser.find_element(By.CSS_SELECTOR, "tr.section-files[data-name=articles]")
    assert [link.text for link in files.find_elements(By.CSS_SELECTOR, "a.html-view")] == [
        f"sitemap-articles-{number}.xml" for number in (1, 2, 3)
    ]
    files.find_element(By.CSS_SELECTOR, "a.html-view").click()
    WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.CSS_SELECTOR, "table#urls"))
    xml = etree.fromstring(fetch("/sitemap-articles-1.xml")[1])
    locs = [loc.text for loc in xml.iterfind("sm:url/sm:loc", NS)]
    assert locs[0] == f"http://xn--bcher-kva.localhost:{port}/articles/gr%C3%BC%C3%9Fe-%C3%BC/"
    cells = browser.find_elements(By.CSS_SELECTOR, "table#urls tbody tr td:nth-child(2)")
    assert [cell.text for cell in cells] == [display_url(loc) for loc in locs]
    assert cells[0].text == f"http://bücher.localhost:{port}/articles/grüße-ü/"
    links = [cell.find_element(By.TAG_NAME, "a").get_attribute("href") for cell in cells]
    assert links == locs
    dates = browser.find_elements(By.CSS_SELECTOR, "table#urls tbody tr td.date time")
    assert dates[0].text == "Jan. 1, 2024, 1 p.m. CET"
    browser.save_screenshot(str(screenshots / "admin-file-table.png"))
    # The validator, run from the overview in the background; the page
    # reloads itself until the run ends.
    browser.back()
    WebDriverWait(browser, 60).until(lambda b: b.find_elements(By.ID, "validate"))
    browser.find_element(By.ID, "validate").click()

    WebDriverWait(browser, 60).until(
        lambda b: b.find_element(By.ID, "state").get_attribute("data-state") == "done"
    )
    assert browser.find_element(By.ID, "summary").text.startswith("0 errors")
    browser.save_screenshot(str(screenshots / "admin-validation.png"))


# Lastmod counts and the plot ------------------------------------------------------


def test_the_undated_share_counts_urls_not_files(settings, registry):
    """One file of 3 URLs with one undated URL: the share is a third, though
    the file itself has no lastmod (not every URL has one)."""
    settings.ROOT_URLCONF = "tests.admin_urls"
    register(Article, lastmod_fields=["updated_at"])
    articles(3, updated_at=at(1))
    Article.objects.filter(pk=2).update(updated_at=None)
    client = Client()
    client.force_login(_staff(permitted=True))
    html = client.get(OVERVIEW).content.decode()
    assert '<td class="undated n">33%</td>' in html


@pytest.mark.parametrize("kind", ["own", "related", "hreflang", "none"])
def test_model_section_counts_in_sql_equal_what_the_files_hold(registry, kind, settings):
    """The one grouped query agrees with reading every file (the generic way)."""
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import site_context
    from tests.testapp.models import Comment

    options: dict = {"lastmod_fields": ["updated_at"], "limit": 4}
    if kind == "related":
        options["lastmod_fields"] = ["updated_at", "comments__created_at"]
    elif kind == "none":
        options["lastmod_fields"] = []
    elif kind == "hreflang":
        from django_sitemaps_plus.extensions import Hreflang

        settings.LANGUAGES = [("en", "English"), ("de", "German")]
        options["extensions"] = [Hreflang(languages=["en", "de"])]
    from django_sitemaps_plus.registry import site as sections

    register(Article, **options)
    section = sections.get("articles")
    created = articles(10)
    for number, article in enumerate(created):
        if number % 3:
            Article.objects.filter(pk=article.pk).update(updated_at=at(1 + number % 4))
        if number % 4 == 0:
            Comment.objects.create(article=article, created_at=at(20))
    site = site_context()
    in_sql = section.lastmod_counts(site)
    from_files = Section.lastmod_counts(section, site)
    assert in_sql == from_files
    assert in_sql.total == sum(page.url_count for page in section.index_pages(site))


def test_a_section_writing_its_own_entries_is_counted_from_its_files(registry):
    # Its files are not its rows (here: every other row left out), so the
    # counts are read from the files, not grouped from the rows in SQL.
    from django_sitemaps_plus import ModelSection
    from django_sitemaps_plus.sites import site_context

    class EveryOther(ModelSection):
        writes_own_entries = True
        model = Article
        lastmod_fields = ["updated_at"]

        def page_entries(self, number, site, info=None):  # type: ignore[no-untyped-def]
            return list(super().page_entries(number, site, info))[::2]

    register(EveryOther)
    for number, article in enumerate(articles(6)):
        Article.objects.filter(pk=article.pk).update(updated_at=at(1 + number))
    counts = EveryOther().lastmod_counts(site_context())
    assert counts.by_day == {at(1).date(): 1, at(3).date(): 1, at(5).date(): 1}


def test_the_plot_groups_by_month_past_three_months():
    import datetime as dt

    from django_sitemaps_plus.overview import lastmod_plot
    from django_sitemaps_plus.sections import LastmodCounts

    days = {dt.date(2023, 1, 5): 2, dt.date(2023, 1, 20): 1, dt.date(2024, 1, 1): 4}
    counts = LastmodCounts(days)
    svg = str(lastmod_plot(counts))
    # January 2023 to January 2024: 13 bars, empty months included.
    assert svg.count("<rect") == 13
    assert 'data-date="2023-01" data-urls="3"' in svg
    assert 'data-date="2024-01" data-urls="4"' in svg
    # For people: the locale's month format, as the overview's other dates.
    assert "<title>January 2023: 3 URLs</title>" in svg
    assert ">January 2023</text>" in svg and ">January 2024</text></svg>" in svg
    assert lastmod_plot(LastmodCounts(undated=5)) == ""


# One file as an HTML table ----------------------------------------------------------


def test_a_file_as_an_html_table(admin_site, monkeypatch):
    from django_sitemaps_plus import admin as sitemap_admin

    monkeypatch.setattr(sitemap_admin, "FILE_PAGE_ROWS", 2)
    client = Client()
    client.force_login(_staff(permitted=True))
    url = "/admin/django_sitemaps_plus/sitemapoverview/file/articles/1/"
    assert url in client.get(OVERVIEW).content.decode()
    first = client.get(url)
    assert first.status_code == 200
    xml = etree.fromstring(fetch("/sitemap-articles-1.xml")[1])
    locs = [loc.text for loc in xml.iterfind("sm:url/sm:loc", NS)]
    html = first.content.decode()
    assert '<strong id="count">3</strong>' in html
    assert all(f'href="{loc}"' in html for loc in locs[:2])
    assert locs[2] not in html
    assert 'href="?p=2"' in html
    second = client.get(url + "?p=2").content.decode()
    assert f'href="{locs[2]}"' in second
    assert client.get(f"{OVERVIEW}file/articles/9/").status_code == 404
    assert client.get(f"{OVERVIEW}file/nope/1/").status_code == 404


# Odd arguments: never a 500 --------------------------------------------------------

#: The overview's model has no table: its object views redirect to the overview.
OBJECT_URLS = ["add/", "1/", "1/change/", "1/delete/", "1/history/", "x/change/", "0/", "a/b/c/"]
#: A file view whose section is not a slug or whose page is not 1 to 999,999,999
#: (the converters of the files' own URLs refuse them), or a malformed run id.
ODD_ARGUMENTS = [
    "file/articles/0/",
    "file/articles/-1/",
    "file/articles/01/",
    "file/articles/1000000000/",
    "file/articles/99999999999999999999/",
    "file/Articles/1/",
    "file/not%20a%20slug/1/",
    "file/a.b/1/",
    "file/%C3%A4/1/",
    "file/articles/x/",
    # A validation run's id is letters, digits, "-" and "_" (safe in a cache key).
    "validate/%00/",
    "validate/a%20b/",
    f"validate/{'a' * 65}/",
]


@pytest.mark.parametrize("method", ["get", "post"])
@pytest.mark.parametrize("url", OBJECT_URLS + ODD_ARGUMENTS)
@pytest.mark.parametrize("superuser", [True, False])
def test_odd_urls_redirect_to_the_overview(admin_site, url, method, superuser):
    client = Client(raise_request_exception=False)
    if superuser:
        client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    else:
        client.force_login(_staff(permitted=True))
    response = getattr(client, method)(OVERVIEW + url)
    assert response.status_code == 302, response.content[:500]
    assert response["Location"] == OVERVIEW
    assert client.get(response["Location"]).status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "file/articles/999999999/",  # a page number the URL allows, no such file
        "file/articles/4/",  # one past the last file
        "file/nope/1/",  # a slug, no such section
        "validate/unknown/",
    ],
)
def test_files_and_runs_that_do_not_exist_are_404(admin_site, url):
    client = Client(raise_request_exception=False)
    client.force_login(_staff(permitted=True))
    assert client.get(OVERVIEW + url).status_code == 404


@pytest.mark.parametrize("page", ["0", "-1", "x", "99999999999999999999", "%00", ""])
def test_odd_table_pages_show_a_page(admin_site, page):
    client = Client(raise_request_exception=False)
    client.force_login(_staff(permitted=True))
    response = client.get(f"{OVERVIEW}file/articles/1/?p={page}")
    assert response.status_code == 200
    assert '<strong id="count">3</strong>' in response.content.decode()


def test_odd_urls_need_the_login_and_the_permission(admin_site):
    assert Client().get(OVERVIEW + "1/change/")["Location"].startswith("/admin/login/")
    client = Client(raise_request_exception=False)
    client.force_login(_staff(permitted=False))
    # Redirected to the overview, which refuses them.
    response = client.get(OVERVIEW + "1/delete/", follow=True)
    assert response.status_code == 403
    assert client.get(OVERVIEW + "file/articles/1/").status_code == 403


def test_the_file_table_shows_iris_and_readable_times(registry, settings):
    """Locations for people: percent-encoded UTF-8 decoded and a punycode host
    in Unicode, as the HTML sitemap shows them; the links stay the file's URIs."""
    settings.ROOT_URLCONF = "tests.admin_urls"
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://xn--bcher-kva.example", "CACHE": False}
    register(Article, lastmod_fields=["updated_at"])
    Article.objects.bulk_create(
        [
            Article(pk=1, title="a", slug="grüße-ü", updated_at=at(3, 23)),
            Article(pk=2, title="b", slug="plain"),
        ]
    )
    xml = fetch("/sitemap-articles-1.xml")[1].decode()
    uri = "https://xn--bcher-kva.example/articles/gr%C3%BC%C3%9Fe-%C3%BC/"
    assert f"<loc>{uri}</loc>" in xml  # the XML keeps the URI
    client = Client()
    client.force_login(_staff(permitted=True))
    html = client.get(f"{OVERVIEW}file/articles/1/").content.decode()
    assert f'<a href="{uri}">https://bücher.example/articles/grüße-ü/</a>' in html
    assert ">https://bücher.example/articles/plain/</a>" in html
    # 23:00 UTC is the next day in Berlin.
    assert (
        '<td class="date"><time datetime="2024-01-03T23:00:00+00:00" '
        'title="2024-01-03T23:00:00+00:00">Jan. 4, 2024, midnight CET</time></td>'
    ) in html
    assert f'<td class="date">{NO_TIME}</td>' in html  # no lastmod


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, NO_TIME),
        ("", NO_TIME),
        (
            dt.datetime(2024, 7, 1, 6, 30, tzinfo=dt.timezone.utc),
            '<time datetime="2024-07-01T06:30:00+00:00" title="2024-07-01T06:30:00+00:00">'
            "July 1, 2024, 8:30 a.m. CEST</time>",
        ),
        # Naive: UTC (the app's lastmods are normalised to it).
        (
            dt.datetime(2024, 7, 1, 6, 30),
            '<time datetime="2024-07-01T06:30:00+00:00" title="2024-07-01T06:30:00+00:00">'
            "July 1, 2024, 8:30 a.m. CEST</time>",
        ),
        (dt.date(2024, 7, 1), '<time datetime="2024-07-01">July 1, 2024</time>'),
        # W3C Datetime text, as a file holds it.
        ("2024-07-01", '<time datetime="2024-07-01">July 1, 2024</time>'),
        (
            "2024-07-01T06:30:00+02:00",
            '<time datetime="2024-07-01T06:30:00+02:00" title="2024-07-01T06:30:00+02:00">'
            "July 1, 2024, 6:30 a.m. CEST</time>",
        ),
        # Epoch seconds (IndexNow's backoff, a validation run's start).
        (
            1719815400.0,
            '<time datetime="2024-07-01T06:30:00+00:00" title="2024-07-01T06:30:00+00:00">'
            "July 1, 2024, 8:30 a.m. CEST</time>",
        ),
        # Text that is no time: shown as it is, escaped.
        ("2024-02-30", "2024-02-30"),
        ("<b>soon</b>", "&lt;b&gt;soon&lt;/b&gt;"),
    ],
)
def test_one_time_format_in_the_site_time_zone(value, shown):
    from django_sitemaps_plus.overview import time_element

    assert time_element(value) == shown


def test_times_follow_the_activated_time_zone():
    from django.utils import timezone

    from django_sitemaps_plus.overview import time_element

    with timezone.override("America/New_York"):
        shown = time_element(dt.datetime(2024, 7, 1, 6, 30, tzinfo=dt.timezone.utc))
    assert shown.endswith(">July 1, 2024, 2:30 a.m. EDT</time>")


def test_the_last_build_and_validation_times_are_readable(admin_site, settings, tmp_path):
    import os

    from django_sitemaps_plus import site_validation

    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "BUILD_DIR": str(tmp_path)}
    (tmp_path / "sitemaps-manifest.json").write_text('{"files": {}}')
    moment = dt.datetime(2024, 1, 5, 8, tzinfo=dt.timezone.utc).timestamp()
    os.utime(tmp_path / "sitemaps-manifest.json", (moment, moment))
    site_validation._save(site_validation.Run(id="r3", state="done", started=moment))
    site_validation._cache().set(f"{site_validation.KEY_PREFIX}:latest", "r3")
    client = Client()
    client.force_login(_staff(permitted=True))
    html = client.get(OVERVIEW).content.decode()
    time = (
        '<time datetime="2024-01-05T08:00:00+00:00" title="2024-01-05T08:00:00+00:00">'
        "Jan. 5, 2024, 9 a.m. CET</time>"
    )
    assert f'<p id="build">Last build:\n      {time}, 0 files' in html
    assert f"Started {time}." in html


def test_the_file_table_needs_the_permission(admin_site):
    client = Client()
    client.force_login(_staff(permitted=False))
    url = "/admin/django_sitemaps_plus/sitemapoverview/file/articles/1/"
    assert client.get(url).status_code == 403


# IndexNow's queue ---------------------------------------------------------------


def test_the_indexnow_queue_is_shown_where_it_is_on(admin_site, settings):
    from django_sitemaps_plus import indexnow

    client = Client()
    client.force_login(_staff(permitted=True))
    assert 'id="indexnow"' not in client.get(OVERVIEW).content.decode()
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "INDEXNOW_KEY": "a1b2c3d4e5f6"}
    indexnow.enqueue([f"https://example.com/q/{n}/" for n in range(25)])
    html = client.get(OVERVIEW).content.decode()
    assert '<strong id="indexnow-queued">25</strong>' in html
    assert "https://example.com/q/0/" in html
    assert "https://example.com/q/19/" in html
    assert "https://example.com/q/20/" not in html  # the oldest 20 only


def test_the_indexnow_queue_shows_iris_and_a_readable_backoff(admin_site, settings):
    from django_sitemaps_plus import indexnow

    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "INDEXNOW_KEY": "a1b2c3d4e5f6"}
    indexnow.enqueue(["https://example.com/gr%C3%BC%C3%9Fe/"])
    moment = dt.datetime(2024, 1, 5, 8, tzinfo=dt.timezone.utc).timestamp()
    indexnow._cache().set(f"{indexnow.PREFIX}:retry_at", moment)
    client = Client()
    client.force_login(_staff(permitted=True))
    html = client.get(OVERVIEW).content.decode()
    assert '<a href="https://example.com/gr%C3%BC%C3%9Fe/">https://example.com/grüße/</a>' in html
    assert (
        'waits until <time datetime="2024-01-05T08:00:00+00:00" '
        'title="2024-01-05T08:00:00+00:00">Jan. 5, 2024, 9 a.m. CET</time>'
    ) in html


# Validation from the admin ----------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_validation_runs_in_the_background_with_progress(admin_site, settings):
    import time

    from django_sitemaps_plus import site_validation

    client = Client()
    client.force_login(_staff(permitted=True))
    assert client.get(OVERVIEW + "validate/").status_code == 405  # POST only
    response = client.post(OVERVIEW + "validate/")
    assert response.status_code == 302
    run_id = response["Location"].rstrip("/").rsplit("/", 1)[1]
    deadline = time.monotonic() + 60
    while (run := site_validation.get(run_id)) is not None and run.running:
        assert time.monotonic() < deadline, "the validation did not finish"
        time.sleep(0.1)
    assert run is not None and run.state == "done", run
    # The index, 3 files and their .txt twins (sitemap.txt holds all 7 URLs too).
    assert run.done == run.total == 8
    assert run.passed and run.errors == 0
    page = client.get(response["Location"]).content.decode()
    assert 'data-state="done"' in page
    assert "Passed" in page
    overview_page = client.get(OVERVIEW).content.decode()
    assert f"validate/{run_id}/" in overview_page  # the last run, linked
    assert '<span class="passed">passed</span>' in overview_page


def _start_validation_now(settings: Any) -> tuple[Client, Any]:
    """A permitted staff user starts a validation, run at once by the test
    runner: their client, and the response."""
    settings.SITEMAPS_PLUS = {
        "BASE_URL": "https://example.com",
        "VALIDATION_RUNNER": "tests.validation_runner.run_now",
    }
    client = Client()
    client.force_login(_staff(permitted=True))
    return client, client.post(OVERVIEW + "validate/")


def test_a_validation_runner_setting_hands_the_run_over(admin_site, settings):
    from django_sitemaps_plus import site_validation
    from tests import validation_runner

    client, response = _start_validation_now(settings)
    run_id = response["Location"].rstrip("/").rsplit("/", 1)[1]
    assert validation_runner.handed == [run_id]
    run = site_validation.get(run_id)
    assert run is not None and run.state == "done" and run.passed
    page = client.get(response["Location"]).content.decode()
    assert '<span id="summary">0 errors' in page


def test_a_failed_run_is_recorded_not_raised(admin_site, settings, monkeypatch):
    from django_sitemaps_plus import site_validation

    def broken(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("django_sitemaps_plus.validation.validate_site", broken)
    run = site_validation.Run(id="r1")
    site_validation._save(run)
    finished = site_validation.run("r1")
    assert finished is not None and finished.state == "failed"
    assert "boom" in finished.message


def test_a_running_validation_page_reloads_itself(admin_site):
    from django_sitemaps_plus import site_validation

    site_validation._save(site_validation.Run(id="r2", state="running", done=3, total=8))
    client = Client()
    client.force_login(_staff(permitted=True))
    page = client.get(OVERVIEW + "validate/r2/").content.decode()
    assert '<meta http-equiv="refresh" content="2">' in page
    assert '<progress id="progress" max="100" value="38">' in page
    assert client.get(OVERVIEW + "validate/unknown/").status_code == 404


def test_a_validation_page_shows_files_as_iris(admin_site):
    from django_sitemaps_plus import site_validation

    uri = "https://xn--bcher-kva.example/sitemap-b%C3%BCcher-1.xml"
    finding = {"severity": "error", "rule": "X1", "title": "t", "file": uri, "message": "m"}
    site_validation._save(site_validation.Run(id="r4", state="done", findings=[finding]))
    site_validation._save(site_validation.Run(id="r5", state="running", current=uri))
    client = Client()
    client.force_login(_staff(permitted=True))
    page = client.get(OVERVIEW + "validate/r4/").content.decode()
    assert f'<a href="{uri}">https://bücher.example/sitemap-bücher-1.xml</a>' in page
    page = client.get(OVERVIEW + "validate/r5/").content.decode()
    assert "(now https://bücher.example/sitemap-bücher-1.xml)" in page


def test_a_bad_validation_runner_is_a_check_error(settings):
    from django_sitemaps_plus.checks import check_settings

    settings.SITEMAPS_PLUS = {"VALIDATION_RUNNER": "tests.nowhere.run"}
    assert "sitemaps_plus.E030" in [m.id for m in check_settings(None)]


# Remembered figures -----------------------------------------------------------------


@pytest.mark.cache
def test_the_overview_figures_are_remembered_until_the_section_changes(admin_site, settings):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from django_sitemaps_plus.serving.versions import invalidate

    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    client = Client()
    client.force_login(_staff(permitted=True))
    client.get(OVERVIEW)
    with CaptureQueriesContext(connection) as warm:
        html = client.get(OVERVIEW).content.decode()
    # The session and the user only: no section is read again.
    assert not [q for q in warm.captured_queries if "testapp_article" in q["sql"]]
    assert '<strong id="total-urls">7</strong>' in html
    # A write that sends no signal (update()), then invalidate(): the figures follow.
    Article.objects.filter(pk=1).update(updated_at=at(9))
    assert 'title="2024-01-06T12:00:00+00:00"' in client.get(OVERVIEW).content.decode()
    invalidate("articles")
    assert 'title="2024-01-09T12:00:00+00:00"' in client.get(OVERVIEW).content.decode()
    # A save sends the signal: stale at once, without invalidate().
    article = Article.objects.get(pk=2)
    article.updated_at = at(10)
    article.save()
    assert 'title="2024-01-10T12:00:00+00:00"' in client.get(OVERVIEW).content.decode()


@pytest.mark.cache
def test_remember_computes_each_time_with_the_cache_off(settings, registry):
    from django_sitemaps_plus.registry import site as sections
    from django_sitemaps_plus.serving.versions import remember
    from django_sitemaps_plus.sites import site_context

    register(Article)
    section = sections.get("articles")
    calls = []

    def compute():
        calls.append(1)
        return None  # a None is remembered too (with the cache on)

    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    remember(site_context(), [section], "probe", compute)
    remember(site_context(), [section], "probe", compute)
    assert len(calls) == 1
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": False}
    remember(site_context(), [section], "probe", compute)
    remember(site_context(), [section], "probe", compute)
    assert len(calls) == 3


def test_one_validation_at_a_time_and_a_stalled_run_is_shown_as_such(admin_site, monkeypatch):
    import time

    from django_sitemaps_plus import site_validation

    handed: list[str] = []
    monkeypatch.setattr(
        site_validation.threading, "Thread", _RecordingThread.factory(handed), raising=True
    )
    first = site_validation.start(total=8)
    assert site_validation.start(total=8).id == first.id  # still running: the same run
    assert handed == [first.id]
    # Silent for longer than STALLED_AFTER: shown as stalled, and a new run may start.
    record = site_validation.get(first.id)
    assert record is not None
    site_validation._cache().set(
        f"{site_validation.KEY_PREFIX}:{first.id}",
        {**record.__dict__, "updated": time.time() - site_validation.STALLED_AFTER - 1},
    )
    stalled = site_validation.get(first.id)
    assert stalled is not None and stalled.stalled and not stalled.running
    client = Client()
    client.force_login(_staff(permitted=True))
    page = client.get(f"{OVERVIEW}validate/{first.id}/").content.decode()
    assert "Stalled: no progress for over 10 minutes" in page
    assert 'http-equiv="refresh"' not in page
    assert "Last run: stalled" in client.get(OVERVIEW).content.decode()
    second = site_validation.start(total=8)
    assert second.id != first.id and handed == [first.id, second.id]


class _RecordingThread:
    """Stands in for the runner's thread: records the run, runs nothing."""

    @staticmethod
    def factory(handed: list[str]):
        def make(target, args, name):
            return _RecordingThread(handed, args[0])

        return make

    def __init__(self, handed: list[str], run_id: str) -> None:
        self.handed, self.run_id, self.daemon = handed, run_id, False

    def start(self) -> None:
        self.handed.append(self.run_id)


def test_starting_a_validation_counts_files_only(admin_site, settings, monkeypatch):
    """The button needs the number of files for its progress, not the lastmod
    counts the overview plots (a grouped scan of every section)."""
    from django_sitemaps_plus import site_validation
    from django_sitemaps_plus.sections import ModelSection

    def not_here(self, site):
        raise AssertionError("lastmod counts computed to start a validation")

    monkeypatch.setattr(ModelSection, "lastmod_counts", not_here)
    _client, response = _start_validation_now(settings)
    run = site_validation.get(response["Location"].rstrip("/").rsplit("/", 1)[1])
    # 3 files and their .txt twins, the index and sitemap.txt.
    assert run is not None and run.total == 8 and run.passed


def test_the_overview_lists_the_files_the_index_lists(admin_site):
    """A section whose every location fails has no file in the index; the
    overview shows none either (no link to a file that answers 404)."""
    from tests.serving.test_unlisted_files import MissingPages

    register(MissingPages)
    client = Client()
    client.force_login(_staff(permitted=True))
    html = client.get(OVERVIEW).content.decode()
    assert 'href="/sitemap-articles-1.xml"' in html
    assert "/sitemap-pages-1.xml" not in fetch("/sitemap.xml")[1].decode()
    assert 'href="/sitemap-pages-1.xml"' not in html


def test_with_the_cache_down_the_overview_works_and_no_run_is_started(admin_site, settings):
    """Validation runs are kept in the sitemap cache: while it does not answer
    the overview still shows its figures (never a 500), says the last run
    cannot be known, and a validation asked for is refused with a message."""
    from django_sitemaps_plus.serving import quiet

    settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "INDEXNOW_KEY": "0123456789abcdef"}
    client = Client()
    client.force_login(_staff(permitted=True))
    quiet.failed(RuntimeError("the sitemap cache does not answer"))  # the breaker opens
    try:
        response = client.get(OVERVIEW)
        assert response.status_code == 200
        html = response.content.decode()
        assert '<strong id="total-urls">7</strong>' in html
        assert "Validation runs are kept in the sitemap cache, which does not answer now." in html
        assert "The IndexNow queue is kept in the sitemap cache, which does not answer now." in html
        started = client.post(OVERVIEW + "validate/", follow=True)
        assert started.redirect_chain == [(OVERVIEW, 302)]
        assert "The sitemap cache does not answer: a validation run is recorded there" in (
            started.content.decode()
        )
        assert client.get(f"{OVERVIEW}validate/0123456789abcdef/").status_code == 404
    finally:
        quiet.reset()
