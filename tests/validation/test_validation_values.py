"""One set of rules: for each value rule, the batch path's ``ok`` (the exact
text has nothing to report) holds exactly when the per-entry check of that
text reports nothing, and the whole-list tests accept only what ``ok``
accepts."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

import pytest

from django_sitemaps_plus.extensions.rules import hreflang as hreflang_rules
from django_sitemaps_plus.extensions.rules import images as image_rules
from django_sitemaps_plus.extensions.rules.values import Counter, all_clean_urls, is_http_url
from django_sitemaps_plus.validation.report import FileReport
from django_sitemaps_plus.validation.values import ProtocolValues

NOW = dt.datetime(2026, 1, 15, 12, 0, tzinfo=dt.timezone.utc)

LASTMODS = [
    "2025-01-01",
    "2025-01-01T10:00:00+00:00",
    "2025-01-01T10:00+00:00",
    "2025-01",
    "2025",
    "2030-01-01",
    "2025-02-30",
    "2025-13-01",
    " 2025-01-01",
    "2025-01-01 ",
    "",
    "yesterday",
]
CHANGEFREQS = ["daily", "never", "Daily", " daily", "", "sometimes"]
PRIORITIES = ["0.5", "1.0", "0", "1", ".5", "0.55", "1.5", "-0.1", " 0.5", "", "x", "+0.5"]
HREFLANGS = ["en", "en-GB", "zh-Hant", "zh-Hant-TW", "es-419", "x-default", "english", "", "e"]
URLS = [
    "https://example.com/a",
    "http://example.com:8080/a?b=c",
    "https://example.com/caf\u00e9",
    "https://example.com/a b",
    "ftp://example.com/a",
    "/relative",
    "",
    " https://example.com/a",
    "https://" + "a" * 2_100,
]


class Element(SimpleNamespace):
    """The parts of an lxml element the value checks read."""

    def __init__(self, text: str | None = None, **attributes: Any) -> None:
        super().__init__(text=text, sourceline=3, attributes=attributes, tag="", children=[])

    def get(self, name: str) -> Any:
        return self.attributes.get(name)

    def __iter__(self) -> Any:
        return iter(self.children)

    def __len__(self) -> int:
        return len(self.children)


def silent(check: Any) -> bool:
    report = FileReport("t")
    check(report)
    return not report.findings


@pytest.mark.parametrize("value", LASTMODS)
def test_lastmod(value: str) -> None:
    def check(report: FileReport) -> None:
        ProtocolValues(report, NOW).check_lastmod(Element(value), "https://example.com/")

    assert ProtocolValues(FileReport("t"), NOW).lastmod_ok(value) is silent(check)


@pytest.mark.parametrize("value", CHANGEFREQS)
def test_changefreq(value: str) -> None:
    def check(report: FileReport) -> None:
        ProtocolValues(report, NOW).check_changefreq(Element(value), "https://example.com/")

    assert ProtocolValues.changefreq_ok(value) is silent(check)


@pytest.mark.parametrize("value", PRIORITIES)
def test_priority(value: str) -> None:
    def check(report: FileReport) -> None:
        ProtocolValues(report, NOW).check_priority(Element(value), "https://example.com/")

    assert ProtocolValues(FileReport("t"), NOW).priority_ok(value) is silent(check)


@pytest.mark.parametrize("hreflang", HREFLANGS)
@pytest.mark.parametrize("href", URLS)
def test_hreflang_link(hreflang: str, href: str) -> None:
    link = Element(rel="alternate", hreflang=hreflang, href=href)

    def check(report: FileReport) -> None:
        hreflang_rules.HreflangRules(report, {}).check_link(link, "https://example.com/", None)

    rules = hreflang_rules.HreflangRules(FileReport("t"), {})
    # An href with whitespace around it is stripped by the per-entry path
    # (no finding); the batch path, which keeps hrefs as written for the
    # reciprocity check, leaves it to that path.
    exact = href == href.strip()
    assert (rules.hreflang_ok(hreflang) and rules.href_ok(href)) is (silent(check) and exact)
    # Once both are known good, the per-entry path skips the link's checks.
    assert (rules.known_good(link) is not None) is (silent(check) and exact)


@pytest.mark.parametrize("value", URLS)
def test_image_loc(value: str) -> None:
    image = Element()
    image.children = [Element(value)]
    image.children[0].tag = image_rules.LOC_TAG

    def check(report: FileReport) -> None:
        image_rules.check_image(image, "https://example.com/", report, Counter())

    assert image_rules.locs_ok([value]) is silent(check)


@pytest.mark.parametrize(
    "values",
    [
        [""],
        ["https://example.com/a", ""],
        ["", "https://example.com/a"],
        ["https://example.com/a", "", "https://example.com/b"],
        ["https://example.com/a b"],
        ["https://" + "a" * 2_100],
    ],
)
def test_whole_list_url_test_accepts_only_good_urls(values: list[str]) -> None:
    assert not all_clean_urls(values)


def test_whole_list_url_test_accepts_clean_urls() -> None:
    values = [f"https://example.com/{n}/a-b_c~d" for n in range(100)]
    assert all_clean_urls(values)
    assert all(map(is_http_url, values))


def test_the_writers_rules_load_neither_lxml_nor_the_validator() -> None:
    """The extension rules are the writers' too: importing them (and the
    writers) costs neither lxml nor the validator's engine."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import django_sitemaps_plus.extensions.rules.hreflang\n"
        "import django_sitemaps_plus.extensions.rules.images\n"
        "import django_sitemaps_plus.extensions.rules.news\n"
        "import django_sitemaps_plus.extensions.rules.video\n"
        "print(sorted(m for m in ('lxml', 'django_sitemaps_plus.validation.engine',"
        " 'django_sitemaps_plus.validation.parser') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_serving_loads_neither_lxml_nor_the_validator() -> None:
    """A web process (the admin's overview and the writers imported, the
    URLconf loaded) loads neither lxml nor the validator."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys, django\n"
        "django.setup()\n"
        "import django_sitemaps_plus.admin, django_sitemaps_plus.views\n"
        "import django_sitemaps_plus.extensions.hreflang, django_sitemaps_plus.extensions.video\n"
        "from django.urls import resolve\n"
        "resolve('/sitemap.xml')\n"
        "print(sorted(m for m in ('lxml', 'django_sitemaps_plus.validation',"
        " 'django_sitemaps_plus.validation.engine') if m in sys.modules))\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=root
    )
    assert out.stdout.strip() == "[]"


LOCATIONS = [
    "https://example.com/a/b",
    "https://example.com/p/a",
    "https://example.com/p/../a",
    "https://example.com/p/./a",
    "https://example.com/p//a",
    "https://example.com/p/%2e%2e/a",
    "https://example.com/p/sitemap-2.xml",
    "https://example.com/p/Sitemap.XML.GZ",
    "https://EXAMPLE.com/p/a",
    "http://example.com/p/a",
    "https://other.example/p/a",
    "https://example.com/p/a?utm_source=x",
    "https://example.com/p/a;jsessionid=1",
    "https://example.com/p/caf\u00e9",
    "https://example.com/p/a b",
    "https://example.com/p/%zz",
    "https://example.com/p/" + "a" * 1_100,
    "https://e.co",
    "https://example.com",
    "/p/a",
    "",
]


@pytest.mark.parametrize(
    "file_url", [None, "https://example.com/sitemap.xml", "https://example.com/p/s.xml"]
)
@pytest.mark.parametrize("value", LOCATIONS)
def test_location_hot_paths(file_url: str | None, value: str) -> None:
    """What the batch path accepts without ``LocChecker.check`` (the
    per-entry path's), ``check`` passes silently: a URL ``quick`` accepts
    (with the same key), and a line ``quick_lines`` accepts once the batch's
    whole-list tests (lengths, sitemap-like paths, dot segments below a
    directory) pass too."""
    from django_sitemaps_plus import protocol
    from django_sitemaps_plus.validation.context import Context
    from django_sitemaps_plus.validation.locations import SITEMAP_FILE_LINES_RE, LocChecker

    def checker() -> tuple[LocChecker, FileReport]:
        report = FileReport("t")
        locations = LocChecker(report, Context(file_url=file_url))
        locations.check("https://example.com/p/first", 1)
        return locations, report

    def silent_check() -> tuple[bool, int | None]:
        locations, report = checker()
        before = len(report.findings)
        key = locations.check(value, 2)
        return len(report.findings) == before, key

    locations, _ = checker()
    key = locations.quick(value)
    if key is not None:
        assert silent_check() == (True, key)
    lines = locations.quick_lines()
    if (
        lines is not None
        and value
        and lines.fullmatch(value)
        and protocol.XSD_MIN_LOC_LENGTH <= len(value) <= protocol.YANDEX_MAX_LOC_LENGTH
        and not SITEMAP_FILE_LINES_RE.search(value)
        and (locations.file_directory == "/" or "/.." not in value)
    ):
        assert silent_check()[0]
