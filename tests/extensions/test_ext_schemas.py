"""Our extension schemas, and a cross-check against the official XSDs.

Every extension test validates its documents with ``assert_valid`` (ours, and
the official schemas when present). Here: one document with all four
extensions, our schemas' stricter rules (deprecated tags, Google's limits),
and a test that skips when the official XSDs are not beside the repository.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import TestCase, override_settings
from lxml import etree

from django_sitemaps_plus import ModelSection, protocol
from django_sitemaps_plus.extensions import Hreflang, Images, Video, VideoInfo
from django_sitemaps_plus.extensions.rules import images as image_rules
from django_sitemaps_plus.registry import site
from tests.i18napp.models import Gallery
from tests.i18napp.xmlcheck import assert_valid, official_schema, our_schema
from tests.utils import OFFICIAL_XSD, fetch, require_reference


class Everything(ModelSection):
    model = Gallery
    name = "everything"
    extensions = [
        Hreflang(),
        Images("cover"),
        Video(method="videos"),
    ]

    def location(self, item: Any) -> str:
        from django.urls import reverse

        return reverse("place", kwargs={"slug": item.slug})

    def videos(self, item: Any) -> VideoInfo:
        return VideoInfo("/t.jpg", item.slug, "A film.", content_loc="/v.mp4", duration=60)


def document(children: str, prefix: str) -> bytes:
    return (
        f'<urlset xmlns="{protocol.SITEMAP_NS}" xmlns:{prefix}="'
        + {
            "image": protocol.IMAGE_NS,
            "video": protocol.VIDEO_NS,
            "news": protocol.NEWS_NS,
            "xhtml": protocol.XHTML_NS,
        }[prefix]
        + f'"><url><loc>https://example.com/a/</loc>{children}</url></urlset>'
    ).encode()


@pytest.mark.usefixtures("registry")
@override_settings(
    ROOT_URLCONF="tests.i18napp.urls",
    LANGUAGES=[("en", "English"), ("de", "Deutsch")],
    LANGUAGE_CODE="en",
    MEDIA_URL="/media/",
)
class AllExtensionsTests(TestCase):
    def test_one_document_with_every_extension(self) -> None:
        Gallery.objects.create(slug="alps", cover="covers/alps.jpg")
        site.register(Everything)
        _, body = fetch("/sitemap-everything-1.xml")
        root = assert_valid(body)
        assert set(root.nsmap) == {None, "xhtml", "image", "video"}
        assert len(root) == 2  # one <url> per language


class OurSchemaTests(TestCase):
    """Our schemas are stricter than the 2010 ones where Google's rules changed."""

    def invalid(self, children: str, prefix: str) -> bool:
        return not our_schema().validate(etree.fromstring(document(children, prefix)))

    def test_image_deprecated_tags_rejected(self) -> None:
        loc = "<image:loc>https://example.com/a.jpg</image:loc>"
        assert not self.invalid(f"<image:image>{loc}</image:image>", "image")
        for tag in image_rules.DEPRECATED_TAGS:
            child = f"<image:{tag}>x</image:{tag}>"
            assert self.invalid(f"<image:image>{loc}{child}</image:image>", "image"), tag

    def video(self, extra: str = "", title: str = "t") -> str:
        return (
            "<video:video><video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>"
            f"<video:title>{title}</video:title><video:description>d</video:description>"
            f"<video:content_loc>https://example.com/v.mp4</video:content_loc>{extra}"
            "</video:video>"
        )

    def test_video_limits(self) -> None:
        assert not self.invalid(self.video("<video:duration>28800</video:duration>"), "video")
        assert self.invalid(self.video("<video:duration>28801</video:duration>"), "video")
        assert self.invalid(self.video("<video:duration>0</video:duration>"), "video")
        assert self.invalid(self.video("<video:rating>5.1</video:rating>"), "video")
        assert self.invalid(self.video(title="x" * 101), "video")
        assert self.invalid(self.video("<video:tag>t</video:tag>" * 33), "video")
        assert self.invalid(self.video("<video:category>c</video:category>"), "video")

    def test_hreflang_values(self) -> None:
        link = '<xhtml:link rel="alternate" hreflang="{}" href="https://example.com/a/"/>'
        assert not self.invalid(link.format("zh-Hant-TW"), "xhtml")
        assert not self.invalid(link.format("x-default"), "xhtml")
        assert self.invalid(link.format("english"), "xhtml")
        assert self.invalid(link.format("en").replace("https://example.com", ""), "xhtml")

    def test_news_language(self) -> None:
        news = (
            "<news:news><news:publication><news:name>N</news:name>"
            "<news:language>{}</news:language></news:publication>"
            "<news:publication_date>2026-01-01T00:00:00Z</news:publication_date>"
            "<news:title>T</news:title></news:news>"
        )
        assert not self.invalid(news.format("zh-cn"), "news")
        assert self.invalid(news.format("en-US"), "news")


def test_official_schemas_accept_what_ours_accept() -> None:
    """Cross-check: documents valid under ours are valid under the official XSDs."""
    require_reference(OFFICIAL_XSD / "sitemap.xsd")
    schema = official_schema()
    assert schema is not None
    samples = [
        document(
            "<image:image><image:loc>https://example.com/a.jpg</image:loc></image:image>",
            "image",
        ),
        document(
            '<xhtml:link rel="alternate" hreflang="x-default" href="https://example.com/a/"/>',
            "xhtml",
        ),
        document(OurSchemaTests().video("<video:live>yes</video:live>"), "video"),
    ]
    for sample in samples:
        root = etree.fromstring(sample)
        assert our_schema().validate(root), our_schema().error_log
        assert schema.validate(root), schema.error_log


@pytest.mark.usefixtures("registry")
@override_settings(
    ROOT_URLCONF="tests.i18napp.urls",
    LANGUAGES=[("en", "English"), ("de", "Deutsch"), ("fr", "Français")],
    LANGUAGE_CODE="en",
    MEDIA_URL="/media/",
)
class OwnValidatorTests(TestCase):
    """The project's validator finds nothing wrong with what the extensions write."""

    def test_site_with_every_extension(self) -> None:
        import datetime as dt

        from django.utils import timezone

        from django_sitemaps_plus.sections import NewsSection
        from tests.i18napp.models import NewsItem, Photo

        alps = Gallery.objects.create(slug="alps", cover="covers/alps.jpg")
        Photo.objects.create(gallery=alps, file="photos/1.jpg")
        Gallery.objects.create(slug="empty")
        NewsItem.objects.create(
            slug="today", title="Today", published_at=timezone.now() - dt.timedelta(hours=1)
        )

        class News(NewsSection):
            model = NewsItem
            publication_name = "The Daily"
            landing_location = "news-index"

        site.register(Everything)
        site.register(News)
        self.assert_no_findings(["/sitemap-everything-1.xml", "/sitemap-news-1.xml"])

    def assert_no_findings(self, paths: list[str]) -> None:
        from django_sitemaps_plus.validation.engine import validate

        for path in paths:
            _, body = fetch(path)
            report = validate(body, base_url=f"https://example.com{path}")
            assert report.files[0].entries >= 1
            assert not report.fails("warning"), [str(f) for f in report.findings_at("warning")]

    def test_empty_news_file_is_valid(self) -> None:
        from django_sitemaps_plus.sections import NewsSection
        from tests.i18napp.models import NewsItem

        class News(NewsSection):
            model = NewsItem
            publication_name = "The Daily"
            landing_location = "news-index"

        site.register(News)
        self.assert_no_findings(["/sitemap-news-1.xml"])
