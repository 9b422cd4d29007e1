"""Page images through Images(): image foreign keys and StreamField blocks."""

from __future__ import annotations

import io

import pytest
from django.core.checks import run_checks
from django.core.files.images import ImageFile
from PIL import Image as PillowImage
from wagtail.images.models import Image

from django_sitemaps_plus.contrib.wagtail.images import PageImages
from django_sitemaps_plus.contrib.wagtail.sections import PageSection
from tests.cms_wagtail.conftest import Tree, entries, publish
from tests.wagtailapp.models import ArticlePage, EventsPage

pytestmark = pytest.mark.django_db


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    settings.MEDIA_URL = "/media/"


def image(name: str) -> Image:
    buffer = io.BytesIO()
    PillowImage.new("RGB", (4, 3), "red").save(buffer, "PNG")
    return Image.objects.create(title=name, file=ImageFile(buffer, name=f"{name}.png"))


def test_images_of_a_field_and_of_stream_blocks_in_order(tree: Tree, media) -> None:
    hero, inline, first, second = (image(n) for n in ("hero", "inline", "first", "second"))
    page = publish(
        tree.home,
        ArticlePage(
            title="Photos",
            slug="photos",
            hero_image=hero,
            body=[
                ("text", "words"),
                ("image", inline),
                ("gallery", [first, second, hero]),
            ],
        ),
    )
    listed = entries()[page.get_full_url()]["images"]
    assert listed == [
        f"https://www.example.com{img.file.url}" for img in (hero, inline, first, second)
    ]


def test_pages_without_images_and_types_without_fields_have_none(tree: Tree, media) -> None:
    plain = publish(tree.home, ArticlePage(title="Plain", slug="plain"))
    events = publish(tree.home, EventsPage(title="Events", slug="events"))
    listed = entries()
    assert listed[plain.get_full_url()]["images"] == []
    assert listed[events.get_full_url()]["images"] == []
    assert listed[tree.home.get_full_url()]["images"] == []


def test_on_by_default_when_a_type_names_images() -> None:
    assert any(isinstance(e, PageImages) for e in PageSection().extensions)


def test_a_misnamed_image_field_fails_the_check(monkeypatch) -> None:
    monkeypatch.setattr(ArticlePage, "sitemap_image_fields", ["hero_image", "nope"])
    errors = [e for e in run_checks() if e.id == "sitemaps_plus.E112"]
    assert len(errors) == 1
    assert "'nope'" in errors[0].msg
