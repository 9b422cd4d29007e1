"""Sitemap sections: the units a site registers, like admin's ModelAdmin.

``Section`` (``base``) serves pages that are not model rows (URL names or
paths); ``ModelSection`` (``model``) serves a model's queryset with lastmod
from its content-change fields and keyset (primary key range) pagination;
``NewsSection`` (``news``) the last two days' articles as a Google News
sitemap; ``ContribSection`` (``django_sitemaps_plus.contrib.django_sitemaps``,
also importable from ``django_sitemaps_plus``) serves an unchanged
``django.contrib.sitemaps.Sitemap``. Their system checks are ``checks``;
what the index knows of a file, ``PageInfo``, is ``pages``.

Importable from here: the section classes and the values their hooks take
and give (``PageInfo``, ``LastmodCounts``, ``LastmodValue``, ``Row``). The
package's own modules import each other by module path
(``django_sitemaps_plus.sections.base``), never through this one.
"""

from __future__ import annotations

from django_sitemaps_plus.engine.lastmod import LastmodValue
from django_sitemaps_plus.engine.render import Row
from django_sitemaps_plus.sections.base import Section
from django_sitemaps_plus.sections.model import ModelSection
from django_sitemaps_plus.sections.news import NewsSection
from django_sitemaps_plus.sections.pages import LastmodCounts, PageInfo

__all__ = [
    "LastmodCounts",
    "LastmodValue",
    "ModelSection",
    "NewsSection",
    "PageInfo",
    "Row",
    "Section",
]
