"""A real django CMS site with djangocms-versioning for the integration's tests.

Collected only with ``--ds=tests.djangocms_settings`` (tests/conftest.py
ignores this folder otherwise); django CMS missing there is an import error.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pytest
from cms.api import add_plugin, create_page, create_page_content
from cms.models import Page, PageContent
from django.contrib.auth import get_user_model
from django.contrib.sites.models import Site
from djangocms_versioning.models import Version

from tests.utils import fetch, url_entries

XHTML = "http://www.w3.org/1999/xhtml"
TEMPLATE = "djangocms/page.html"


@dataclass
class CMS:
    site: Site
    user: Any
    home: Page

    def page(
        self,
        title: str,
        *,
        parent: Page | None = None,
        language: str = "en",
        published: bool = True,
        **options: Any,
    ) -> Page:
        """A page under ``parent`` (the home page by default), published unless told."""
        page = create_page(
            title,
            "djangocmsapp/page.html",
            language,
            parent=parent or self.home,
            created_by=self.user,
            site=self.site,
            **options,
        )
        if published:
            self.publish(page, language)
        return Page.objects.get(pk=page.pk)

    def translate(
        self, page: Page, language: str, title: str, *, published: bool = True, **options: Any
    ) -> PageContent:
        content = create_page_content(language, title, page, created_by=self.user, **options)
        if published:
            self.publish(page, language)
        return content

    def version(self, page: Page, language: str = "en", state: str | None = None) -> Version:
        versions = Version.objects.filter(
            cms_pagecontent__page=page, cms_pagecontent__language=language
        )
        if state:
            versions = versions.filter(state=state)
        version: Version = versions.order_by("-pk").first()
        return version

    def publish(self, page: Page, language: str = "en") -> Version:
        version = self.version(page, language, "draft")
        version.publish(self.user)
        return version

    def unpublish(self, page: Page, language: str = "en") -> None:
        self.version(page, language, "published").unpublish(self.user)

    def new_draft(self, page: Page, language: str = "en") -> PageContent:
        """A draft copy of the published version (an editor starts editing)."""
        draft = self.version(page, language, "published").copy(self.user)
        content: PageContent = draft.content
        return content

    def content(self, page: Page, language: str = "en", state: str = "published") -> PageContent:
        content: PageContent = self.version(page, language, state).content
        return content

    def add_teaser(self, content: PageContent, text: str = "Hello", **data: Any) -> Any:
        placeholder = content.get_placeholders().get(slot="content")
        return add_plugin(placeholder, "Teaser", content.language, text=text, **data)


def set_published_at(page: Page, language: str, when: dt.datetime) -> None:
    """Move the published version's time (and its content's) back to ``when``."""
    content = PageContent._base_manager.get(
        page=page, language=language, versions__state="published"
    )
    Version.objects.filter(pk=content.versions.get().pk).update(modified=when)
    PageContent._base_manager.filter(pk=content.pk).update(changed_date=when)
    from cms.models import CMSPlugin

    CMSPlugin.objects.filter(placeholder__object_id=content.pk).update(changed_date=when)


@pytest.fixture
def cms(db: Any) -> CMS:
    """A site at example.com with a published English home page."""
    site = Site.objects.get(pk=1)
    site.domain, site.name = "example.com", "Example"
    site.save()
    user = get_user_model().objects.create_superuser("admin", "admin@example.com", "pw")
    home = create_page("Home", "djangocmsapp/page.html", "en", created_by=user, site=site)
    Version.objects.filter_by_grouper(home).get().publish(user)
    home.set_as_homepage(user)
    return CMS(site, user, Page.objects.get(pk=home.pk))


def entries(url: str = "/sitemap-pages-1.xml", **headers: Any) -> dict[str, dict[str, Any]]:
    """loc -> {"lastmod", "alternates": {hreflang: href}, "images"} of one file."""
    response, body = fetch(url, **headers)
    assert response.status_code == 200, body
    return url_entries(body)


def locs(url: str = "/sitemap-pages-1.xml", **headers: Any) -> set[str]:
    return set(entries(url, **headers))
