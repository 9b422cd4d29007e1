"""Text XML 1.0 forbids never reaches a file: removed, logged once, entry kept.

Every text node and attribute goes through ``xml.escape``; the property tests
feed arbitrary text (control characters, U+FFFE, lone surrogates where the
value does not come from the database, NUL where the database stores it)
into every text field of every extension and into locations, and parse and
validate each served and built file.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.core.management import call_command
from django.db import connection
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase
from lxml import etree

from django_sitemaps_plus import ModelSection, Section
from django_sitemaps_plus.engine import xml
from django_sitemaps_plus.extensions import Images, Video, VideoInfo
from django_sitemaps_plus.registry import site
from django_sitemaps_plus.sections import NewsSection
from tests.i18napp.models import NewsItem
from tests.i18napp.xmlcheck import NS, assert_valid
from tests.testapp.models import Article
from tests.utils import fetch, locs

FORBIDDEN = ["\x00", "\x01", "\x07", "\x08", "\x0b", "\x0c", "\x0e", "\x1f", "\ufffe", "\uffff"]

#: Any text, with the forbidden characters (and lone surrogates) made common.
any_text = st.text(
    st.one_of(
        st.characters(codec=None, exclude_categories=()),
        st.sampled_from([*FORBIDDEN, "\ud800", "\udfff", "&", "<", "]", ">", "\t", "\n", "\r"]),
    ),
    max_size=40,
)


def storable(text: str) -> str:
    """What the database keeps of ``text``: no lone surrogate can be encoded
    as UTF-8, and PostgreSQL refuses NUL in text."""
    text = "".join(c for c in text if not 0xD800 <= ord(c) <= 0xDFFF)
    if connection.vendor == "postgresql":
        text = text.replace("\x00", "")
    return text


def well_formed(body: bytes) -> etree._Element:
    """Parse ``body`` (lxml refuses any forbidden character) and validate it."""
    return assert_valid(body)


class TestEscape:
    @pytest.mark.parametrize("char", [*FORBIDDEN, "\ud800", "\udc00"])
    def test_forbidden_characters_are_removed(self, char, caplog):
        with caplog.at_level(logging.WARNING, "django_sitemaps_plus"):
            assert xml.escape(f"a{char}b & c") == "ab &amp; c"
        assert f"U+{ord(char):04X}" in caplog.text

    @pytest.mark.parametrize("text", ["tab\there", "line\nfeed", "cr\rhere", "é ü 中 \U0001f600"])
    def test_allowed_characters_are_kept(self, text, caplog):
        with caplog.at_level(logging.WARNING, "django_sitemaps_plus"):
            assert xml.escape(text) == text
        assert caplog.text == ""

    def test_one_log_line_per_document(self, caplog):
        values = [f"https://e.x/{i}" + "\x0b" for i in range(3)]
        entries = (f"<url><loc>{xml.escape(value)}</loc></url>" for value in values)
        with caplog.at_level(logging.WARNING, "django_sitemaps_plus"):
            body = b"".join(xml.stream_urlset(entries, {}, label="Sitemap section 'x'"))
        etree.fromstring(body)
        (record,) = caplog.records
        message = record.getMessage()
        assert message.startswith("Sitemap section 'x': removed 3 character(s)")
        assert "U+000B" in message
        assert "from 3 value(s)" in message

    def test_a_cancelled_render_leaves_no_collector_behind(self, caplog):
        """asgiref copies a worker thread's context back to the awaiting
        coroutine when ``sync_to_async`` is cancelled, while the thread may
        still be inside a pull. The collector must not come back with it: a
        removal made later in that coroutine is logged, not counted silently
        into a document that already ended."""
        inside, release = threading.Event(), threading.Event()

        def entries():
            inside.set()
            release.wait(10)
            yield "<url><loc>https://e.x/</loc></url>"

        document = xml.stream_urlset(entries(), {})

        async def render_then_escape() -> None:
            with contextlib.suppress(asyncio.CancelledError):
                await sync_to_async(next, thread_sensitive=False)(document)
            xml.escape("after\x0bthe cancel")

        async def cancel_mid_pull() -> None:
            task = asyncio.create_task(render_then_escape())
            assert await asyncio.get_running_loop().run_in_executor(None, inside.wait, 10)
            task.cancel()
            await task
            release.set()  # asyncio.run waits for the worker thread to end

        with caplog.at_level(logging.WARNING, "django_sitemaps_plus"):
            try:
                asyncio.run(cancel_mid_pull())
            finally:
                release.set()
        assert "U+000B" in caplog.text
        assert "'after\\x0bthe cancel'" in caplog.text


class Clips(Section):
    """A video per item from a method: any text, surrogates included."""

    name = "clips"
    extensions = [Video(method="videos")]
    info: VideoInfo | None = None

    def items(self) -> list[str]:
        return ["/watch/"]

    def videos(self, item: Any) -> VideoInfo | None:
        return self.info


class Paths(Section):
    """Locations from arbitrary text, with an image each."""

    name = "paths"
    extensions = [Images(method="pictures")]
    paths: list[str] = []

    def items(self) -> list[str]:
        return self.paths

    def pictures(self, item: str) -> list[str]:
        return [f"/media/{item.lstrip('/')}.jpg"]


class Daily(NewsSection):
    model = NewsItem
    publication_name = "The Daily"
    landing_location = "news-index"


class Slugs(ModelSection):
    """The url_name fast path: locations from a column."""

    model = Article
    name = "slugs"
    url_name = "article"
    url_kwargs = {"slug": "slug"}


@pytest.mark.usefixtures("registry")
@override_settings(
    ROOT_URLCONF="tests.xml_chars_urls",
    MEDIA_URL="/media/",
    SITEMAPS_PLUS={"BASE_URL": "https://example.com", "CACHE": False},
)
class ServedFilesTests(TestCase):
    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(title=any_text, description=any_text, tag=any_text, uploader=any_text)
    def test_video_text(self, title: str, description: str, tag: str, uploader: str) -> None:
        site._registry.clear()
        site.register(
            Clips,
            info=VideoInfo(
                thumbnail_loc="/media/t.jpg",
                title=f"T{title}",
                description=f"D{description}",
                content_loc="https://cdn.example.net/v.mp4",
                tags=[f"g{tag}"],
                uploader=f"U{uploader}",
            ),
        )
        _, body = fetch("/sitemap-clips-1.xml")
        root = well_formed(body)
        assert len(root.findall("sm:url", NS)) == 1
        video = root.find("sm:url/video:video", NS)
        assert video is not None, body
        # The writer strips the title, then removes what XML forbids: a space
        # before a removed character stays ("T\r\x08" is written "T\r").
        written = xml.FORBIDDEN_CHARS.sub("", f"T{title}".strip())
        # An XML parser reads a carriage return (alone or before a line feed) as a line feed.
        written = written.replace("\r\n", "\n").replace("\r", "\n")
        assert video.findtext("video:title", namespaces=NS) == written

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(paths=st.lists(any_text, min_size=1, max_size=5, unique=True))
    def test_locations_and_image_locations(self, paths: list[str]) -> None:
        site._registry.clear()
        site.register(Paths, paths=[f"/p/{p}" for p in paths])
        # A lone surrogate can't be in a URL: that row is refused (logged);
        # every other path is listed, whatever its characters.
        listed = [p for p in paths if not any(0xD800 <= ord(c) <= 0xDFFF for c in p)]
        response, body = fetch("/sitemap-paths-1.xml")
        if not listed:
            assert response.status_code == 404
            return
        assert response.status_code == 200
        root = well_formed(body)
        assert len(root.findall("sm:url", NS)) == len(listed)
        assert len(root.findall("sm:url/image:image", NS)) == len(listed)

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(title=any_text)
    def test_news_title_from_the_database(self, title: str) -> None:
        site._registry.clear()
        site.register(Daily)
        NewsItem.objects.all().delete()
        NewsItem.objects.create(
            slug="item",
            title=f"N{storable(title)}",
            published_at=dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1),
        )
        _, body = fetch("/sitemap-news-1.xml")
        root = well_formed(body)
        assert root.findtext("sm:url/news:news/news:title", namespaces=NS) is not None

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(slug=any_text.filter(lambda s: "/" not in s))  # <str:slug> takes no "/"
    def test_fast_path_locations_from_a_column(self, slug: str) -> None:
        slug = storable(slug)
        site._registry.clear()
        site.register(Slugs)
        Article.objects.all().delete()
        Article.objects.create(title="t", slug=f"s{slug}")
        # The file holding the row: pages follow primary keys, which keep
        # counting across examples on MariaDB and PostgreSQL.
        (loc,) = locs(fetch("/sitemap.xml")[1])
        _, body = fetch(loc.removeprefix("https://example.com"))
        root = well_formed(body)
        assert len(root.findall("sm:url", NS)) == 1


@pytest.mark.django_db
@pytest.mark.usefixtures("registry")
@override_settings(ROOT_URLCONF="tests.i18napp.urls", MEDIA_URL="/media/")
def test_built_files_are_well_formed_and_the_removal_logged(tmp_path: Path, caplog) -> None:
    site.register(
        Clips,
        info=VideoInfo(
            thumbnail_loc="/media/t.jpg",
            title="Vertical\x0btab",
            description="Bell\x07 and \ufffe",
            content_loc="https://cdn.example.net/v.mp4",
        ),
    )
    with caplog.at_level(logging.WARNING, "django_sitemaps_plus"):
        call_command("build_sitemaps", "--dir", str(tmp_path), "--quiet")
    root = well_formed((tmp_path / "sitemap-clips-1.xml").read_bytes())
    assert root.findtext("sm:url/video:video/video:title", namespaces=NS) == "Verticaltab"
    (line,) = [r.getMessage() for r in caplog.records if "XML 1.0 forbids" in r.getMessage()]
    assert line.startswith("Sitemap section 'clips': removed 3 character(s)")


@pytest.mark.django_db
@pytest.mark.usefixtures("registry")
@override_settings(ROOT_URLCONF="tests.xml_chars_urls", MEDIA_URL="/media/")
def test_a_location_with_a_lone_surrogate_is_refused_and_named(caplog) -> None:
    site.register(Paths, paths=["/p/ok", "/p/\ud800"])
    with caplog.at_level(logging.WARNING, "django_sitemaps_plus"):
        _, body = fetch("/sitemap-paths-1.xml")
    root = well_formed(body)
    assert [e.text for e in root.iterfind("sm:url/sm:loc", NS)] == ["https://example.com/p/ok"]
    assert "lone surrogate" in caplog.text
    assert "\\ud800" in caplog.text
