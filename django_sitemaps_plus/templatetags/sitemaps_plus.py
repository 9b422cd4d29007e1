"""Template tags: ``{% load sitemaps_plus %}``.

``{% sitemap_robots_line %}`` for a robots.txt template; ``{% sitemap_sections %}``
for the list of sections of the HTML sitemap (docs/html-sitemap.md) in any page;
``|sitemap_time`` and ``|sitemap_iri`` show a time and a location to people (the
admin overview's templates).
"""

from __future__ import annotations

from typing import Any

from django import template

from django_sitemaps_plus import html_sitemap
from django_sitemaps_plus.html_sitemap import display_url
from django_sitemaps_plus.overview import time_element
from django_sitemaps_plus.sites import site_context
from django_sitemaps_plus.views import robots_sitemap_line

register = template.Library()


@register.simple_tag(takes_context=True)
def sitemap_robots_line(context: dict[str, Any]) -> str:
    """``Sitemap: https://example.com/sitemap.xml`` (the full URL of the index)."""
    return robots_sitemap_line(context.get("request"))


@register.inclusion_tag("django_sitemaps_plus/html_sitemap/sections.html", takes_context=True)
def sitemap_sections(context: dict[str, Any]) -> dict[str, Any]:
    """The registered sections, each linked to its HTML sitemap, with its URL
    count and newest lastmod (the queries of the XML index)."""
    request = context.get("request")
    return {"sitemap_sections": html_sitemap.summaries(request, site_context(request))}


# A time and a location for people (``overview.time_element``,
# ``html_sitemap.display_url``).
register.filter("sitemap_time", time_element)
register.filter("sitemap_iri", display_url)
