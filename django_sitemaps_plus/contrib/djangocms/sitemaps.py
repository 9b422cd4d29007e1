"""Autodiscovered by django_sitemaps_plus: registers the site's pages.

To change an option, unregister ``"pages"`` in a later app's ``sitemaps.py``
and register a ``PageSection`` subclass (docs/djangocms.md).
"""

from __future__ import annotations

from django_sitemaps_plus.contrib.djangocms.sections import PageSection
from django_sitemaps_plus.registry import site

if "pages" not in site:
    site.register(PageSection())
