"""The sitemap overview in the Django admin: figures from the index's own
queries, staff with the permission only."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from lxml import etree

from django_sitemaps_plus import register
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
    assert 'title="2024-01-06T12:00:00+00:00"' in html  # newest lastmod, ISO on hover
    assert "Jan. 6, 2024" in html  # and in DATE_FORMAT
    row = html[html.index('data-name="articles"') :]
    assert '<td class="undated n">14%</td>' in row  # 1 of 7 URLs has no lastmod


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

    settings.SITEMAPS_PLUS = {"BASE_URL": live_server.url, "CACHE": False}
    User.objects.create_superuser("root", "root@example.com", "pw")
    browser.get(f"{live_server.url}{OVERVIEW}")
    browser.find_element(By.NAME, "username").send_keys("root")
    browser.find_element(By.NAME, "password").send_keys("pw")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # The figures against the XML index the same server serves.
    index = etree.fromstring(fetch("/sitemap.xml")[1])
    files = len(index.findall("sm:sitemap", NS))
    assert browser.find_element(By.ID, "total-files").text == str(files) == "3"
    row = browser.find_element(By.CSS_SELECTOR, "tr.section[data-name=articles]")
    assert row.find_element(By.CLASS_NAME, "urls").text == "7"
    newest = row.find_element(By.CLASS_NAME, "newest")
    assert newest.get_attribute("title").startswith("2024-01-06")
    # The plot: one bar a day from the first lastmod to the last, 6 dated URLs.
    bars = row.find_elements(By.CSS_SELECTOR, "svg.lastmod-plot rect")
    assert len(bars) == 6
    assert sum(int(bar.get_attribute("data-urls")) for bar in bars) == 6
    screenshots = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    browser.save_screenshot(str(screenshots / "admin-overview.png"))
    # A file as a table, no XSLT involved: its rows against the XML.
    row.find_element(By.CSS_SELECTOR, "a.html-view").click()
    xml = etree.fromstring(fetch("/sitemap-articles-1.xml")[1])
    locs = [loc.text for loc in xml.iterfind("sm:url/sm:loc", NS)]
    cells = browser.find_elements(By.CSS_SELECTOR, "table#urls tbody tr td:nth-child(2)")
    assert [cell.text for cell in cells] == locs
    browser.save_screenshot(str(screenshots / "admin-file-table.png"))
    # The validator, run from the overview in the background; the page
    # reloads itself until the run ends.
    browser.back()
    browser.find_element(By.ID, "validate").click()
    from selenium.webdriver.support.ui import WebDriverWait

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
    from django_sitemaps_plus.location import site_context
    from django_sitemaps_plus.sections import Section
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
    from django_sitemaps_plus.location import site_context

    class EveryOther(ModelSection):
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


def test_a_bad_validation_runner_is_a_check_error(settings):
    from django_sitemaps_plus.checks import check_settings

    settings.SITEMAPS_PLUS = {"VALIDATION_RUNNER": "tests.nowhere.run"}
    assert "sitemaps_plus.E030" in [m.id for m in check_settings(None)]


# Remembered figures -----------------------------------------------------------------


@pytest.mark.cache
def test_the_overview_figures_are_remembered_until_the_section_changes(admin_site, settings):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from django_sitemaps_plus.cache import invalidate

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
    from django_sitemaps_plus.cache import remember
    from django_sitemaps_plus.location import site_context
    from django_sitemaps_plus.registry import site as sections

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
