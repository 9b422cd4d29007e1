"""The django CMS integration end to end: real pages, versions and plugins,
served through Django's test client."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from cms.models import ACCESS_PAGE_AND_DESCENDANTS, PagePermission
from django.contrib.auth.models import Group

from django_sitemaps_plus.contrib.djangocms.models import PageSitemapSettings
from django_sitemaps_plus.serving import versions
from tests.cms_djangocms.conftest import CMS, entries, locs, set_published_at
from tests.utils import assert_schema_valid, fetch

BASE = "https://example.com"


def test_published_pages_in_their_languages_with_reciprocal_alternates(cms: CMS) -> None:
    about = cms.page("About", slug="about")
    cms.translate(about, "fr", "À propos", slug="a-propos")
    found = entries()
    assert set(found) == {f"{BASE}/en/", f"{BASE}/en/about/", f"{BASE}/fr/a-propos/"}
    both = {"en": f"{BASE}/en/about/", "fr": f"{BASE}/fr/a-propos/"}
    assert found[f"{BASE}/en/about/"]["alternates"] == both
    assert found[f"{BASE}/fr/a-propos/"]["alternates"] == both
    # A single-language page names itself.
    assert found[f"{BASE}/en/"]["alternates"] == {"en": f"{BASE}/en/"}
    # Every listed URL is served by django CMS.
    for loc in found:
        response, _ = fetch(loc.removeprefix(BASE))
        assert response.status_code == 200, loc


def test_schema_valid_with_an_index(cms: CMS) -> None:
    cms.page("About", slug="about")
    response, body = fetch("/sitemap.xml")
    assert response.status_code == 200
    root = assert_schema_valid(body)
    assert [e.text for e in root.iter("{*}loc")] == [f"{BASE}/sitemap-pages-1.xml"]
    assert_schema_valid(fetch("/sitemap-pages-1.xml")[1])


def url(path: str) -> str:
    return f"{BASE}{path}"


class TestWhichPages:
    def test_drafts_unpublished_and_untranslated_languages_are_left_out(self, cms: CMS) -> None:
        cms.page("Draft", slug="draft", published=False)
        gone = cms.page("Gone", slug="gone")
        cms.unpublish(gone)
        about = cms.page("About", slug="about")
        # A French draft: django CMS would render English as a fallback at
        # /fr/about/, which is never listed.
        cms.translate(about, "fr", "À propos", slug="a-propos", published=False)
        found = entries()
        assert set(found) == {url("/en/"), url("/en/about/")}
        assert found[url("/en/about/")]["alternates"] == {"en": url("/en/about/")}

    def test_a_non_public_language_is_left_out(self, cms: CMS) -> None:
        about = cms.page("About", slug="about")
        cms.translate(about, "de", "Über uns", slug="ueber-uns")
        assert locs() == {url("/en/"), url("/en/about/")}

    def test_login_required_redirect_and_restricted_pages_are_left_out(self, cms: CMS) -> None:
        cms.page("Members", slug="members", login_required=True)
        cms.page("Elsewhere", slug="elsewhere", redirect="https://elsewhere.example/")
        staff = cms.page("Staff", slug="staff")
        cms.page("Handbook", slug="handbook", parent=staff)
        open_page = cms.page("Open", slug="open")
        PagePermission.objects.create(
            page=staff,
            group=Group.objects.create(name="staff"),
            can_view=True,
            grant_on=ACCESS_PAGE_AND_DESCENDANTS,
        )
        assert locs() == {url("/en/"), url("/en/open/")}
        assert fetch("/en/members/")[0].status_code == 302  # to the login page
        assert open_page.pk

    def test_a_children_only_restriction_keeps_the_parent(self, cms: CMS) -> None:
        from cms.models import ACCESS_CHILDREN

        parent = cms.page("Parent", slug="parent")
        cms.page("Child", slug="child", parent=parent)
        PagePermission.objects.create(
            page=parent,
            group=Group.objects.create(name="members"),
            can_view=True,
            grant_on=ACCESS_CHILDREN,
        )
        assert locs() == {url("/en/"), url("/en/parent/")}

    def test_children_of_an_unpublished_page_are_unreachable(self, cms: CMS) -> None:
        parent = cms.page("Parent", slug="parent")
        cms.page("Child", slug="child", parent=parent)
        assert url("/en/parent/child/") in locs()
        cms.unpublish(parent)
        assert locs() == {url("/en/")}

    def test_other_sites_pages_are_left_out(self, cms: CMS) -> None:
        from cms.api import create_page
        from django.contrib.sites.models import Site

        other = Site.objects.create(domain="other.example", name="Other")
        page = create_page("Other", "djangocmsapp/page.html", "en", created_by=cms.user, site=other)
        cms.publish(page)
        assert locs() == {url("/en/")}

    def test_an_editor_can_take_a_page_out(self, cms: CMS) -> None:
        hidden = cms.page("Thanks", slug="thanks")
        PageSitemapSettings.objects.create(extended_object=hidden, show_in_sitemap=False)
        shown = cms.page("Shown", slug="shown")
        PageSitemapSettings.objects.create(extended_object=shown, show_in_sitemap=True)
        assert locs() == {url("/en/"), url("/en/shown/")}

    def test_the_text_sitemap_lists_the_same_urls(self, cms: CMS) -> None:
        about = cms.page("About", slug="about")
        cms.translate(about, "fr", "À propos", slug="a-propos")
        response, body = fetch("/sitemap-pages-1.txt")
        assert response.status_code == 200
        assert set(body.decode().split()) == locs()


def _home_and_about_published_then(cms: CMS) -> tuple[Any, dt.datetime]:
    """The home page and an About page, both published on 2 January 2026;
    returns the About page and a later moment (2 February)."""
    about = cms.page("About", slug="about")
    then = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    set_published_at(cms.home, "en", then)
    set_published_at(about, "en", then)
    return about, dt.datetime(2026, 2, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


class TestLastmod:
    def test_publish_time_then_a_published_plugin_edit_moves_it(self, cms: CMS) -> None:
        about = cms.page("About", slug="about")
        cms.add_teaser(cms.content(about), "Old")
        then = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
        set_published_at(about, "en", then)
        assert entries()[url("/en/about/")]["lastmod"] == "2026-01-02T03:04:05Z"

        # An unpublished draft edit (a plugin changed in the draft) does not move it.
        draft = cms.new_draft(about)
        plugin = draft.get_placeholders().get(slot="content").get_plugins().get()
        plugin.get_bound_plugin().text = "New"
        plugin.get_bound_plugin().save()
        cms.add_teaser(draft, "Another")
        assert entries()[url("/en/about/")]["lastmod"] == "2026-01-02T03:04:05Z"

        # Publishing it does.
        cms.publish(about)
        lastmod = entries()[url("/en/about/")]["lastmod"]
        assert lastmod > "2026-01-02T03:04:05Z"

    def test_a_later_change_of_a_published_plugin_moves_it(self, cms: CMS) -> None:
        about = cms.page("About", slug="about")
        teaser = cms.add_teaser(cms.content(about), "Old")
        then = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
        set_published_at(about, "en", then)
        teaser.text = "Fixed a typo"
        teaser.save()
        assert entries()[url("/en/about/")]["lastmod"] > "2026-01-02T03:04:05Z"

    def test_the_index_names_the_latest(self, cms: CMS) -> None:
        about, later = _home_and_about_published_then(cms)
        set_published_at(about, "en", later)
        from lxml import etree

        from tests.utils import NS

        root = etree.fromstring(fetch("/sitemap.xml")[1])
        assert root.findtext("sm:sitemap/sm:lastmod", namespaces=NS) == "2026-02-02T03:04:05Z"
        response, _ = fetch("/sitemap-pages-1.xml")
        assert response["Last-Modified"] == "Mon, 02 Feb 2026 03:04:05 GMT"


def test_queries_do_not_grow_with_pages(cms: CMS) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def count() -> int:
        with CaptureQueriesContext(connection) as captured:
            entries()
            fetch("/sitemap.xml")
        return len(captured)

    cms.page("One", slug="one")
    count()  # content types and sites are cached from here on
    few = count()
    for i in range(5):
        page = cms.page(f"Page {i}", slug=f"page-{i}")
        cms.translate(page, "fr", f"Page {i}", slug=f"page-{i}")
    assert count() == few


class TestCMSSitemap:
    def test_registering_cms_sitemap_serves_its_pages(self, cms: CMS, registry: Any) -> None:
        from cms.sitemaps import CMSSitemap

        about = cms.page("About", slug="about")
        cms.translate(about, "fr", "À propos", slug="a-propos")
        registry.register(CMSSitemap)
        # Its items() reads site.pk from the site it is handed.
        ours = locs("/sitemap-cms-1.xml")
        assert ours == {url("/en/"), url("/en/about/"), url("/fr/a-propos/")}
        # As django.contrib.sitemaps serves it (its protocol is http by default).
        _, body = fetch("/cms-sitemap.xml")
        from lxml import etree

        from tests.utils import NS

        theirs = {e.text for e in etree.fromstring(body).iterfind(".//sm:loc", NS)}
        assert {loc.replace("http://", "https://") for loc in theirs} == ours


class TestInvalidation:
    @pytest.fixture(autouse=True)
    def cached(self, settings: Any) -> None:
        settings.SITEMAPS_PLUS = {"CACHE": True}

    def test_publish_unpublish_and_restrict_are_seen(self, cms: CMS) -> None:
        assert locs() == {url("/en/")}
        about = cms.page("About", slug="about")
        assert locs() == {url("/en/"), url("/en/about/")}
        cms.translate(about, "fr", "À propos", slug="a-propos")
        assert url("/fr/a-propos/") in locs()
        cms.unpublish(about, "fr")
        assert locs() == {url("/en/"), url("/en/about/")}
        permission = PagePermission.objects.create(
            page=about, group=Group.objects.create(name="g"), can_view=True, grant_on=1
        )
        assert locs() == {url("/en/")}
        permission.delete()
        settings_row = PageSitemapSettings.objects.create(
            extended_object=about, show_in_sitemap=False
        )
        assert locs() == {url("/en/")}
        settings_row.delete()
        assert url("/en/about/") in locs()

    def test_a_file_after_a_save_carries_its_pages_new_lastmod(self, cms: CMS) -> None:
        # The layout the index kept predates the change: a plain GET reads the
        # pages' lastmod after rendering them (by page key, as the layout).

        about, later = _home_and_about_published_then(cms)
        fetch("/sitemap.xml")
        set_published_at(about, "en", later)
        versions.invalidate("pages")
        cold, _ = fetch("/sitemap-pages-1.xml")
        assert cold["Last-Modified"] == "Mon, 02 Feb 2026 03:04:05 GMT"
        warm, _ = fetch("/sitemap-pages-1.xml")
        assert warm["Last-Modified"] == cold["Last-Modified"]

    def test_a_move_in_the_admin_is_seen(self, cms: CMS) -> None:
        from django.test import Client
        from django.urls import reverse

        section = cms.page("Section", slug="section")
        about = cms.page("About", slug="about")
        assert url("/en/about/") in locs()
        client = Client()
        client.force_login(cms.user)
        moved = client.post(
            reverse("admin:cms_page_move_page", args=(about.pk,)),
            {"target": section.pk, "position": 0, "site": cms.site.pk},
        )
        assert moved.status_code == 200, moved.content[:500]
        # With the cache on: the move's saves and its post_obj_operation both invalidate.
        assert url("/en/section/about/") in locs()
        assert url("/en/about/") not in locs()

    @pytest.mark.parametrize(
        "signal",
        [
            "cms.signals.post_obj_operation",
            "cms.signals.post_placeholder_operation",
            "djangocms_versioning.signals.post_version_operation",
        ],
    )
    def test_each_operation_signal_invalidates(
        self, cms: CMS, signal: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from django.utils.module_loading import import_string

        from django_sitemaps_plus.contrib import pages

        seen: list[set[str]] = []
        monkeypatch.setattr(
            pages, "invalidate_after_commit", lambda names, using=None: seen.append(names)
        )
        import_string(signal).send(
            sender=None, operation="test", token="t", obj=cms.home, placeholder=None
        )
        assert seen == [{"pages"}]


def test_validate_sitemaps_exits_0(cms: CMS) -> None:
    from django.core.management import call_command

    about = cms.page("About", slug="about")
    cms.translate(about, "fr", "À propos", slug="a-propos")
    cms.add_teaser(cms.content(about), "Hi")
    cms.page("Members", slug="members", login_required=True)
    cms.page("Draft", slug="draft", published=False)
    call_command("validate_sitemaps", verbosity=0)  # SystemExit on failure


def test_lastmod_counts_in_sql_equal_what_the_files_hold(cms: CMS) -> None:
    """The admin overview's counts (one grouped query) against the files."""
    from django_sitemaps_plus.registry import site as sections
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import site_context

    about = cms.page("About", slug="about")
    cms.translate(about, "fr", "À propos", slug="a-propos")
    cms.page("Draft", slug="draft", published=False)
    section = sections.get("pages")
    assert section is not None
    site = site_context()
    counts = section.lastmod_counts(site)
    assert counts == Section.lastmod_counts(section, site)
    assert counts.total == len(entries()) == 3
    assert counts.undated == 0


def test_files_are_laid_out_by_page_and_filled_whatever_the_gaps(cms: CMS, registry: Any) -> None:
    """Files are packed from the contents there are, by their page's key: the
    gaps deleted pages leave make no thin files, and a page's languages share
    a file (its alternates with it)."""
    from django_sitemaps_plus.contrib.djangocms.sections import PageSection

    registry.register(PageSection(limit=4))
    pages = [cms.page(f"P{i}", slug=f"p{i}") for i in range(6)]
    for page in pages[::2]:
        page.delete()
    cms.translate(pages[1], "fr", "P1", slug="p1-fr")
    _, index = fetch("/sitemap.xml")
    files = [(e.text or "").removeprefix(BASE) for e in assert_schema_valid(index).iter("{*}loc")]
    found = [entries(file) for file in files]
    # Home, p1 (two languages), p3, p5: five URLs in two files of at most four,
    # the first full (fixed ranges of two page keys made four files of one or two).
    assert [len(urls) for urls in found] == [4, 1]
    first = found[0]
    assert first[f"{BASE}/en/p1/"]["alternates"] == {
        "en": f"{BASE}/en/p1/",
        "fr": f"{BASE}/fr/p1-fr/",
    }
    assert f"{BASE}/fr/p1-fr/" in first
