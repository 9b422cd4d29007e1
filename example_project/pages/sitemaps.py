"""The static pages, a section of items that are URL names rather than rows.

Each page exists in every language of ``LANGUAGES`` (``i18n_patterns`` in the
URLconf), so the section lists one ``<url>`` per language version, each with
``xhtml:link`` alternates for all of them; the home page carries a video.
"""

from __future__ import annotations

from django.templatetags.static import static
from django.urls import reverse

from django_sitemaps_plus import Section, register
from django_sitemaps_plus.extensions import Hreflang, Video, VideoInfo


@register
class PageSection(Section):
    name = "pages"
    extensions = [Hreflang(), Video(method="videos")]

    def items(self) -> list[str]:
        return ["pages:home", "pages:about", "pages:contact"]

    def location(self, item: str) -> str:
        return reverse(item)

    def videos(self, item: str) -> VideoInfo | None:
        if item != "pages:home":
            return None
        # Paths are made absolute on the site; a CDN URL works as well. The
        # files are real (pages/static/pages/), served by runserver.
        return VideoInfo(
            thumbnail_loc=static("pages/tour.jpg"),
            title="A four-second test card of the demo site",
            description="A test pattern with a 440 Hz tone, embedded on the home page.",
            content_loc=static("pages/tour.mp4"),
            duration=4,
            family_friendly=True,
            tags=["demo", "sitemaps"],
        )
