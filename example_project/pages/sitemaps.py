"""The static pages, a section of items that are URL names rather than rows."""

from __future__ import annotations

from django.urls import reverse

from django_sitemaps_plus import Section, register


@register
class PageSection(Section):
    name = "pages"

    def items(self) -> list[str]:
        return ["pages:home", "pages:about", "pages:contact"]

    def location(self, item: str) -> str:
        return reverse(item)
