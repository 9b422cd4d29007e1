"""Video: video:video from fields or a method, within Google's limits."""

from __future__ import annotations

import datetime as dt
import logging
from decimal import Decimal
from typing import Any

import pytest
from django.core.checks import Error
from django.db import connection
from django.test import TestCase, override_settings
from django.test.utils import CaptureQueriesContext

from django_sitemaps_plus import ModelSection, Section
from django_sitemaps_plus.checks import check_sections
from django_sitemaps_plus.extensions import Video, VideoInfo
from django_sitemaps_plus.extensions.rules import video as video_rules
from django_sitemaps_plus.registry import site
from tests.i18napp.models import Clip, Gallery, Photo
from tests.i18napp.xmlcheck import NS, assert_valid, urlset
from tests.utils import fetch

FIELDS = {
    "thumbnail_loc": "thumbnail",
    "title": "title",
    "description": "description",
    "content_loc": "file",
    "player_loc": "player_url",
    "duration": "seconds",
    "rating": "rating",
    "publication_date": "published_at",
}


class ClipSection(ModelSection):
    model = Clip
    name = "clips"
    url_name = "clip"
    url_kwargs = {"slug": "slug"}
    extensions = [Video(fields=FIELDS)]


FULL = VideoInfo(
    thumbnail_loc="/media/thumbs/t.jpg",
    title="Grilling steaks & more",
    description="How to grill.",
    content_loc="https://cdn.example.net/v.mp4",
    player_loc="https://player.example.net/embed/1",
    duration=600,
    expiration_date=dt.date(2027, 1, 1),
    rating=4.5,
    view_count=12,
    publication_date=dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
    tags=["steak", "grill"],
    family_friendly=True,
    restriction=["DE", "fr"],
    restriction_relationship="deny",
    requires_subscription=False,
    uploader="Chef",
    uploader_info="/chefs/1/",
    platforms=["web", "tv"],
    live=False,
)


class OneVideo(Section):
    name = "one"
    extensions = [Video(method="videos")]
    info: VideoInfo = FULL

    def items(self) -> list[str]:
        return ["/watch/"]

    def videos(self, item: Any) -> VideoInfo:
        return self.info


@pytest.mark.usefixtures("registry")
@override_settings(ROOT_URLCONF="tests.i18napp.urls", MEDIA_URL="/media/")
class VideoTests(TestCase):
    maxDiff = None

    def test_every_element_whole_document(self) -> None:
        site.register(OneVideo)
        _, body = fetch("/sitemap-one-1.xml")
        assert_valid(body)
        self.assertXMLEqual(
            body.decode(),
            urlset(
                "<url><loc>https://example.com/watch/</loc><video:video>"
                "<video:thumbnail_loc>https://example.com/media/thumbs/t.jpg"
                "</video:thumbnail_loc>"
                "<video:title>Grilling steaks &amp; more</video:title>"
                "<video:description>How to grill.</video:description>"
                "<video:content_loc>https://cdn.example.net/v.mp4</video:content_loc>"
                "<video:player_loc>https://player.example.net/embed/1</video:player_loc>"
                "<video:duration>600</video:duration>"
                "<video:expiration_date>2027-01-01</video:expiration_date>"
                "<video:rating>4.5</video:rating>"
                "<video:view_count>12</video:view_count>"
                "<video:publication_date>2026-01-02T03:04:05Z</video:publication_date>"
                "<video:tag>steak</video:tag><video:tag>grill</video:tag>"
                "<video:family_friendly>yes</video:family_friendly>"
                '<video:restriction relationship="deny">DE FR</video:restriction>'
                "<video:requires_subscription>no</video:requires_subscription>"
                '<video:uploader info="https://example.com/chefs/1/">Chef</video:uploader>'
                '<video:platform relationship="allow">web tv</video:platform>'
                "<video:live>no</video:live>"
                "</video:video></url>",
                prefixes=["video"],
            ),
        )
        for tag in video_rules.DEPRECATED_TAGS:
            assert f"video:{tag}".encode() not in body

    def test_from_fields_one_query_per_batch(self) -> None:
        Clip.objects.create(
            slug="a",
            title="A",
            description="About a.",
            thumbnail="thumbs/a.jpg",
            file="clips/a.mp4",
            seconds=90,
            rating=Decimal("3.5"),
        )
        Clip.objects.create(
            slug="b", title="B", description="About b.", thumbnail="thumbs/b.jpg",
            player_url="https://player.example.net/b",
        )  # fmt: skip
        site.register(ClipSection)
        # The layout (largest key, figures), rows, video fields.
        with self.assertNumQueries(4):
            _, body = fetch("/sitemap-clips-1.xml")
        root = assert_valid(body)
        assert root.xpath("//video:content_loc/text()", namespaces=NS) == [
            "https://example.com/media/clips/a.mp4"
        ]
        assert root.xpath("//video:player_loc/text()", namespaces=NS) == [
            "https://player.example.net/b"
        ]
        assert root.xpath("//video:duration/text()", namespaces=NS) == ["90"]

    def test_reverse_relation_one_video_per_related_row_in_key_order(self) -> None:
        alps = Gallery.objects.create(slug="alps", cover="covers/alps.jpg")
        Gallery.objects.create(slug="empty-one", cover="covers/e.jpg")
        for name in ("b", "a", "c"):
            Photo.objects.create(gallery=alps, file=f"clips/{name}.mp4")
        fields = {
            "thumbnail_loc": "cover",
            "title": "slug",
            "description": "slug",
            "content_loc": "photos__file",
        }
        site.register(Gallery, name="galleries", extensions=[Video(fields=fields, max_per_url=5)])
        with (
            self.assertLogs("django_sitemaps_plus", logging.WARNING) as logs,
            CaptureQueriesContext(connection) as queries,
        ):
            _, body = fetch("/sitemap-galleries-1.xml")
        root = assert_valid(body)
        first, second = root.findall("sm:url", NS)
        # One video per photo, in the photos' key order (not insertion or file name).
        assert first.xpath(".//video:content_loc/text()", namespaces=NS) == [
            "https://example.com/media/clips/b.mp4",
            "https://example.com/media/clips/a.mp4",
            "https://example.com/media/clips/c.mp4",
        ]
        assert first.xpath("count(.//video:video)", namespaces=NS) == 3
        # A gallery without photos has no content_loc: its video is left out, logged.
        assert second.find("video:video", NS) is None
        assert "neither a usable content_loc nor player_loc" in "".join(logs.output)
        video_query = queries.captured_queries[-1]["sql"]
        quote = connection.ops.quote_name
        photo_key = f"{quote(Photo._meta.db_table)}.{quote('id')}"
        assert "ORDER BY" in video_query and photo_key in video_query.split("ORDER BY")[1]

    def test_comma_separated_tags_field(self) -> None:
        Clip.objects.create(
            slug="a", title="A", description="About a.", thumbnail="thumbs/a.jpg",
            file="clips/a.mp4", tags=" steak, grill ,, smoke & fire ",
        )  # fmt: skip
        site.register(ClipSection, extensions=[Video(fields={**FIELDS, "tags": "tags"})])
        _, body = fetch("/sitemap-clips-1.xml")
        assert assert_valid(body).xpath("//video:tag/text()", namespaces=NS) == [
            "steak",
            "grill",
            "smoke & fire",
        ]

    def test_section_method_gets_instances_on_the_fast_path(self) -> None:
        class Hooked(ClipSection):
            name = "hooked"

            def videos(self, item: Clip) -> VideoInfo:
                assert isinstance(item, Clip)
                return VideoInfo(
                    item.thumbnail, item.title, item.description, content_loc=item.file
                )

        for slug in "abc":
            Clip.objects.create(
                slug=slug, title=slug.upper(), description=f"About {slug}.",
                thumbnail=f"thumbs/{slug}.jpg", file=f"clips/{slug}.mp4",
            )  # fmt: skip
        site.register(Hooked, extensions=[Video(method="videos")])
        # The layout (largest key, figures), rows, the batch's instances.
        with self.assertNumQueries(4):
            _, body = fetch("/sitemap-hooked-1.xml")
        root = assert_valid(body)
        assert root.xpath("//video:title/text()", namespaces=NS) == ["A", "B", "C"]
        assert root.xpath("//video:content_loc/text()", namespaces=NS)[2] == (
            "https://example.com/media/clips/c.mp4"
        )

    def assert_dropped(self, info: VideoInfo, message: str) -> bytes:
        site.register(OneVideo, info=info)
        with self.assertLogs("django_sitemaps_plus", logging.WARNING) as logs:
            _, body = fetch("/sitemap-one-1.xml")
        assert_valid(body)
        assert message in "".join(logs.output)
        return body

    def test_title_over_100_drops_the_video(self) -> None:
        body = self.assert_dropped(
            VideoInfo("/t.jpg", "x" * 101, "d", content_loc="/v.mp4"), "title of 101"
        )
        assert b"video:video" not in body

    def test_description_over_2048_drops_the_video(self) -> None:
        body = self.assert_dropped(
            VideoInfo("/t.jpg", "t", "d" * 2_049, content_loc="/v.mp4"), "2,049"
        )
        assert b"video:video" not in body

    def test_no_content_or_player_drops_the_video(self) -> None:
        body = self.assert_dropped(VideoInfo("/t.jpg", "t", "d"), "neither")
        assert b"video:video" not in body

    def test_out_of_range_optional_values_left_out(self) -> None:
        info = VideoInfo(
            "/t.jpg",
            "t",
            "d",
            content_loc="/v.mp4",
            duration=28_801,
            rating=5.5,
            tags=[f"t{i}" for i in range(40)],
            restriction=["Germany"],
            platforms=["desktop"],
        )
        body = self.assert_dropped(info, "duration of 28801")
        assert b"video:duration" not in body
        assert b"video:rating" not in body
        assert b"video:restriction" not in body
        assert b"video:platform" not in body
        assert body.count(b"<video:tag>") == video_rules.MAX_TAGS

    def test_internationalised_hosts_in_idna_form(self) -> None:
        info = VideoInfo(
            "https://bücher.example/t.jpg",
            "t",
            "d",
            content_loc="//bücher.example/v.mp4",
            uploader="Chef",
            uploader_info="https://bücher.example/chef/",
        )
        site.register(OneVideo, info=info)
        _, body = fetch("/sitemap-one-1.xml")
        root = assert_valid(body)
        assert root.xpath("//video:thumbnail_loc/text()", namespaces=NS) == [
            "https://xn--bcher-kva.example/t.jpg"
        ]
        assert root.xpath("//video:content_loc/text()", namespaces=NS) == [
            "https://xn--bcher-kva.example/v.mp4"
        ]
        assert root.xpath("//video:uploader/@info", namespaces=NS) == [
            "https://xn--bcher-kva.example/chef/"
        ]

    def test_every_omission_is_logged(self) -> None:
        info = VideoInfo(
            "/t.jpg",
            "t",
            "d",
            content_loc="/v.mp4",
            view_count=-1,
            expiration_date="2027-01-01",  # type: ignore[arg-type]
            publication_date="yesterday",  # type: ignore[arg-type]
            uploader="Chef",
            uploader_info="chefs/1/",
        )
        site.register(OneVideo, info=info)
        with self.assertLogs("django_sitemaps_plus", logging.WARNING) as logs:
            _, body = fetch("/sitemap-one-1.xml")
        assert_valid(body)
        output = "\n".join(logs.output)
        assert "view_count of -1" in output
        assert "expiration_date '2027-01-01' that is not a date" in output
        assert "publication_date 'yesterday' that is not a date" in output
        assert "uploader_info that ('chefs/1/') is not usable" in output
        assert len(logs.output) == 4
        for tag in (b"view_count", b"expiration_date", b"publication_date"):
            assert b"<video:" + tag not in body
        assert b"<video:uploader>Chef</video:uploader>" in body

    def test_limits_edges_are_written(self) -> None:
        info = VideoInfo(
            "/t.jpg", "x" * 100, "d" * 2_048, content_loc="/v.mp4", duration=1, rating=0
        )
        site.register(OneVideo, info=info)
        _, body = fetch("/sitemap-one-1.xml")
        root = assert_valid(body)
        assert root.xpath("//video:duration/text()", namespaces=NS) == ["1"]
        assert root.xpath("//video:rating/text()", namespaces=NS) == ["0"]

    def test_over_byte_budget_left_out(self) -> None:
        site.register(
            OneVideo,
            extensions=[Video(method="videos", max_bytes_per_video=300)],
            info=VideoInfo("/t.jpg", "t", "d" * 500, content_loc="/v.mp4"),
        )
        with self.assertLogs("django_sitemaps_plus", logging.WARNING):
            _, body = fetch("/sitemap-one-1.xml")
        assert b"video:video" not in body

    def test_checks(self) -> None:
        class Loose(ClipSection):
            extensions = [Video(fields={"title": "description", "thumbnail_loc": "nope"})]

        site.register(Loose)
        messages = check_sections()
        ids = {m.id for m in messages}
        assert "sitemaps_plus.E134" in ids  # unknown field path
        assert "sitemaps_plus.E131" not in ids  # every key is a VideoInfo attribute
        assert "sitemaps_plus.E132" in ids  # description, content/player missing
        assert "sitemaps_plus.W131" in ids  # a TextField feeds the title

    def test_check_unknown_info_attribute(self) -> None:
        class Misnamed(ClipSection):
            extensions = [Video(fields={**FIELDS, "titel": "title"})]

        site.register(Misnamed)
        errors = [m.id for m in check_sections() if isinstance(m, Error)]
        assert errors == ["sitemaps_plus.E131"]

    def test_check_method_missing(self) -> None:
        site.register(ClipSection, extensions=[Video(method="nothing")])
        errors = [m.id for m in check_sections() if isinstance(m, Error)]
        assert errors == ["sitemaps_plus.E135"]

    def test_check_fields_on_a_plain_section(self) -> None:
        site.register(OneVideo, extensions=[Video(fields=FIELDS)])
        errors = [m.id for m in check_sections() if isinstance(m, Error)]
        assert errors == ["sitemaps_plus.E136"]

    def test_clean_checks(self) -> None:
        site.register(ClipSection)
        assert [m for m in check_sections() if isinstance(m, Error)] == []
        assert "sitemaps_plus.W131" in {m.id for m in check_sections()}  # description

    def test_max_per_url_check(self) -> None:
        site.register(OneVideo, extensions=[Video(method="videos", max_per_url=0)])
        assert "sitemaps_plus.E133" in {m.id for m in check_sections()}

    def test_more_videos_than_max_per_url_logged(self) -> None:
        class Two(OneVideo):
            name = "two"

            def videos(self, item: Any) -> list[VideoInfo]:
                return [FULL, FULL]

        site.register(Two)
        with self.assertLogs("django_sitemaps_plus", logging.WARNING):
            _, body = fetch("/sitemap-two-1.xml")
        assert body.count(b"<video:video>") == 1

    def test_fields_or_method(self) -> None:
        with pytest.raises(TypeError):
            Video()
