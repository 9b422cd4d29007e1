"""Verdicts on real sitemaps written by others (../shared/reference/real/).

Each file's expected rule ids, and why. The folder lives beside the
repository (CI checks it out at ../shared); without it the test is skipped.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from django_sitemaps_plus.validation import validate
from tests.utils import require_reference

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "real"
#: Pinned so that "older than two days" and "in the future" do not drift.
NOW = dt.datetime(2026, 1, 15, tzinfo=dt.timezone.utc)

EXPECTED: dict[str, set[str]] = {
    # "<urlset><url does not close": not well-formed; the root has no namespace.
    "advertools__error_sitemap.xml": {"SM110", "SM202"},
    # image:caption/geo_location/title/license, which Google ignores since 2022.
    "advertools__image_sitemap.xml": {"SM803"},
    # No declaration, padded <loc> and titles, language "en-US" (ISO 639 wants
    # "en"), and 2020 articles long out of the two-day news window.
    "advertools__news_sitemap.xml": {"SM102", "SM210", "SM812", "SM814"},
    # Four different hosts in one index.
    "advertools__sitemap_index.xml": {"SM311"},
    # No thumbnail_loc, empty description, content_loc "None", lastmod after the
    # video (XSD order), video:category (deprecated).
    "advertools__video_sitemap.xml": {"SM102", "SM209", "SM821", "SM827", "SM828"},
    "advertools__zipped_sitemap.xml.gz": set(),
    # Alternates are complete and reciprocal; pages without alternates are fine.
    "astro-i18n-sitemap__sitemap-0.xml": set(),
    # mobile:mobile and changefreq before lastmod (XSD order), image:caption and
    # image:title, video:category.
    "crawler-commons__hebdenbridgetimes-articles-sitemap.xml": {"SM209", "SM803", "SM827"},
    "crawler-commons__shinpaideshou-news-sitemap.xml": {"SM814"},
    "crawler-commons__sitemap-images.xml": {"SM803"},
    "crawler-commons__sitemap-links.xml": set(),
    # An empty news:name; the 2008 and 2025 articles are old news.
    "crawler-commons__sitemap-news.xml": {"SM811", "SM814"},
    # <loc> after <video:video> (XSD order), video:category and video:tvshow.
    "crawler-commons__sitemap-videos-tvshow.xml": {"SM209", "SM827"},
    # Padded player_loc; gallery_loc and price are deprecated.
    "crawler-commons__sitemap-videos.xml": {"SM210", "SM827"},
    # Google's old namespace; padded values.
    "crawler-commons__sitemap.badns.xml": {"SM202", "SM210"},
    # Bare text in <sitemap>, no <loc>: each of the 15 entries is broken.
    "crawler-commons__sitemap.index.xml": {"SM206", "SM207"},
    "crawler-commons__sitemap.ns.xml": set(),
    "crawler-commons__xmlSitemap.gz": set(),
    # A newline before <?xml: a fatal error for every XML parser.
    "site__10beasts.cn__page-sitemap.xml": {"SM103"},
    "site__10beasts.cn__sitemap_index.xml": set(),
    "site__3dbruckner.de__sitemap-index.xml": set(),
    # XML 1.1, and github.aspy.dev (a subdomain) in aspy.dev's sitemap.
    "site__aspy.dev__sitemap.xml": {"SM104", "SM311"},
    # No declaration, no namespace, padded <loc>, then the undeclared xsi:
    # prefix makes the file not namespace-well-formed.
    "site__diesteinwerkstatt-fe.at__sitemap.xml": {"SM102", "SM110", "SM202", "SM210"},
    # Valid, but its pages are sitemap files: an index written as a urlset.
    "site__heizung-defekt.de__sitemap_index.xml": {"SM317"},
    "site__pezzo.in__sitemap.xml": set(),
    # Hostile characters: padded content_loc, <>" in URLs, several hosts,
    # deprecated image and video tags, old news, "YES", an android-app
    # alternate without hreflang, alternates that omit the page itself.
    "sitemap.js__alltags.xml": {
        "SM210",
        "SM303",
        "SM311",
        "SM803",
        "SM814",
        "SM827",
        "SM829",
        "SM841",
        "SM842",
        "SM843",
    },
    "sitemap.js__bad-tag-index.xml": {"SM203"},
    # <changefreq>always<</changefreq>: an unescaped "<".
    "sitemap.js__unescaped-lt.xml": {"SM106"},
    "sitemap.js__video.xml": {"SM210", "SM827"},
    # 84 URLs, all with lastmod 2016-11-21.
    "trafilatura__sitemaps.org-sitemap.xml": {"SM404"},
    # No news:language; old news.
    "usp__google-news.xml": {"SM811", "SM814"},
    # Namespace with a trailing slash; alternates without the page itself.
    "usp__hreflang.xml": {"SM202", "SM843"},
}


@pytest.fixture(autouse=True)
def _real_files() -> None:
    require_reference(REAL)


def test_every_real_file_has_a_verdict():
    files = {path.name for path in REAL.iterdir() if path.name != "SOURCES.md"}
    assert files == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_verdict(name):
    report = validate(REAL / name, now=NOW, follow=False)
    assert report.rule_ids() == EXPECTED[name]
