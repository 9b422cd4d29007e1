"""The demo's page types: a home page and articles with images."""

from __future__ import annotations

from django.db import models
from wagtail import blocks
from wagtail.admin.panels import FieldPanel
from wagtail.fields import StreamField
from wagtail.images.blocks import ImageChooserBlock
from wagtail.models import Page

from django_sitemaps_plus.contrib.wagtail.models import SitemapPageMixin


class HomePage(Page):
    intro = models.TextField(blank=True)

    content_panels = [*Page.content_panels, FieldPanel("intro")]


class ArticlePage(SitemapPageMixin, Page):
    """An article: "Show in sitemap" in its promote tab, images in the sitemap."""

    hero_image = models.ForeignKey(
        "wagtailimages.Image", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    body = StreamField(
        [("paragraph", blocks.TextBlock()), ("image", ImageChooserBlock())], blank=True
    )

    content_panels = [*Page.content_panels, FieldPanel("hero_image"), FieldPanel("body")]
    sitemap_image_fields = ["hero_image", "body"]
