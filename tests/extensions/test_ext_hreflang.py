"""hreflang: one <url> per language version, all versions listed, reciprocal."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from django.core.cache import cache
from django.core.checks import Error
from django.core.management import call_command
from django.test import TestCase, override_settings

from django_sitemaps_plus import ModelSection, Section, protocol
from django_sitemaps_plus.checks import check_sections
from django_sitemaps_plus.extensions import Hreflang
from django_sitemaps_plus.extensions.hreflang import hreflang_code
from django_sitemaps_plus.registry import site
from tests.i18napp.models import Guide, Place, Story
from tests.i18napp.xmlcheck import assert_valid, entries, urlset
from tests.utils import fetch, locs

LANGS = [("en", "English"), ("de", "Deutsch"), ("fr", "Français")]
I18N = {"ROOT_URLCONF": "tests.i18napp.urls", "LANGUAGES": LANGS, "LANGUAGE_CODE": "en"}


@pytest.mark.usefixtures("registry")
class Registered(TestCase):
    """Each test registers its own sections in an emptied registry."""

    def assert_reciprocal(self, found: Iterable[tuple[str, dict[str, str]]]) -> None:
        """Every entry lists itself; every version it lists lists the same set."""
        by_loc = dict(found)
        for loc, links in by_loc.items():
            assert loc in links.values(), f"{loc} does not list itself"
            for hreflang, href in links.items():
                if href in by_loc:
                    assert by_loc[href] == links, f"{loc} and {href} ({hreflang}) differ"


class AboutSection(Section):
    name = "about"
    extensions = [Hreflang()]

    def items(self) -> list[str]:
        return ["about"]


@override_settings(**I18N)
class PlainSectionTests(Registered):
    maxDiff = None

    def test_whole_document(self) -> None:
        site.register(AboutSection)
        response, body = fetch("/sitemap-about-1.xml")
        assert response.status_code == 200
        assert_valid(body)
        links = (
            '<xhtml:link rel="alternate" hreflang="en" href="https://example.com/en/about/"/>'
            '<xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/about/"/>'
            '<xhtml:link rel="alternate" hreflang="fr" href="https://example.com/fr/about/"/>'
            '<xhtml:link rel="alternate" hreflang="x-default" '
            'href="https://example.com/en/about/"/>'
        )
        self.assertXMLEqual(
            body.decode(),
            urlset(
                f"<url><loc>https://example.com/en/about/</loc>{links}</url>",
                f"<url><loc>https://example.com/de/about/</loc>{links}</url>",
                f"<url><loc>https://example.com/fr/about/</loc>{links}</url>",
                prefixes=["xhtml"],
            ),
        )

    def test_explicit_languages_codes_and_x_default(self) -> None:
        site.register(
            AboutSection,
            extensions=[Hreflang(["en", "de"], x_default="de", codes={"en": "en-GB"})],
        )
        _, body = fetch("/sitemap-about-1.xml")
        found = entries(assert_valid(body))
        assert [loc for loc, _ in found] == [
            "https://example.com/en/about/",
            "https://example.com/de/about/",
        ]
        assert found[0][1] == {
            "en-GB": "https://example.com/en/about/",
            "de": "https://example.com/de/about/",
            "x-default": "https://example.com/de/about/",
        }

    def test_no_x_default(self) -> None:
        site.register(AboutSection, extensions=[Hreflang(x_default=False)])
        _, body = fetch("/sitemap-about-1.xml")
        assert all("x-default" not in links for _, links in entries(assert_valid(body)))

    def test_index_counts_language_versions(self) -> None:
        site.register(AboutSection)
        page = site.get("about").index_pages(site_ctx())[0]  # type: ignore[union-attr]
        assert page.url_count == 3


def site_ctx() -> Any:
    from django_sitemaps_plus.sites import SiteContext

    return SiteContext("https://example.com")


class PlaceSection(ModelSection):
    model = Place
    url_name = "place"
    url_kwargs = {"slug": "slug"}
    lastmod_fields = ["updated_at"]
    extensions = [Hreflang()]


@override_settings(**I18N)
class FastPathTests(Registered):
    def test_one_entry_per_language_reciprocal(self) -> None:
        Place.objects.bulk_create([Place(slug=f"place-{i}") for i in range(5)])
        site.register(PlaceSection)
        with self.assertNumQueries(3):  # the layout (largest key, figures), the rows
            _, body = fetch("/sitemap-places-1.xml")
        found = entries(assert_valid(body))
        assert len(found) == 15
        assert found[0][0] == "https://example.com/en/places/place-0/"
        assert found[1][0] == "https://example.com/de/places/place-0/"
        assert set(found[0][1]) == {"en", "de", "fr", "x-default"}
        self.assert_reciprocal(found)

    def test_a_file_is_written_in_batches_of_entries_not_of_rows(self) -> None:
        # Three entries a row: a batch of rows would hold three times as many
        # entries; batches of entries keep memory flat whatever the languages.
        from unittest import mock

        from django_sitemaps_plus.engine import pagination, render

        Place.objects.bulk_create([Place(slug=f"place-{i}") for i in range(1_500)])
        site.register(PlaceSection)
        # Measured off the request path: files hold what their bytes allow.
        call_command("measure_sitemaps", verbosity=0)
        sizes: list[int] = []
        admit = pagination.FileGuard.admit

        def counted(guard: Any, batch: list[str]) -> list[str]:
            sizes.append(len(batch))
            return admit(guard, batch)

        with mock.patch.object(pagination.FileGuard, "admit", counted):
            _, body = fetch("/sitemap-places-1.xml")
        assert len(locs(body)) == 4_500 == sum(sizes)
        assert max(sizes) < render.BATCH_ENTRIES + len(LANGS)

    def test_item_languages_hook_gets_instances(self) -> None:
        class Hooked(PlaceSection):
            name = "hooked"

            def item_languages(self, item: Place) -> list[str]:
                assert isinstance(item, Place)
                return ["de"] if item.slug.startswith("de-") else ["en", "fr"]

        Place.objects.bulk_create(
            [Place(slug=f"de-{i}") for i in range(3)] + [Place(slug=f"p-{i}") for i in range(3)]
        )
        site.register(Hooked)
        # The layout (largest key, figures), rows, the batch's instances for
        # the hook: none per URL.
        with self.assertNumQueries(4):
            _, body = fetch("/sitemap-hooked-1.xml")
        found = [loc for loc, _ in entries(assert_valid(body))]
        assert len(found) == 3 + 3 * 2
        assert found[:2] == [
            "https://example.com/de/places/de-0/",
            "https://example.com/de/places/de-1/",
        ]
        assert "https://example.com/fr/places/p-2/" in found

    def test_files_hold_whole_items_within_the_url_limit(self) -> None:
        # Three versions per item and at most seven URLs per file: every file
        # keeps the limit and lists whole items (all their versions), and every
        # item is listed once.
        small = PlaceSection(limit=7)
        assert small.urls_per_item() == 3
        slugs = [f"p{i}" for i in range(5)]
        Place.objects.bulk_create([Place(slug=slug) for slug in slugs])
        site.register(small)
        _, index = fetch("/sitemap.xml")
        files = locs(index)
        assert len(files) >= 3  # five items, at most two (six URLs) per file
        listed: list[str] = []
        for url in files:
            _, body = fetch(url.removeprefix("https://example.com"))
            found = locs(body)
            assert len(found) <= 7
            items = {loc.rstrip("/").rpartition("/")[2] for loc in found}
            assert len(found) == 3 * len(items)
            listed += items
        assert sorted(listed) == slugs

    def test_alternates_on_other_hosts(self) -> None:
        Place.objects.create(slug="berlin")
        site.register(PlaceSection, extensions=[Hreflang(hosts={"de": "https://example.de"})])
        _, com = fetch("/sitemap-places-1.xml")
        com_entries = entries(assert_valid(com))
        # The .com file lists only its own host's URLs, linking all versions.
        assert [loc for loc, _ in com_entries] == [
            "https://example.com/en/places/berlin/",
            "https://example.com/fr/places/berlin/",
        ]
        assert com_entries[0][1]["de"] == "https://example.de/de/places/berlin/"
        hosts = {"en": "https://example.com", "fr": "https://example.com"}
        site._registry.clear()
        site.register(
            PlaceSection,
            extensions=[Hreflang(hosts={**hosts, "de": "https://example.de"})],
        )
        with override_settings(SITEMAPS_PLUS={"BASE_URL": "https://example.de", "CACHE": False}):
            _, de = fetch("/sitemap-places-1.xml")
        de_entries = entries(assert_valid(de))
        assert [loc for loc, _ in de_entries] == ["https://example.de/de/places/berlin/"]
        # Together the two files are reciprocal.
        self.assert_reciprocal(com_entries + de_entries)
        assert de_entries[0][1] == com_entries[0][1]

    def test_internationalised_host_in_idna_form(self) -> None:
        Place.objects.create(slug="berlin")
        extension = Hreflang(hosts={"de": "https://bücher.example"})
        site.register(PlaceSection, extensions=[extension])
        _, com = fetch("/sitemap-places-1.xml")
        com_entries = entries(assert_valid(com))
        assert [loc for loc, _ in com_entries] == [
            "https://example.com/en/places/berlin/",
            "https://example.com/fr/places/berlin/",
        ]
        assert com_entries[0][1]["de"] == "https://xn--bcher-kva.example/de/places/berlin/"
        # Served for the German host (its base URL in Unicode too), the German
        # version is this file's own: listed, with the same links.
        with override_settings(
            SITEMAPS_PLUS={"BASE_URL": "https://bücher.example", "CACHE": False}
        ):
            _, de = fetch("/sitemap-places-1.xml")
        de_entries = entries(assert_valid(de))
        assert "https://xn--bcher-kva.example/de/places/berlin/" in [loc for loc, _ in de_entries]
        assert de_entries[0][1]["de"] == com_entries[0][1]["de"]
        assert b"b\xc3\xbccher" not in com + de
        assert "sitemaps_plus.E103" not in [m.id for m in check_sections()]


class StorySection(ModelSection):
    model = Story
    name = "stories"
    lastmod_fields = ["updated_at"]
    extensions = [Hreflang()]


@override_settings(**I18N)
class ParlerTests(Registered):
    """django-parler: a story exists in the languages it has translations for."""

    def setUp(self) -> None:
        super().setUp()
        # parler caches translations in the default cache, keyed by primary
        # key, which the rolled-back rows of other tests reuse.
        cache.clear()
        both = Story.objects.create()
        both.set_current_language("en")
        both.title, both.slug = "Spring", "spring"
        both.save()
        both.set_current_language("de")
        both.title, both.slug = "Frühling", "frühling"
        both.save()
        only_fr = Story()
        only_fr.set_current_language("fr")
        only_fr.title, only_fr.slug = "Été", "été"
        only_fr.save()
        site.register(StorySection)

    def test_versions_follow_translations(self) -> None:
        _, body = fetch("/sitemap-stories-1.xml")
        found = entries(assert_valid(body))
        assert [loc for loc, _ in found] == [
            "https://example.com/en/stories/spring/",
            "https://example.com/de/stories/fr%C3%BChling/",
            "https://example.com/fr/stories/%C3%A9t%C3%A9/",
        ]
        assert found[0][1] == {
            "en": "https://example.com/en/stories/spring/",
            "de": "https://example.com/de/stories/fr%C3%BChling/",
            "x-default": "https://example.com/en/stories/spring/",
        }
        # Only in French: lists itself, and no x-default (there is no English one).
        assert found[2][1] == {"fr": "https://example.com/fr/stories/%C3%A9t%C3%A9/"}
        self.assert_reciprocal(found)

    def test_queries_do_not_grow_with_rows(self) -> None:
        for i in range(10):
            story = Story()
            story.set_current_language("en")
            story.title, story.slug = f"t{i}", f"s{i}"
            story.save()
        # The layout (largest key, figures), rows, prefetched translations:
        # none per URL.
        with self.assertNumQueries(4):
            _, body = fetch("/sitemap-stories-1.xml")
        assert len(locs(body)) == 13

    def test_section_hook_wins(self) -> None:
        class OnlyGerman(StorySection):
            name = "german"

            def item_languages(self, item: Any) -> list[str]:
                return ["de"]

        site.register(OnlyGerman)
        _, body = fetch("/sitemap-german-1.xml")
        assert locs(body) == ["https://example.com/de/stories/fr%C3%BChling/"]


class GuideSection(ModelSection):
    model = Guide
    name = "guides"
    extensions = [Hreflang()]


@override_settings(**I18N)
class ModeltranslationTests(Registered):
    """django-modeltranslation: a guide exists where its title column is filled."""

    def setUp(self) -> None:
        super().setUp()
        Guide.objects.create(
            title_en="Berlin", slug_en="berlin", title_de="Berlin", slug_de="berlin-de"
        )
        Guide.objects.create(title_fr="Paris", slug_fr="paris")
        site.register(GuideSection)

    def test_versions_follow_filled_columns(self) -> None:
        # The layout (largest key, figures), rows: columns read from instances.
        with self.assertNumQueries(3):
            _, body = fetch("/sitemap-guides-1.xml")
        found = entries(assert_valid(body))
        assert [loc for loc, _ in found] == [
            "https://example.com/en/guides/berlin/",
            "https://example.com/de/guides/berlin-de/",
            "https://example.com/fr/guides/paris/",
        ]
        assert found[1][1] == {
            "en": "https://example.com/en/guides/berlin/",
            "de": "https://example.com/de/guides/berlin-de/",
            "x-default": "https://example.com/en/guides/berlin/",
        }
        assert found[2][1] == {"fr": "https://example.com/fr/guides/paris/"}
        self.assert_reciprocal(found)

    def test_fast_path_reads_columns_in_one_query(self) -> None:
        site._registry.clear()
        site.register(GuideSection, url_name="place", url_kwargs={"slug": "id"})
        # The layout (largest key, figures), rows, the language columns.
        with self.assertNumQueries(4):
            _, body = fetch("/sitemap-guides-1.xml")
        assert len(locs(body)) == 3

    def test_translated_kwarg_on_the_fast_path_warns(self) -> None:
        site._registry.clear()
        site.register(GuideSection, url_name="guide", url_kwargs={"slug": "slug"})
        assert "sitemaps_plus.W102" in [m.id for m in check_sections()]


@pytest.mark.slow
@override_settings(
    ROOT_URLCONF="tests.i18napp.urls",
    LANGUAGES=[
        (code, code)
        for code in [
            "en",
            "de",
            "fr",
            "es",
            "it",
            "nl",
            "pt",
            "pl",
            "sv",
            "da",
            "fi",
            "nb",
            "cs",
            "sk",
            "hu",
            "ro",
            "el",
            "tr",
            "ru",
            "uk",
        ]
    ],
    LANGUAGE_CODE="en",
)
class TwentyLanguagesTests(Registered):
    """With 20 versions per row and 2,000-character URLs, files split under the byte cap."""

    def test_split_before_byte_cap(self) -> None:
        slug = "x" * 1_960
        Place.objects.bulk_create([Place(slug=f"{i:04d}{slug}") for i in range(80)])
        section = PlaceSection()
        site.register(section)
        assert section.urls_per_item() == 20
        call_command("measure_sitemaps", verbosity=0)
        _, index = fetch("/sitemap.xml")
        files = locs(index)
        # About 73 MB: two files, the fewest the byte limit allows (measured).
        assert len(files) == 2
        total = 0
        for url in files:
            _, body = fetch(url.removeprefix("https://example.com"))
            assert len(body) <= protocol.MAX_FILE_BYTES
            found = entries(assert_valid(body, official=False))
            assert all(len(links) == 21 for _, links in found)
            total += len(found)
        # One file of everything would be about 73 MB: the split was needed.
        assert total == 80 * 20


@override_settings(**I18N)
class CheckTests(Registered):
    def ids(self) -> list[str]:
        return [m.id for m in check_sections() if isinstance(m, Error)]  # type: ignore[misc]

    def test_clean(self) -> None:
        site.register(AboutSection)
        assert self.ids() == []

    def test_bad_code(self) -> None:
        site.register(AboutSection, extensions=[Hreflang(["english"])])
        assert "sitemaps_plus.E101" in self.ids()

    def test_x_default_not_a_language(self) -> None:
        site.register(AboutSection, extensions=[Hreflang(["en"], x_default="de")])
        assert "sitemaps_plus.E102" in self.ids()

    def test_bad_host(self) -> None:
        site.register(AboutSection, extensions=[Hreflang(hosts={"de": "example.de"})])
        assert "sitemaps_plus.E103" in self.ids()

    def test_host_that_is_not_a_domain_name(self) -> None:
        site.register(AboutSection, extensions=[Hreflang(hosts={"de": "https://ü..example"})])
        assert "sitemaps_plus.E103" in self.ids()

    @override_settings(USE_I18N=False)
    def test_without_i18n(self) -> None:
        site.register(AboutSection)
        assert "sitemaps_plus.W101" in [m.id for m in check_sections()]


def test_hreflang_code() -> None:
    assert hreflang_code("pt-br") == "pt-BR"
    assert hreflang_code("zh-hans") == "zh-Hans"
    assert hreflang_code("sr-latn-rs") == "sr-Latn-RS"
    assert hreflang_code("es-419") == "es-419"
