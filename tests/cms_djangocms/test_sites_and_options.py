"""The current site (SITE_ID, the request's site, BASE_URL), the section's
options and warm cached requests."""

from __future__ import annotations

from typing import Any

import pytest
from cms.api import create_page
from django.contrib.sites.models import Site
from django.test import RequestFactory

from django_sitemaps_plus.contrib.djangocms.sections import PageSection
from django_sitemaps_plus.contrib.djangocms.sites import cms_site_context
from django_sitemaps_plus.contrib.pages import PageEntry
from tests.cms_djangocms.conftest import CMS, entries, locs
from tests.utils import fetch

BASE = "https://example.com"


def other_site(cms: CMS) -> tuple[Site, Any]:
    other = Site.objects.create(domain="other.example", name="Other")
    page = create_page(
        "Other home", "djangocmsapp/page.html", "en", created_by=cms.user, site=other
    )
    cms.publish(page)
    return other, page


def test_the_requests_site_set_by_a_middleware_decides(cms: CMS) -> None:
    other, _page = other_site(cms)
    request = RequestFactory().get("/sitemap.xml")
    request.site = other  # type: ignore[attr-defined]
    context = cms_site_context(request)
    assert context.site == other
    assert context.base_url == "https://other.example"
    section = PageSection()
    assert [p.url_count for p in section.index_pages(context)] == [1]
    # Without it, SITE_ID.
    assert cms_site_context(RequestFactory().get("/")).site.pk == cms.site.pk


def test_with_base_url_the_current_site_still_decides(cms: CMS, settings: Any) -> None:
    other_site(cms)
    settings.SITEMAPS_PLUS = {"CACHE": False, "BASE_URL": "https://www.example.org"}
    assert locs() == {"https://www.example.org/en/"}
    assert cms_site_context(None).site.pk == cms.site.pk


def test_x_default_names_a_language(cms: CMS, registry: Any) -> None:
    registry.register(PageSection(x_default="en"))
    about = cms.page("About", slug="about")
    cms.translate(about, "fr", "À propos", slug="a-propos")
    found = entries()
    assert found[f"{BASE}/fr/a-propos/"]["alternates"] == {
        "en": f"{BASE}/en/about/",
        "fr": f"{BASE}/fr/a-propos/",
        "x-default": f"{BASE}/en/about/",
    }


def test_an_x_default_outside_the_languages_fails_e102(registry: Any) -> None:
    from django.core.checks import run_checks

    registry.register(PageSection(x_default="it"))
    errors = [e for e in run_checks() if e.id == "sitemaps_plus.E102"]
    assert len(errors) == 1 and "CMS_LANGUAGES" in errors[0].msg


def test_staff_only_sites_list_nothing(cms: CMS, settings: Any) -> None:
    cms.page("About", slug="about")
    assert PageSection().index_pages(cms_site_context(None))
    settings.CMS_PUBLIC_FOR = "staff"
    # Anonymous visitors see no page: no file (the index is a 404, as any empty one).
    assert PageSection().index_pages(cms_site_context(None)) == []


def test_location_of_a_page_for_indexnow(cms: CMS) -> None:
    about = cms.page("About", slug="about")
    from django.utils import translation

    french = cms.translate(about, "fr", "À propos", slug="a-propos")
    section = PageSection()
    with translation.override("en"):
        assert section.location(about) == "/en/about/"
        assert section.location(about.pk) == "/en/about/"
        # A listed entry is its content, in the content's language.
        assert section.location(PageEntry(french.pk)) == "/fr/a-propos/"


class TestWarmRequests:
    @pytest.fixture(autouse=True)
    def cached(self, settings: Any) -> None:
        settings.SITEMAPS_PLUS = {"CACHE": True}

    def test_a_warm_file_and_index_cost_no_query(
        self, cms: CMS, django_assert_num_queries: Any
    ) -> None:
        cms.page("About", slug="about")
        cold = entries()
        fetch("/sitemap.xml")
        with django_assert_num_queries(0):
            assert entries() == cold
            assert fetch("/sitemap.xml")[0].status_code == 200


def test_e141_names_a_missing_required_app(monkeypatch: pytest.MonkeyPatch) -> None:
    from django.apps import apps
    from django.core.checks import run_checks

    assert not [e for e in run_checks() if e.id == "sitemaps_plus.E141"]
    installed = apps.is_installed
    monkeypatch.setattr(
        apps, "is_installed", lambda name: name != "djangocms_versioning" and installed(name)
    )
    errors = [e for e in run_checks() if e.id == "sitemaps_plus.E141"]
    assert len(errors) == 1 and "djangocms-versioning" in errors[0].msg
