"""One test per system check id (see docs/checks.md)."""

from __future__ import annotations

import pytest
from django.contrib.sitemaps import Sitemap
from django.core.checks import run_checks
from django.test import override_settings
from django.test.utils import isolate_apps

from django_sitemaps_plus import ModelSection, Section, register
from tests.testapp.models import Article, Event, NoUrl, UuidThing


def ids() -> list[str]:
    return sorted(m.id for m in run_checks() if m.id and m.id.startswith("sitemaps_plus."))


def test_a_correct_configuration_has_no_messages(registry):
    register(Article, lastmod_fields=["updated_at", "comments__created_at"])
    register(Article, name="fast", url_name="article", url_kwargs={"slug": "slug"})
    assert ids() == []


@pytest.mark.parametrize(
    "fields",
    [["nope"], ["title"], ["comments"], ["comments__nope"], ["title__x"], ["author__name"]],
)
def test_e001_unknown_or_non_date_lastmod_field(registry, fields):
    register(Article, lastmod_fields=fields)
    assert ids() == ["sitemaps_plus.E001"]


@pytest.mark.parametrize(
    "fallbacks",
    [
        {"updated_at": ["nope"]},
        {"updated_at": ["published_on"]},  # a date standing in for a datetime
        {"updated_at": ["author__joined"]},  # not an own field
        {"content_changed_at": ["updated_at"]},  # not in lastmod_fields
    ],
)
def test_e001_bad_lastmod_fallbacks(registry, fallbacks):
    register(Article, lastmod_fields=["updated_at"], lastmod_fallbacks=fallbacks)
    assert ids() == ["sitemaps_plus.E001"]


def test_e001_not_raised_for_good_lastmod_fallbacks(registry):
    register(
        Article,
        lastmod_fields=["updated_at"],
        lastmod_fallbacks={"updated_at": ["content_changed_at"]},
    )
    assert ids() == []


def test_e002_no_get_absolute_url_nor_location(registry):
    register(NoUrl)
    assert ids() == ["sitemaps_plus.E002"]


def test_e002_not_raised_when_location_is_defined(registry):
    @register(NoUrl)
    class NoUrlSection(ModelSection):
        def location(self, obj):
            return f"/n/{obj.pk}/"

    assert ids() == []


@pytest.mark.parametrize("base", ["example.com", "ftp://example.com", "https://example.com/blog"])
def test_e003_base_url_not_absolute_site_root(base):
    with override_settings(SITEMAPS_PLUS={"BASE_URL": base}):
        assert "sitemaps_plus.E003" in ids()


@pytest.mark.parametrize("limit", [0, 50_001, "many", True, 2.0])
def test_e004_limit_out_of_range(registry, limit):
    with override_settings(SITEMAPS_PLUS={"BASE_URL": "https://example.com", "LIMIT": limit}):
        assert ids() == ["sitemaps_plus.E004"]


@pytest.mark.parametrize("limit", [60_000, True])
def test_e004_section_limit(registry, limit):
    register(Article, limit=limit)
    assert ids() == ["sitemaps_plus.E004"]


def test_e005_section_name_not_a_slug(registry):
    register(Article, name="My Articles")
    assert ids() == ["sitemaps_plus.E005"]


def test_e006_non_integer_primary_key(registry):
    register(UuidThing)
    assert ids() == ["sitemaps_plus.E006"]
    [message] = [m for m in run_checks() if m.id == "sitemaps_plus.E006"]
    assert "needs an integer primary key" in message.msg and "UUIDField" in message.msg


def test_e007_url_name_that_does_not_reverse(registry):
    register(Article, url_name="no-such-url", url_kwargs={"slug": "slug"})
    assert ids() == ["sitemaps_plus.E007"]


def test_e007_url_kwargs_naming_a_missing_field(registry):
    register(Article, url_name="article", url_kwargs={"slug": "no_field"})
    assert ids() == ["sitemaps_plus.E007"]


@pytest.mark.parametrize(("option", "value"), [("changefreq", "sometimes"), ("priority", 1.5)])
def test_e008_changefreq_or_priority_invalid(registry, option, value):
    register(Event, **{option: value})
    assert ids() == ["sitemaps_plus.E008"]


@pytest.mark.parametrize("length", [5, 11, 4_000, True])
def test_e009_max_loc_length_out_of_range(registry, length):
    register(Event, max_loc_length=length)
    assert ids() == ["sitemaps_plus.E009"]


@isolate_apps("tests.testapp")
def test_e010_content_changed_field_without_or_with_unknown_tracked_fields():
    from django.db import models

    from django_sitemaps_plus.fields import ContentChangedField

    class Broken(models.Model):
        title = models.CharField(max_length=10)
        untracked = ContentChangedField()
        unknown = ContentChangedField(tracked_fields=["nope"])

        class Meta:
            app_label = "testapp"

    messages = [m.id for m in Broken.check()]
    assert messages.count("sitemaps_plus.E010") == 2


def test_w001_unordered_queryset_in_a_plain_or_contrib_section(registry):
    class Unordered(Section):
        def items(self):
            return Event.objects.all()

    class UnorderedContribSitemap(Sitemap):
        def items(self):
            return Event.objects.all()

    register(Unordered)
    register(UnorderedContribSitemap)
    assert ids() == ["sitemaps_plus.W001", "sitemaps_plus.W001"]


@pytest.mark.django_db
def test_checks_never_query_items_so_they_run_before_migrate(registry):
    from django.core.management import call_command
    from django.db import DatabaseError, connection

    def query_a_missing_table():
        with connection.cursor() as cursor:
            cursor.execute("SELECT id FROM sitemaps_plus_not_migrated_yet")
            return [row[0] for row in cursor.fetchall()]

    class NotMigrated(Section):
        def items(self):
            return query_a_missing_table()

    class NotMigratedSitemap(Sitemap):
        def items(self):
            return list(Event.objects.raw("SELECT * FROM sitemaps_plus_not_migrated_yet"))

    register(NotMigrated)
    register(NotMigratedSitemap, name="not-migrated-contrib")
    executed: list[str] = []

    def record(execute, sql, params, many, context):
        # Outermost wrapper: sees a query the checks' wrapper refuses too.
        try:
            result = execute(sql, params, many, context)
        except DatabaseError:
            executed.append(sql)  # it reached the database
            raise
        executed.append(sql)
        return result

    with connection.execute_wrapper(record):
        call_command("check")  # raised OperationalError from items()
    assert executed == []
    assert ids() == []


@pytest.mark.parametrize(
    ("hook", "flag"),
    [
        ("get_changefreq", "varies_per_item"),
        ("get_priority", "varies_per_item"),
        ("lastmod", "has_lastmod"),
        ("index_pages", "defines_own_pages"),
        ("page_entries", "writes_own_entries"),
        ("page_info", "defines_own_page_info"),
    ],
)
def test_w009_a_hook_overridden_without_its_flag(registry, hook, flag):
    def override(self, *args):
        return getattr(Section, hook)(self, *args)

    class Pages(Section):
        def items(self):
            return ["/a/"]

    Overriding = type("Overriding", (Pages,), {hook: override, "name": "overriding"})
    register(Overriding)
    [message] = [m for m in run_checks() if m.id == "sitemaps_plus.W009"]
    assert f"Overriding defines {hook}() but leaves {flag} False" in message.msg
    # Declared either way, no warning: the class said what it does.
    for value in (True, False):
        registry.unregister("overriding")
        register(type("Declared", (Overriding,), {flag: value}))
        assert "sitemaps_plus.W009" not in ids()


def test_w009_a_hook_given_as_an_option_without_its_flag(registry):
    class Pages(Section):
        def items(self):
            return ["/a/"]

    register(Pages, get_priority=lambda item: 0.3)
    assert ids() == ["sitemaps_plus.W009"]
    registry.unregister("pages")
    register(Pages, get_priority=lambda item: 0.3, varies_per_item=True)
    assert ids() == []


def test_w009_an_extension_defining_versions_without_gives_versions(registry):
    from django_sitemaps_plus.extensions.base import Extension

    class Twice(Extension):
        prefix = "x"
        namespace = "urn:x"

        def versions(self, section, item, data, site, locate):
            return None

    class Pages(Section):
        def items(self):
            return ["/a/"]

    register(Pages, extensions=[Twice()])
    [message] = [m for m in run_checks() if m.id == "sitemaps_plus.W009"]
    assert "extension" in message.msg and "gives_versions" in message.msg


def test_w009_not_raised_for_the_package_s_own_sections(registry):
    from django_sitemaps_plus.sections import NewsSection

    register(Article, name="model")
    register(NewsSection(Article, publication_name="Example", date_field="updated_at"))
    register(type("Pages", (Sitemap,), {"items": lambda self: ["/a/"], "location": str}))
    assert "sitemaps_plus.W009" not in ids()


def test_a_section_s_own_check_is_asked_by_manage_py_check(registry):
    from django.core.checks import Warning

    class Shop(ModelSection):
        def check(self):
            return [*super().check(), Warning("Checked.", id="shop.W001")]

    register(Article)(Shop)
    register(NoUrl)
    messages = [
        m.id for m in run_checks() if m.id and m.id.split(".")[0] in ("shop", "sitemaps_plus")
    ]
    assert sorted(messages) == ["shop.W001", "sitemaps_plus.E002"]


@override_settings(
    SITEMAPS_PLUS={},
    INSTALLED_APPS=[
        "django.contrib.contenttypes",
        "django.contrib.auth",
        "django_sitemaps_plus",
        "tests.testapp",
    ],
)
def test_w002_urls_from_the_host_header():
    assert "sitemaps_plus.W002" in ids()


@pytest.mark.parametrize("value", [["BASE_URL", "https://example.com"], "https://example.com", 1])
def test_e017_settings_not_a_dict(registry, settings, value):
    settings.SITEMAPS_PLUS = value
    (message,) = [m for m in run_checks() if m.id == "sitemaps_plus.E017"]
    assert type(value).__name__ in message.msg
    assert "sitemaps_plus.E017" in ids()


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [("CACHE_TIMOUT", "CACHE_TIMEOUT"), ("base_url", "BASE_URL"), ("LIMITS", "LIMIT")],
)
def test_w004_unknown_key_names_the_closest(registry, settings, key, suggestion):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", key: 5}
    (message,) = [m for m in run_checks() if m.id == "sitemaps_plus.W004"]
    assert repr(key) in message.msg
    assert message.hint is not None and repr(suggestion) in message.hint


def test_w004_unknown_key_without_a_close_one(registry, settings):
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "ZZZ": 1}
    (message,) = [m for m in run_checks() if m.id == "sitemaps_plus.W004"]
    assert "Did you mean" not in (message.hint or "")


def test_every_setting_is_known_and_documented(registry, settings):
    from pathlib import Path

    from django_sitemaps_plus.conf import DEFAULTS

    documented = (Path(__file__).parents[2] / "docs" / "settings.md").read_text()
    assert [key for key in DEFAULTS if f"| `{key}` |" not in documented] == []
    settings.SITEMAPS_PLUS = dict(DEFAULTS)
    assert "sitemaps_plus.W004" not in ids()
