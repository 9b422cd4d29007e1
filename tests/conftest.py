from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from django_sitemaps_plus.registry import SitemapRegistry, site


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    """Each test starts with an empty default cache: the layouts and measured
    blocks a test leaves (kept whatever ``CACHE`` says) are not another's."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture
def registry() -> Iterator[SitemapRegistry]:
    """The default registry, emptied for one test and restored after it."""
    saved = dict(site._registry)
    site._registry.clear()
    try:
        yield site
    finally:
        site._registry.clear()
        site._registry.update(saved)


def _ignored_suites() -> list[str]:
    """The integration suites not selected by DJANGO_SETTINGS_MODULE.

    Each needs its CMS and its own settings, so it runs in its own
    environment (tox.ini, .ci/run), never beside the core suite.
    """
    import os

    selected = os.environ.get("DJANGO_SETTINGS_MODULE", "")
    suites = {
        "cms_wagtail": "tests.wagtail_settings",
        "cms_wagtail_swapped": "tests.wagtail_swapped_settings",
        "cms_djangocms": "tests.djangocms_settings",
    }
    return [folder for folder, settings in suites.items() if settings != selected]


collect_ignore = _ignored_suites()


# A real headless Chromium (browser tests) -----------------------------------


def _chromium() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium and ChromeDriver are missing (.ci/run installs them)")
        pytest.skip("Chromium and ChromeDriver are not installed")
    return browser, driver


@pytest.fixture
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("selenium is missing (the test extra installs it)")
        pytest.skip("selenium is not installed")

    binary, driver = _chromium()
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        # This machine's network is closed: no background connections.
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
    ):
        options.add_argument(argument)
    options.add_argument("--window-size=1200,900")
    chrome = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield chrome
    finally:
        chrome.quit()
