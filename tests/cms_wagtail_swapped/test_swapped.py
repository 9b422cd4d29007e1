"""The integration on a swapped page model (Wagtail 8's ``WAGTAIL_PAGE_MODEL``)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.apps import apps
from django.core.cache import cache
from django.core.management import call_command
from lxml import etree

from django_sitemaps_plus.contrib.wagtail.sections import PageSection
from django_sitemaps_plus.contrib.wagtail.sites import page_model
from django_sitemaps_plus.registry import site as registry
from tests.utils import NS, fetch

pytestmark = pytest.mark.django_db


@pytest.fixture
def base_page():
    from wagtail.models import Site

    cache.clear()
    model = apps.get_model("basepage", "BasePage")
    Site.objects.all().delete()
    model.objects.filter(depth__gt=1).delete()
    root = model.objects.get(depth=1)
    home = root.add_child(instance=model(title="Home", slug="home"))
    home.save_revision().publish()
    Site.objects.create(hostname="swapped.example", port=443, root_page=home, is_default_site=True)
    yield model, model.objects.get(pk=home.pk)
    cache.clear()


def test_the_section_lists_the_swapped_model(base_page) -> None:
    model, home = base_page
    assert page_model() is model
    section = registry.get("pages")
    assert isinstance(section, PageSection)
    assert section.get_model() is model
    about = home.add_child(instance=model(title="About", slug="about"))
    about.save_revision().publish()
    draft = home.add_child(instance=model(title="Draft", slug="draft", live=False))
    draft.save_revision()
    moment = dt.datetime(2024, 2, 3, 4, 5, 6, tzinfo=dt.timezone.utc)
    model.objects.filter(pk=about.pk).update(last_published_at=moment)
    response, body = fetch("/sitemap-pages-1.xml", HTTP_HOST="swapped.example", secure=True)
    assert response.status_code == 200, body
    root = etree.fromstring(body)
    listed = {
        u.findtext("sm:loc", namespaces=NS): u.findtext("sm:lastmod", namespaces=NS)
        for u in root.iterfind("sm:url", NS)
    }
    assert set(listed) == {"https://swapped.example/", "https://swapped.example/about/"}
    assert listed["https://swapped.example/about/"] == "2024-02-03T04:05:06Z"


def test_validate_sitemaps_exits_0(base_page) -> None:
    call_command("validate_sitemaps", verbosity=0)
