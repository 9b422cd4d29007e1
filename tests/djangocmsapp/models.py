"""A plugin with text and an image, for lastmod and image tests."""

from __future__ import annotations

from cms.models import CMSPlugin
from django.db import models


class TeaserPlugin(CMSPlugin):
    text = models.CharField(max_length=200, blank=True)
    image = models.FileField(upload_to="teasers", blank=True)

    def sitemap_images(self) -> list[object]:
        return [self.image] if self.image else []
