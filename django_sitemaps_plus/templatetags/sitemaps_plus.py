"""``{% load sitemaps_plus %}{% sitemap_robots_line %}`` for a robots.txt template."""

from __future__ import annotations

from typing import Any

from django import template

from django_sitemaps_plus.views import robots_sitemap_line

register = template.Library()


@register.simple_tag(takes_context=True)
def sitemap_robots_line(context: dict[str, Any]) -> str:
    """``Sitemap: https://example.com/sitemap.xml`` (the full URL of the index)."""
    return robots_sitemap_line(context.get("request"))
