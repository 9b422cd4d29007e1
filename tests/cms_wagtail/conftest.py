"""A real Wagtail tree for the integration's tests.

Collected only with ``--ds=tests.wagtail_settings`` (tests/conftest.py
ignores this folder otherwise); Wagtail missing there is an import error.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.cache import cache
from wagtail.models import Locale, Page, PageViewRestriction, Site

from tests.utils import fetch, url_entries
from tests.wagtailapp.models import HomePage

XHTML = "http://www.w3.org/1999/xhtml"


@dataclass
class Tree:
    root: Page
    home: HomePage
    site: Site
    en: Locale
    fr: Locale


def publish(parent: Page, page: Page, *, at: dt.datetime | None = None) -> Any:
    """Add ``page`` under ``parent`` and publish it (a real revision)."""
    parent.add_child(instance=page)
    revision = page.save_revision()
    revision.publish()
    page.refresh_from_db()
    if at is not None:
        type(page).objects.filter(pk=page.pk).update(last_published_at=at)
        page.refresh_from_db()
    return page


def translate(page: Page, locale: Locale) -> Any:
    """A published translation of ``page`` in ``locale``."""
    copy = page.specific.copy_for_translation(locale, copy_parents=True)
    copy.save_revision().publish()
    copy.refresh_from_db()
    return copy


def draft(parent: Page, page: Page) -> Any:
    page.live = False
    parent.add_child(instance=page)
    page.save_revision()
    return page


def restrict(page: Page, kind: str = PageViewRestriction.LOGIN) -> PageViewRestriction:
    restriction: PageViewRestriction = PageViewRestriction.objects.create(
        page=page, restriction_type=kind, password="x" if kind == "password" else ""
    )
    return restriction


@pytest.fixture
def tree(db: Any) -> Iterator[Tree]:
    """A home page at https://www.example.com, in English, with French available."""
    cache.clear()  # Wagtail caches site root paths in the default cache
    Site.objects.all().delete()
    root = Page.get_first_root_node()
    for child in root.get_children():
        child.delete()
    root = Page.get_first_root_node()  # numchild as the deletes left it
    en = Locale.objects.get_or_create(language_code="en")[0]
    fr = Locale.objects.get_or_create(language_code="fr")[0]
    home = publish(root, HomePage(title="Home", slug="home", locale=en))
    site = Site.objects.create(
        hostname="www.example.com", port=443, root_page=home, is_default_site=True
    )
    yield Tree(root, home, site, en, fr)
    cache.clear()


def entries(url: str = "/sitemap-pages-1.xml", **headers: Any) -> dict[str, dict[str, Any]]:
    """loc -> {"lastmod": text, "alternates": {hreflang: href}} of one file."""
    headers.setdefault("HTTP_HOST", "www.example.com")
    headers.setdefault("secure", True)
    response, body = fetch(url, **headers)
    assert response.status_code == 200, body
    return url_entries(body)


def locs(url: str = "/sitemap-pages-1.xml", **headers: Any) -> set[str]:
    return set(entries(url, **headers))
