from __future__ import annotations

from typing import Any

from django.db import models
from django.http import HttpRequest, HttpResponse
from wagtail import blocks
from wagtail.contrib.routable_page.models import RoutablePageMixin, path
from wagtail.fields import StreamField
from wagtail.images.blocks import ImageChooserBlock
from wagtail.models import Page

from django_sitemaps_plus.contrib.wagtail.models import SitemapPageMixin


class HomePage(Page):
    pass


class ArticlePage(SitemapPageMixin, Page):
    hero_image = models.ForeignKey(
        "wagtailimages.Image", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    body = StreamField(
        [
            ("text", blocks.TextBlock()),
            ("image", ImageChooserBlock()),
            ("gallery", blocks.ListBlock(ImageChooserBlock())),
        ],
        blank=True,
    )

    sitemap_image_fields = ["hero_image", "body"]


class EventsPage(RoutablePageMixin, Page):
    """Lists a route beside itself, with its own lastmod."""

    @path("")
    def current(self, request: HttpRequest) -> HttpResponse:
        return HttpResponse("current")

    @path("past/")
    def past(self, request: HttpRequest) -> HttpResponse:
        return HttpResponse("past")

    def get_sitemap_urls(self, request: HttpRequest | None = None) -> list[dict[str, Any]]:
        urls = super().get_sitemap_urls(request)
        return [*urls, {**urls[0], "location": urls[0]["location"] + "past/"}]


class LandingPage(Page):
    """Never listed itself (its children are)."""

    def get_sitemap_urls(self, request: HttpRequest | None = None) -> list[dict[str, Any]]:
        return []
