"""Images: image:image / image:loc from a field, a relation or a method."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.core.checks import Error
from django.test import TestCase, override_settings

from django_sitemaps_plus import ModelSection, Section, protocol
from django_sitemaps_plus.checks import check_sections
from django_sitemaps_plus.extensions import Images
from django_sitemaps_plus.extensions.rules import images as image_rules
from django_sitemaps_plus.registry import site
from tests.i18napp.models import Gallery, Photo
from tests.i18napp.xmlcheck import NS, assert_valid, urlset
from tests.utils import fetch

SETTINGS = {"ROOT_URLCONF": "tests.i18napp.urls", "MEDIA_URL": "/media/"}


def image(url: str) -> str:
    return f"<image:image><image:loc>{url}</image:loc></image:image>"


class GallerySection(ModelSection):
    model = Gallery
    name = "galleries"
    extensions = [Images("photos__file")]


@pytest.mark.usefixtures("registry")
@override_settings(**SETTINGS)
class ImageTests(TestCase):
    maxDiff = None

    def setUp(self) -> None:
        super().setUp()
        self.alps = Gallery.objects.create(
            slug="alps", cover="covers/alps.jpg", external_image="https://cdn.example.net/a.jpg"
        )
        Photo.objects.create(gallery=self.alps, file="photos/1.jpg")
        Photo.objects.create(gallery=self.alps, file="photos/über 2.jpg")
        self.empty = Gallery.objects.create(slug="empty")

    def test_related_files_whole_document(self) -> None:
        site.register(GallerySection)
        # The layout (largest key, figures), rows, one image query.
        with self.assertNumQueries(4):
            _, body = fetch("/sitemap-galleries-1.xml")
        assert_valid(body)
        self.assertXMLEqual(
            body.decode(),
            urlset(
                "<url><loc>https://example.com/galleries/alps/</loc>"
                + image("https://example.com/media/photos/1.jpg")
                + image("https://example.com/media/photos/%C3%BCber%202.jpg")
                + "</url>",
                "<url><loc>https://example.com/galleries/empty/</loc></url>",
                prefixes=["image"],
            ),
        )

    def test_own_field_and_fast_path(self) -> None:
        site.register(
            GallerySection,
            url_name="gallery",
            url_kwargs={"slug": "slug"},
            extensions=[Images("cover")],
        )
        _, body = fetch("/sitemap-galleries-1.xml")
        root = assert_valid(body)
        assert root.xpath("//image:loc/text()", namespaces=NS) == [
            "https://example.com/media/covers/alps.jpg"
        ]

    def test_method_with_prefetch_and_cdn(self) -> None:
        site.register(
            GallerySection, extensions=[Images(method="sitemap_images", prefetch=["photos"])]
        )
        with self.assertNumQueries(4):  # the layout (largest key, figures), rows, prefetch
            _, body = fetch("/sitemap-galleries-1.xml")
        root = assert_valid(body)
        assert root.xpath("//image:loc/text()", namespaces=NS) == [
            "https://example.com/media/covers/alps.jpg",
            "https://cdn.example.net/a.jpg",
            "https://example.com/media/photos/1.jpg",
            "https://example.com/media/photos/%C3%BCber%202.jpg",
        ]

    def test_section_method_gets_instances_on_the_fast_path(self) -> None:
        class Hooked(GallerySection):
            name = "hooked"

            def pictures(self, item: Gallery) -> list[Any]:
                assert isinstance(item, Gallery)
                return [item.cover, *(p.file for p in item.photos.all())]

        for i in range(3):
            Photo.objects.create(gallery=self.empty, file=f"photos/e{i}.jpg")
        site.register(
            Hooked,
            url_name="gallery",
            url_kwargs={"slug": "slug"},
            extensions=[Images(method="pictures", prefetch=["photos"])],
        )
        # The layout (largest key, figures), rows, the batch's instances, the
        # prefetch: none per URL.
        with self.assertNumQueries(5):
            _, body = fetch("/sitemap-hooked-1.xml")
        assert assert_valid(body).xpath("//image:loc/text()", namespaces=NS) == [
            "https://example.com/media/covers/alps.jpg",
            "https://example.com/media/photos/1.jpg",
            "https://example.com/media/photos/%C3%BCber%202.jpg",
            "https://example.com/media/photos/e0.jpg",
            "https://example.com/media/photos/e1.jpg",
            "https://example.com/media/photos/e2.jpg",
        ]

    @override_settings(MEDIA_URL="https://media.example.org/m/")
    def test_storage_on_a_cdn_host(self) -> None:
        site.register(GallerySection, extensions=[Images("cover")])
        _, body = fetch("/sitemap-galleries-1.xml")
        assert assert_valid(body).xpath("//image:loc/text()", namespaces=NS) == [
            "https://media.example.org/m/covers/alps.jpg"
        ]

    def test_never_writes_deprecated_tags(self) -> None:
        site.register(GallerySection)
        _, body = fetch("/sitemap-galleries-1.xml")
        for tag in image_rules.DEPRECATED_TAGS:
            assert f"image:{tag}".encode() not in body

    def test_past_max_per_url_logged_not_silent(self) -> None:
        site.register(GallerySection, extensions=[Images("photos__file", max_per_url=1)])
        with self.assertLogs("django_sitemaps_plus", logging.WARNING) as logs:
            _, body = fetch("/sitemap-galleries-1.xml")
        assert assert_valid(body).xpath("count(//image:image)", namespaces=NS) == 1
        assert "1 more images" in logs.output[0]

    def test_same_image_listed_once(self) -> None:
        Photo.objects.create(gallery=self.alps, file="photos/1.jpg")
        Photo.objects.create(gallery=self.alps, file="photos/3.jpg")
        site.register(GallerySection, extensions=[Images("photos__file", max_per_url=3)])
        _, body = fetch("/sitemap-galleries-1.xml")
        # photos/1.jpg twice: listed once, and the repeat takes no room of the three.
        assert assert_valid(body).xpath("//image:loc/text()", namespaces=NS) == [
            "https://example.com/media/photos/1.jpg",
            "https://example.com/media/photos/%C3%BCber%202.jpg",
            "https://example.com/media/photos/3.jpg",
        ]

    def test_same_image_from_a_method_listed_once(self) -> None:
        class Repeats(Section):
            name = "repeats"
            extensions = [Images(method="pictures", max_per_url=2)]

            def items(self) -> list[str]:
                return ["/a/"]

            def pictures(self, item: Any) -> list[str]:
                # The same address three times, one of them written as a path.
                return ["/m/a.jpg", "https://example.com/m/a.jpg", "/m/a.jpg", "/m/b.jpg"]

        site.register(Repeats)
        with self.assertNoLogs("django_sitemaps_plus", logging.WARNING):
            _, body = fetch("/sitemap-repeats-1.xml")
        assert assert_valid(body).xpath("//image:loc/text()", namespaces=NS) == [
            "https://example.com/m/a.jpg",
            "https://example.com/m/b.jpg",
        ]

    @pytest.mark.slow
    def test_at_most_1000_per_url(self) -> None:
        Photo.objects.bulk_create(
            [Photo(gallery=self.empty, file=f"photos/{i}.jpg") for i in range(1_005)]
        )
        site.register(
            GallerySection,
            max_loc_length=100,
            extensions=[Images("photos__file", max_per_url=image_rules.MAX_IMAGES_PER_URL)],
        )
        with self.assertLogs("django_sitemaps_plus", logging.WARNING) as logs:
            _, body = fetch("/sitemap-galleries-1.xml")
        root = assert_valid(body)
        counts = [len(url.findall("image:image", NS)) for url in root.findall("sm:url", NS)]
        assert counts == [2, 1_000]
        assert "5 more images" in "".join(logs.output)

    def test_relative_value_dropped_with_warning(self) -> None:
        class Odd(Section):
            name = "odd"
            extensions = [Images(method="pictures")]

            def items(self) -> list[str]:
                return ["/a/"]

            def pictures(self, item: Any) -> list[str]:
                return ["relative.jpg", "//cdn.example.net/x.jpg", "/static/y.png"]

        site.register(Odd)
        with self.assertLogs("django_sitemaps_plus", logging.WARNING) as logs:
            _, body = fetch("/sitemap-odd-1.xml")
        assert assert_valid(body).xpath("//image:loc/text()", namespaces=NS) == [
            "https://cdn.example.net/x.jpg",
            "https://example.com/static/y.png",
        ]
        assert "relative.jpg" in logs.output[0]

    def test_internationalised_hosts_in_idna_form(self) -> None:
        class Idn(Section):
            name = "idn"
            extensions = [Images(method="pictures")]

            def items(self) -> list[str]:
                return ["/a/"]

            def pictures(self, item: Any) -> list[str]:
                return ["https://bücher.example/ü.jpg", "//Bücher.example/b.jpg"]

        site.register(Idn)
        _, body = fetch("/sitemap-idn-1.xml")
        assert assert_valid(body).xpath("//image:loc/text()", namespaces=NS) == [
            "https://xn--bcher-kva.example/%C3%BC.jpg",
            "https://xn--bcher-kva.example/b.jpg",
        ]

    def test_budget_counts_images(self) -> None:
        plain = GallerySection(extensions=[])
        with_images = GallerySection(extensions=[Images("cover", max_per_url=3)])
        # Behaviour, not the formula: a full file of entries each with three
        # images at the longest location fits the byte limit.
        assert with_images.urls_per_file() < plain.urls_per_file()
        image = (
            "<image:image><image:loc>https://example.com/"
            + "a" * 2_020
            + "</image:loc></image:image>"
        )
        worst = (
            "<url><loc>https://example.com/" + "a" * 2_020 + "</loc>"
            "<lastmod>2024-01-01T00:00:00Z</lastmod>" + image * 3 + "</url>\n"
        )
        envelope = 200
        assert with_images.urls_per_file() * len(worst) + envelope <= protocol.MAX_FILE_BYTES

    def test_checks(self) -> None:
        site.register(GallerySection, extensions=[Images("nope__file", max_per_url=1_001)])
        ids = [m.id for m in check_sections() if isinstance(m, Error)]
        assert "sitemaps_plus.E111" in ids
        assert "sitemaps_plus.E112" in ids

    def test_check_method_missing(self) -> None:
        site.register(GallerySection, extensions=[Images(method="nothing")])
        assert [m.id for m in check_sections() if isinstance(m, Error)] == ["sitemaps_plus.E113"]

    def test_check_field_on_a_plain_section(self) -> None:
        class Pages(Section):
            def items(self) -> list[str]:
                return ["/"]

        site.register(Pages, extensions=[Images("cover")])
        assert [m.id for m in check_sections() if isinstance(m, Error)] == ["sitemaps_plus.E114"]

    def test_field_or_method(self) -> None:
        with pytest.raises(TypeError):
            Images()
        with pytest.raises(TypeError):
            Images("cover", method="x")
