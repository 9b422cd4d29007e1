"""The sitemap overview in the Django admin: figures from the index's own
queries, staff with the permission only."""

from __future__ import annotations

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
    assert "2024-01-06" in html  # newest lastmod
    assert "14%" in html  # 1 of 7 URLs in a file without lastmod


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
    assert row.find_element(By.CLASS_NAME, "newest").text.startswith("2024-01-06")
    screenshots = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    browser.save_screenshot(str(screenshots / "admin-overview.png"))
