"""What editors do in django CMS's admin, and plugin images in image:image."""

from __future__ import annotations

from typing import Any

from django.core.files.base import ContentFile
from django.test import Client
from django.urls import reverse

from django_sitemaps_plus.contrib.djangocms.models import PageSitemapSettings
from django_sitemaps_plus.contrib.djangocms.sections import PageSection
from tests.cms_djangocms.conftest import CMS, entries, locs
from tests.utils import assert_schema_valid, fetch

BASE = "https://example.com"


def test_an_editor_unchecks_show_in_sitemap_in_the_admin(cms: CMS) -> None:
    thanks = cms.page("Thanks", slug="thanks")
    assert f"{BASE}/en/thanks/" in locs()
    client = Client()
    client.force_login(cms.user)
    add = reverse("admin:sitemaps_plus_djangocms_pagesitemapsettings_add")
    form = client.get(f"{add}?extended_object={thanks.pk}")
    assert form.status_code == 200
    assert b'name="show_in_sitemap"' in form.content
    # An unchecked checkbox is not sent.
    saved = client.post(f"{add}?extended_object={thanks.pk}", {})
    assert saved.status_code in (200, 302), saved.content[:2000]
    assert PageSitemapSettings.objects.get(extended_object=thanks).show_in_sitemap is False
    assert f"{BASE}/en/thanks/" not in locs()


def test_the_toolbar_offers_the_sitemap_settings(cms: CMS) -> None:
    from cms.toolbar.utils import get_object_edit_url

    page = cms.page("About", slug="about")
    client = Client()
    client.force_login(cms.user)
    response = client.get(get_object_edit_url(cms.new_draft(page)))
    assert response.status_code == 200
    assert b"Sitemap settings" in response.content


def test_plugin_images_are_listed(cms: CMS, settings: Any, tmp_path: Any) -> None:
    settings.MEDIA_ROOT = str(tmp_path)
    about = cms.page("About", slug="about")
    content = cms.content(about)
    teaser = cms.add_teaser(content, "With a photo")
    teaser.image.save("photo.jpg", ContentFile(b"\xff\xd8\xff"), save=True)
    cms.add_teaser(content, "Without one")
    found = entries()
    assert found[f"{BASE}/en/about/"]["images"] == [f"{BASE}/media/teasers/photo.jpg"]
    assert found[f"{BASE}/en/"]["images"] == []
    assert_schema_valid(fetch("/sitemap-pages-1.xml")[1])


def test_a_plugin_you_do_not_own_is_named_in_image_plugins(cms: CMS, registry: Any) -> None:
    from tests.djangocmsapp.models import TeaserPlugin

    registry.register(
        PageSection(name="named", image_plugins={"djangocmsapp.TeaserPlugin": ["text"]})
    )
    about = cms.page("About", slug="about")
    cms.add_teaser(cms.content(about), "https://cdn.example.net/hero.png")
    assert TeaserPlugin.objects.count() == 1
    found = entries("/sitemap-named-1.xml")
    assert found[f"{BASE}/en/about/"]["images"] == ["https://cdn.example.net/hero.png"]
