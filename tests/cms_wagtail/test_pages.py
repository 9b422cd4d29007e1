"""The /sitemap.xml contract of the Wagtail integration, on real Wagtail pages."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.core.management import call_command
from django.test import override_settings
from lxml import etree
from wagtail.models import Page, PageViewRestriction, Site

from django_sitemaps_plus.contrib.wagtail.sections import PageSection
from django_sitemaps_plus.engine.lastmod import format_w3c
from django_sitemaps_plus.registry import site as registry
from tests.cms_wagtail.conftest import Tree, draft, entries, locs, publish, restrict, translate
from tests.utils import NS, fetch
from tests.wagtailapp.models import ArticlePage, EventsPage, HomePage, LandingPage

pytestmark = pytest.mark.django_db

UTC = dt.timezone.utc


def full(path: str) -> str:
    return f"https://www.example.com{path}"


class TestWhichPages:
    def test_live_public_pages_of_the_site_with_the_root(self, tree: Tree) -> None:
        about = publish(tree.home, ArticlePage(title="About", slug="about"))
        publish(about, ArticlePage(title="Team", slug="team"))
        draft(tree.home, ArticlePage(title="Draft", slug="draft"))
        assert locs() == {full("/"), full("/about/"), full("/about/team/")}

    def test_urls_are_what_wagtail_gives(self, tree: Tree) -> None:
        about = publish(tree.home, ArticlePage(title="Über uns", slug="über-uns"))
        team = publish(about, ArticlePage(title="Team", slug="team"))
        listed = locs()
        for page in (tree.home, about, team):
            assert page.get_full_url() in listed
        assert full("/%C3%BCber-uns/team/") in listed

    def test_private_pages_and_their_descendants_are_left_out(self, tree: Tree) -> None:
        for kind in (PageViewRestriction.LOGIN, PageViewRestriction.PASSWORD):
            section = publish(tree.home, ArticlePage(title=kind, slug=kind))
            publish(section, ArticlePage(title="Inner", slug="inner"))
            restrict(section, kind)
        groups = publish(tree.home, ArticlePage(title="Staff", slug="staff"))
        restriction = restrict(groups, PageViewRestriction.GROUPS)
        restriction.groups.create(name="staff")
        public = publish(tree.home, ArticlePage(title="Public", slug="public"))
        assert locs() == {full("/"), public.get_full_url()}

    def test_unpublished_and_expired_pages_are_left_out(self, tree: Tree) -> None:
        gone = publish(tree.home, ArticlePage(title="Gone", slug="gone"))
        gone.unpublish()
        expired = publish(tree.home, ArticlePage(title="Expired", slug="expired"))
        Page.objects.filter(pk=expired.pk).update(expire_at=dt.datetime(2020, 1, 1, tzinfo=UTC))
        call_command("publish_scheduled", verbosity=0)
        assert locs() == {full("/")}

    def test_pages_of_other_sites_and_of_no_site_are_left_out(self, tree: Tree) -> None:
        other_home = publish(tree.root, HomePage(title="Other", slug="other"))
        publish(other_home, ArticlePage(title="Elsewhere", slug="elsewhere"))
        Site.objects.create(hostname="other.example", port=443, root_page=other_home)
        orphan = publish(tree.root, HomePage(title="Orphan", slug="orphan"))
        publish(orphan, ArticlePage(title="Nowhere", slug="nowhere"))
        assert locs() == {full("/")}
        assert locs(HTTP_HOST="other.example") == {
            "https://other.example/",
            "https://other.example/elsewhere/",
        }

    def test_an_unknown_host_gets_the_default_site(self, tree: Tree) -> None:
        assert locs(HTTP_HOST="unknown.example") == {full("/")}

    def test_no_matching_site_and_no_default_is_a_404(self, tree: Tree) -> None:
        Site.objects.update(is_default_site=False)
        response, _ = fetch("/sitemap.xml", HTTP_HOST="unknown.example", secure=True)
        assert response.status_code == 404

    def test_editors_take_a_page_out_children_stay(self, tree: Tree) -> None:
        hidden = publish(tree.home, ArticlePage(title="Hidden", slug="hidden"))
        child = publish(hidden, ArticlePage(title="Child", slug="child"))
        hidden.show_in_sitemap = False
        hidden.save_revision().publish()
        assert locs() == {full("/"), child.get_full_url()}

    def test_the_checkbox_is_in_the_promote_tab(self) -> None:
        from wagtail.admin.panels import get_edit_handler

        handler = get_edit_handler(ArticlePage).bind_to_model(ArticlePage)
        assert "show_in_sitemap" in handler.get_form_options()["fields"]


class TestLastmod:
    def test_lastmod_is_last_published_at_in_utc_to_the_second(self, tree: Tree) -> None:
        moment = dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
        page = publish(tree.home, ArticlePage(title="A", slug="a"), at=moment)
        assert entries()[page.get_full_url()]["lastmod"] == "2024-05-06T07:08:09Z"

    def test_a_draft_edit_does_not_move_it(self, tree: Tree) -> None:
        moment = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
        page = publish(tree.home, ArticlePage(title="A", slug="a"), at=moment)
        page.title = "A, edited"
        page.save_revision()
        assert entries()[page.get_full_url()]["lastmod"] == "2024-05-06T07:08:09Z"

    def test_the_index_lists_each_files_latest(self, tree: Tree) -> None:
        moment = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
        Page.objects.filter(pk=tree.home.pk).update(last_published_at=moment)
        _, body = fetch("/sitemap.xml", HTTP_HOST="www.example.com", secure=True)
        lastmods = [e.text for e in etree.fromstring(body).iterfind(".//sm:lastmod", NS)]
        assert lastmods == ["2024-05-06T07:08:09Z"]


class TestLastmodWithoutLastPublishedAt:
    """Live pages published before Wagtail had ``last_published_at`` (or
    imported) have none: their latest revision's time stands in, as in
    Wagtail's own ``Page.get_sitemap_urls``."""

    def _old_page(self, tree: Tree, slug: str, revised: dt.datetime | None) -> Any:
        page = publish(tree.home, ArticlePage(title=slug, slug=slug))
        Page.objects.filter(pk=page.pk).update(
            last_published_at=None, latest_revision_created_at=revised
        )
        page.refresh_from_db()
        return page

    def test_the_latest_revision_stands_in(self, tree: Tree) -> None:
        revised = dt.datetime(2023, 3, 4, 5, 6, 7, tzinfo=UTC)
        page = self._old_page(tree, "old", revised)
        listed = entries()
        assert listed[page.get_full_url()]["lastmod"] == "2023-03-04T05:06:07Z"
        # What Wagtail's own sitemap says for the page.
        wagtail = page.specific.get_sitemap_urls()[0]["lastmod"]
        assert format_w3c(wagtail) == "2023-03-04T05:06:07Z"

    def test_the_index_lists_the_files_latest_with_it(self, tree: Tree) -> None:
        Page.objects.filter(pk=tree.home.pk).update(
            last_published_at=dt.datetime(2022, 1, 1, tzinfo=UTC)
        )
        self._old_page(tree, "old", dt.datetime(2024, 2, 3, 4, 5, 6, tzinfo=UTC))
        _, body = fetch("/sitemap.xml", HTTP_HOST="www.example.com", secure=True)
        lastmods = [e.text for e in etree.fromstring(body).iterfind(".//sm:lastmod", NS)]
        assert lastmods == ["2024-02-03T04:05:06Z"]

    def test_a_published_time_wins_over_a_later_revision(self, tree: Tree) -> None:
        moment = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
        page = publish(tree.home, ArticlePage(title="A", slug="a"), at=moment)
        Page.objects.filter(pk=page.pk).update(
            latest_revision_created_at=dt.datetime(2025, 1, 1, tzinfo=UTC)
        )
        assert entries()[page.get_full_url()]["lastmod"] == "2024-05-06T07:08:09Z"

    def test_neither_gives_no_lastmod(self, tree: Tree) -> None:
        page = self._old_page(tree, "undated", None)
        assert entries()[page.get_full_url()]["lastmod"] is None

    def test_the_overview_counts_agree_with_the_files(self, tree: Tree) -> None:
        from django_sitemaps_plus.registry import site as sections
        from django_sitemaps_plus.sections import Section
        from django_sitemaps_plus.sites import site_context

        self._old_page(tree, "old", dt.datetime(2023, 3, 4, tzinfo=UTC))
        self._old_page(tree, "undated", None)
        section = sections.get("pages")
        assert section is not None
        site = site_context()
        counts = section.lastmod_counts(site)
        assert counts == Section.lastmod_counts(section, site)
        assert counts.total == 3 and counts.undated == 1
        assert dt.date(2023, 3, 4) in counts.by_day


class TestOwnUrls:
    def test_extra_entries_of_an_override_are_listed(self, tree: Tree) -> None:
        events = publish(tree.home, EventsPage(title="Events", slug="events"))
        listed = entries()
        assert events.get_full_url() in listed
        assert events.get_full_url() + "past/" in listed
        lastmod = format_w3c(events.last_published_at)
        assert listed[events.get_full_url() + "past/"]["lastmod"] == lastmod

    def test_an_empty_override_leaves_the_page_out_not_its_children(self, tree: Tree) -> None:
        landing = publish(tree.home, LandingPage(title="Landing", slug="landing"))
        child = publish(landing, ArticlePage(title="Child", slug="child"))
        assert locs() == {full("/"), child.get_full_url()}

    def test_plain_types_are_never_loaded_specifically(self, tree: Tree) -> None:
        def count_queries(pages: int) -> int:
            from django.db import connection
            from django.test.utils import CaptureQueriesContext

            for i in range(pages):
                publish(tree.home, HomePage(title=f"P{i}", slug=f"p-{pages}-{i}"))
            locs()  # the first request lays the files out and keeps the layout
            with CaptureQueriesContext(connection) as queries:
                locs()
            # HomePage keeps Wagtail's URL methods and names no images.
            assert not any("wagtailapp_homepage" in q["sql"] for q in queries.captured_queries)
            return len(queries.captured_queries)

        assert count_queries(2) == count_queries(20)


class TestPagination:
    def test_keyset_files_and_per_file_lastmod(self, tree: Tree, registry) -> None:
        registry.register(PageSection(limit=2))
        pages = [publish(tree.home, ArticlePage(title=f"P{i}", slug=f"p{i}")) for i in range(4)]
        moment = dt.datetime(2024, 1, 1, tzinfo=UTC)
        for i, page in enumerate(pages):
            Page.objects.filter(pk=page.pk).update(last_published_at=moment + dt.timedelta(days=i))
        _, body = fetch("/sitemap.xml", HTTP_HOST="www.example.com", secure=True)
        index = etree.fromstring(body)
        files = [e.text for e in index.iterfind(".//sm:loc", NS)]
        assert len(files) >= 2
        everything: set[str] = set()
        for file_url in files:
            path = file_url.removeprefix("https://www.example.com")
            everything |= locs(path)
        assert everything == {full("/"), *(p.get_full_url() for p in pages)}


class TestTranslations:
    def test_each_locale_tree_with_reciprocal_alternates(self, tree: Tree) -> None:
        about = publish(tree.home, ArticlePage(title="About", slug="about"))
        home_fr = translate(tree.home, tree.fr)
        about_fr = translate(about, tree.fr)
        only_en = publish(tree.home, ArticlePage(title="English", slug="english"))
        listed = entries()
        pairs = [(tree.home, home_fr), (about, about_fr)]
        for en, fr in pairs:
            en_url, fr_url = en.get_full_url(), fr.get_full_url()
            assert fr_url.startswith(full("/fr/"))
            expected = {"en": en_url, "fr": fr_url}
            assert listed[en_url]["alternates"] == expected
            assert listed[fr_url]["alternates"] == expected
        assert listed[only_en.get_full_url()]["alternates"] == {}

    def test_a_draft_translation_is_no_alternate(self, tree: Tree) -> None:
        about = publish(tree.home, ArticlePage(title="About", slug="about"))
        translate(tree.home, tree.fr)
        about_fr = translate(about, tree.fr)
        about_fr.unpublish()
        listed = entries()
        assert about_fr.get_full_url() not in listed
        assert listed[about.get_full_url()]["alternates"] == {}

    def test_x_default_names_one_version(self, tree: Tree, registry) -> None:
        registry.register(PageSection(x_default="en"))
        home_fr = translate(tree.home, tree.fr)
        alternates = entries()[home_fr.get_full_url()]["alternates"]
        assert alternates["x-default"] == tree.home.get_full_url()

    def test_alias_pages_are_left_out(self, tree: Tree) -> None:
        about = publish(tree.home, ArticlePage(title="About", slug="about"))
        home_fr = translate(tree.home, tree.fr)
        alias = about.create_alias(parent=home_fr, update_locale=tree.fr, update_slug="about")
        listed = locs()
        assert alias.get_full_url() not in listed
        assert about.get_full_url() in listed

    @override_settings(WAGTAIL_I18N_ENABLED=False)
    def test_without_i18n_only_the_sites_own_tree(self, tree: Tree, registry) -> None:
        registry.register(PageSection())
        translate(tree.home, tree.fr)
        listed = entries()
        assert set(listed) == {full("/")}
        assert listed[full("/")]["alternates"] == {}


class TestInvalidation:
    @pytest.fixture(autouse=True)
    def cached(self, settings):
        settings.SITEMAPS_PLUS = {"CACHE": True}

    def test_publish_unpublish_move_slug_delete_restrict(self, tree: Tree) -> None:
        assert locs() == {full("/")}
        page = publish(tree.home, ArticlePage(title="New", slug="new"))
        assert locs() == {full("/"), full("/new/")}
        section = publish(tree.home, ArticlePage(title="Section", slug="section"))
        page.refresh_from_db()
        page.move(section, pos="last-child")
        assert full("/section/new/") in locs()
        page = ArticlePage.objects.get(pk=page.pk)
        page.slug = "renamed"
        page.save_revision().publish()
        assert full("/section/renamed/") in locs()
        restriction = restrict(section)
        assert locs() == {full("/")}
        restriction.delete()
        assert full("/section/renamed/") in locs()
        page.refresh_from_db()
        page.unpublish()
        assert full("/section/renamed/") not in locs()
        section.refresh_from_db()
        section.delete()
        assert locs() == {full("/")}

    def test_a_site_change_is_seen(self, tree: Tree) -> None:
        assert locs() == {full("/")}
        Site.objects.filter(pk=tree.site.pk).update(port=80)
        tree.site.refresh_from_db()
        tree.site.save()
        assert locs(secure=False) == {"http://www.example.com/"}


class TestValidation:
    def test_validate_sitemaps_without_a_target_exits_0(self, tree: Tree) -> None:
        about = publish(tree.home, ArticlePage(title="About", slug="about"))
        translate(tree.home, tree.fr)
        translate(about, tree.fr)
        publish(tree.home, EventsPage(title="Events", slug="events"))
        call_command("validate_sitemaps", verbosity=0)  # SystemExit on failure

    def test_same_urls_as_wagtails_own_sitemap_for_the_default_locale(self, tree: Tree) -> None:
        about = publish(tree.home, ArticlePage(title="About", slug="about"))
        publish(about, ArticlePage(title="Team", slug="team"))
        publish(tree.home, EventsPage(title="Events", slug="events"))
        _, body = fetch("/wagtail-sitemap.xml", HTTP_HOST="www.example.com", secure=True)
        theirs = {e.text for e in etree.fromstring(body).iterfind(".//sm:loc", NS)}
        assert locs() == theirs


def test_registered_by_the_app() -> None:
    assert isinstance(registry.get("pages"), PageSection)


def test_outside_a_request_the_queryset_is_lazy_and_still_public(
    tree: Tree, django_assert_num_queries
) -> None:
    """Dependency discovery runs during migrate: building the queryset must
    not query; evaluated (IndexNow), it still leaves private pages out."""
    private = publish(tree.home, ArticlePage(title="Private", slug="private"))
    inner = publish(private, ArticlePage(title="Inner", slug="inner"))
    restrict(private)
    with django_assert_num_queries(0):
        queryset = PageSection().site_queryset(None)
    keys = set(queryset.values_list("pk", flat=True))
    assert tree.home.pk in keys
    assert private.pk not in keys
    assert inner.pk not in keys


def test_every_page_type_restrictions_sites_and_locales_invalidate() -> None:
    from wagtail.models import Locale

    from django_sitemaps_plus.receivers import sections_for

    for model in (Page, HomePage, ArticlePage, EventsPage, PageViewRestriction, Site, Locale):
        assert "pages" in sections_for(model), model


class TestUrlSettings:
    def test_base_url_setting_names_the_host(self, tree: Tree, settings) -> None:
        settings.SITEMAPS_PLUS = {"CACHE": False, "BASE_URL": "https://canonical.example"}
        publish(tree.home, EventsPage(title="Events", slug="events"))
        about = publish(tree.home, ArticlePage(title="About", slug="about"))
        assert about.get_full_url() == full("/about/")
        assert locs() == {
            "https://canonical.example/",
            "https://canonical.example/about/",
            # get_sitemap_urls() gives Wagtail's root URL: moved onto BASE_URL.
            "https://canonical.example/events/",
            "https://canonical.example/events/past/",
        }

    def test_without_append_slash_as_wagtail(self, tree: Tree, monkeypatch) -> None:
        from wagtail.models import pages

        # Wagtail reads the setting once, at import: set where it reads it.
        monkeypatch.setattr(pages, "WAGTAIL_APPEND_SLASH", False)
        about = publish(tree.home, ArticlePage(title="About", slug="about"))
        assert about.get_full_url() == full("/about")
        assert locs() == {full("/"), full("/about")}


def test_build_sitemaps_writes_the_default_sites_files(tree: Tree, tmp_path) -> None:
    about = publish(tree.home, ArticlePage(title="About", slug="about"))
    call_command("build_sitemaps", dir=str(tmp_path), quiet=True)
    index = etree.parse(str(tmp_path / "sitemap.xml"))
    assert [e.text for e in index.iterfind(".//sm:loc", NS)] == [full("/sitemap-pages-1.xml")]
    built = etree.parse(str(tmp_path / "sitemap-pages-1.xml"))
    assert {e.text for e in built.iterfind(".//sm:loc", NS)} == {full("/"), about.get_full_url()}


def test_an_x_default_outside_the_content_languages_fails_e102(registry) -> None:
    from django.core.checks import run_checks

    registry.register(PageSection(x_default="de"))
    errors = [e for e in run_checks() if e.id == "sitemaps_plus.E102"]
    assert len(errors) == 1
    assert "'de'" in errors[0].msg


def test_queries_do_not_grow_with_translated_pages(tree: Tree) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    translate(tree.home, tree.fr)

    def count_queries(pages: int) -> int:
        for i in range(pages):
            page = publish(tree.home, HomePage(title=f"P{i}", slug=f"q-{pages}-{i}"))
            translate(page, tree.fr)
        entries()  # the first request lays the files out and keeps the layout
        with CaptureQueriesContext(connection) as queries:
            listed = entries()
        assert all(len(e["alternates"]) == 2 for e in listed.values())
        return len(queries.captured_queries)

    assert count_queries(2) == count_queries(10)


def test_a_resolver_handing_another_site_object_lists_the_default_site(
    tree: Tree, settings
) -> None:
    settings.SITEMAPS_PLUS = {
        "CACHE": False,
        "SITE_RESOLVER": "django_sitemaps_plus.sites.default_site_context",
    }
    about = publish(tree.home, ArticlePage(title="About", slug="about"))
    # The Sites framework's example.com: Wagtail's default site's pages, on its host.
    assert locs(HTTP_HOST="example.com") == {"https://example.com/", "https://example.com/about/"}
    assert about.pk


def test_alternates_follow_hreflang_not_the_extensions_list(tree: Tree, registry) -> None:
    registry.register(PageSection(extensions=[]))
    home_fr = translate(tree.home, tree.fr)
    assert entries()[home_fr.get_full_url()]["alternates"] == {
        "en": tree.home.get_full_url(),
        "fr": home_fr.get_full_url(),
    }


class TestWarmRequests:
    @pytest.fixture(autouse=True)
    def cached(self, settings):
        settings.SITEMAPS_PLUS = {"CACHE": True}

    def test_a_warm_file_and_index_cost_no_query(self, tree: Tree, django_assert_num_queries):
        publish(tree.home, ArticlePage(title="About", slug="about"))
        cold = entries()
        fetch("/sitemap.xml", HTTP_HOST="www.example.com", secure=True)
        with django_assert_num_queries(0):
            assert entries() == cold
            response, _ = fetch("/sitemap.xml", HTTP_HOST="www.example.com", secure=True)
            assert response.status_code == 200

    def test_a_new_site_for_a_remembered_host_is_seen(self, tree: Tree) -> None:
        other_home = publish(tree.root, HomePage(title="Other", slug="other"))
        # other.example falls back to the default site, and that is remembered...
        assert locs(HTTP_HOST="other.example") == {"https://www.example.com/"}
        # ...until a Site is saved.
        Site.objects.create(hostname="other.example", port=443, root_page=other_home)
        assert locs(HTTP_HOST="other.example") == {"https://other.example/"}

    def test_no_site_is_remembered_too_and_forgotten_on_save(self, tree: Tree) -> None:
        Site.objects.update(is_default_site=False)
        for _ in range(2):
            response, _ = fetch("/sitemap.xml", HTTP_HOST="unknown.example", secure=True)
            assert response.status_code == 404
        tree.site.is_default_site = True
        tree.site.save()
        assert locs(HTTP_HOST="unknown.example") == {full("/")}


def test_lastmod_counts_in_sql_equal_what_the_files_hold(tree: Tree) -> None:
    """The admin overview's counts (one grouped query) against the files."""
    from django_sitemaps_plus.registry import site as sections
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import site_context

    publish(tree.home, ArticlePage(title="About", slug="about"))
    publish(tree.home, ArticlePage(title="News", slug="news"))
    section = sections.get("pages")
    assert section is not None
    site = site_context()
    counts = section.lastmod_counts(site)
    assert counts == Section.lastmod_counts(section, site)
    assert counts.total == 3
