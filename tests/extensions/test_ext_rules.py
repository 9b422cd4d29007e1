"""Each extension's worst-case output passes that extension's own rules
(``django_sitemaps_plus.extensions.rules``, run by the validator) and the
official XSDs: the most images of the longest locations with characters to
escape, every language, the longest news titles, a video with every optional
field at its limit."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import pytest
from django.conf import global_settings
from django.test import TestCase, override_settings
from django.utils import timezone, translation

from django_sitemaps_plus import Section
from django_sitemaps_plus.extensions import Hreflang, Images, Video, VideoInfo
from django_sitemaps_plus.extensions.hreflang import hreflang_code
from django_sitemaps_plus.extensions.rules import hreflang as hreflang_rules
from django_sitemaps_plus.extensions.rules import images as image_rules
from django_sitemaps_plus.extensions.rules import news as news_rules
from django_sitemaps_plus.extensions.rules import video as video_rules
from django_sitemaps_plus.registry import site
from django_sitemaps_plus.sections import NewsSection
from django_sitemaps_plus.validation import Severity, validate
from tests.i18napp.models import NewsItem
from tests.i18napp.xmlcheck import NS, assert_valid
from tests.utils import fetch

MAX_LOC = 2_048
#: A location's filler with a character XML must escape ("&", as in a query):
#: escaped, 15 bytes for 11 characters, within the 1.5 bytes a character the
#: writers budget for a location (a URL denser in "&" is over budget: logged,
#: left out).
TO_ESCAPE = "page=1&sort"
TEXT = "Caf\u00e9 <\u65b0\u805e> & \"quotes\" 'apostrophes' \U0001f600 "


def padded(prefix: str, length: int, filler: str = TO_ESCAPE) -> str:
    """``prefix`` followed by ``filler`` repeated, ``length`` characters in all."""
    return (prefix + filler * length)[:length]


def findings(body: bytes, path: str, rules_prefix: str) -> list[str]:
    """The validator's findings on ``body``: its errors, and anything under
    the extension's own rules (ids starting with ``rules_prefix``)."""
    report = validate(body, base_url=f"https://example.com{path}")
    return [
        str(finding)
        for finding in report.findings
        if finding.severity is Severity.ERROR or finding.rule.id.startswith(rules_prefix)
    ]


@pytest.mark.usefixtures("registry")
@override_settings(ROOT_URLCONF="tests.i18napp.urls", MEDIA_URL="/media/", LANGUAGE_CODE="en")
class WorstCaseTests(TestCase):
    def test_images(self) -> None:
        class Gallery(Section):
            name = "gallery"
            max_loc_length = MAX_LOC
            extensions = [Images(method="pictures", max_per_url=image_rules.MAX_IMAGES_PER_URL)]

            def items(self) -> list[str]:
                return ["/gallery/"]

            def pictures(self, item: Any) -> list[str]:
                return [
                    padded(f"https://cdn.example.net/{n}/", MAX_LOC)
                    for n in range(image_rules.MAX_IMAGES_PER_URL)
                ]

        site.register(Gallery)
        with self.assertNoLogs("django_sitemaps_plus", logging.WARNING):
            _, body = fetch("/sitemap-gallery-1.xml")
        root = assert_valid(body)
        image_locs = root.xpath("//image:loc/text()", namespaces=NS)
        assert len(image_locs) == image_rules.MAX_IMAGES_PER_URL
        assert {len(loc) for loc in image_locs} == {MAX_LOC}
        assert b"&amp;" in body
        assert findings(body, "/sitemap-gallery-1.xml", "SM80") == []

    @override_settings(LANGUAGES=global_settings.LANGUAGES)
    def test_hreflang_every_language(self) -> None:
        languages = [
            code
            for code, _ in global_settings.LANGUAGES
            if hreflang_rules.VALUE_RE.fullmatch(hreflang_code(code))
        ]

        class Pages(Section):
            name = "pages"
            max_loc_length = MAX_LOC
            extensions = [Hreflang(languages=languages)]

            def items(self) -> list[str]:
                return ["page"]

            def location(self, item: Any) -> str:
                prefix = f"/{translation.get_language()}/{item}/"
                return padded(prefix, MAX_LOC - len("https://example.com"))

        site.register(Pages)
        with self.assertNoLogs("django_sitemaps_plus", logging.WARNING):
            _, body = fetch("/sitemap-pages-1.xml")
        root = assert_valid(body)
        urls = root.findall("sm:url", NS)
        assert len(urls) == len(languages)
        for url in urls:
            links = url.findall("xhtml:link", NS)
            assert len(links) == len(languages) + 1  # and x-default
        assert {len(loc) for loc in root.xpath("//sm:loc/text()", namespaces=NS)} == {MAX_LOC}
        assert findings(body, "/sitemap-pages-1.xml", "SM84") == []

    def test_news_longest_titles(self) -> None:
        class Daily(NewsSection):
            model = NewsItem
            publication_name = padded("The Daily ", 200, TEXT)
            max_title_length = 300  # the column's length

        now = timezone.now()
        title = padded("", Daily.max_title_length, TEXT)
        NewsItem.objects.bulk_create(
            NewsItem(slug=f"n{n}", title=title, published_at=now - dt.timedelta(minutes=n))
            for n in range(news_rules.MAX_NEWS_PER_FILE)
        )
        site.register(Daily)
        with self.assertNoLogs("django_sitemaps_plus", logging.WARNING):
            _, body = fetch("/sitemap-news-1.xml")
        root = assert_valid(body)
        titles = root.xpath("//news:title/text()", namespaces=NS)
        assert titles == [title] * news_rules.MAX_NEWS_PER_FILE
        assert findings(body, "/sitemap-news-1.xml", "SM81") == []

    def test_video_every_optional_field(self) -> None:
        def loc(name: str) -> str:
            return padded(f"https://cdn.example.net/{name}/", MAX_LOC)

        info = VideoInfo(
            thumbnail_loc=loc("thumbnail"),
            title=padded("", video_rules.MAX_TITLE_LENGTH, TEXT),
            description=padded("", video_rules.MAX_DESCRIPTION_LENGTH, TEXT),
            content_loc=loc("content"),
            player_loc=loc("player"),
            duration=video_rules.MAX_DURATION,
            expiration_date=dt.datetime(2030, 1, 1, 12, tzinfo=dt.timezone.utc),
            rating=video_rules.MAX_RATING,
            view_count=10**12,
            publication_date=dt.date(2025, 1, 1),
            tags=[padded(f"tag {n} ", 40, TEXT) for n in range(video_rules.MAX_TAGS)],
            family_friendly=True,
            restriction=["DE", "FR", "GB"],
            restriction_relationship="deny",
            requires_subscription=False,
            uploader=padded("", video_rules.MAX_UPLOADER_LENGTH, TEXT),
            uploader_info=loc("uploader"),
            platforms=sorted(video_rules.PLATFORMS),
            platform_relationship="allow",
            live=False,
        )

        class Films(Section):
            name = "films"
            # Every field at its limit takes about 19.7 KB: within the default
            # max_bytes_per_video, so the video is written.
            extensions = [Video(method="videos")]

            def items(self) -> list[str]:
                return ["/film/"]

            def videos(self, item: Any) -> VideoInfo:
                return info

        site.register(Films)
        with self.assertNoLogs("django_sitemaps_plus", logging.WARNING):
            _, body = fetch("/sitemap-films-1.xml")
        root = assert_valid(body)
        (video,) = root.findall("sm:url/video:video", NS)
        children = {child.tag.rpartition("}")[2] for child in video}
        optional = {"content_loc", "player_loc", "expiration_date", "view_count", "tag"}
        assert children >= {
            "thumbnail_loc",
            "title",
            "description",
            "duration",
            "rating",
            "publication_date",
            "family_friendly",
            "restriction",
            "requires_subscription",
            "uploader",
            "platform",
            "live",
            *optional,
        }
        assert len(video.findall("video:tag", NS)) == video_rules.MAX_TAGS
        assert findings(body, "/sitemap-films-1.xml", "SM8") == []
