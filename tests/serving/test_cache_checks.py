"""System checks of the serving settings: one test per id (E011-E015, E018-E022,
E024, E025, W003, W007)."""

from __future__ import annotations

import pytest

from django_sitemaps_plus.checks import check_cache_is_shared, check_serving_settings

BASE = {"BASE_URL": "https://example.com"}


def ids(messages) -> list[str]:
    return [m.id for m in messages]


def test_defaults_are_clean(settings):
    settings.SITEMAPS_PLUS = dict(BASE)
    assert check_serving_settings() == []


def test_e011_unknown_cache_alias(settings):
    settings.SITEMAPS_PLUS = {**BASE, "CACHE_ALIAS": "nosuch"}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E011"]
    settings.SITEMAPS_PLUS = {**BASE, "CACHE_ALIAS": "nosuch", "CACHE": False}
    assert check_serving_settings() == []


def test_e011_unknown_cache_alias_with_the_cache_off_and_measured_sections(settings, registry):
    # Measured sections keep their blocks and layout in CACHE_ALIAS whatever CACHE says.
    from django_sitemaps_plus import ModelSection, register
    from tests.testapp.models import Article

    settings.SITEMAPS_PLUS = {**BASE, "CACHE_ALIAS": "nosuch", "CACHE": False}
    register(ModelSection(Article, name="short", max_loc_length=100))
    assert check_serving_settings() == []  # sized by count: nothing kept
    register(ModelSection(Article, name="measured"))
    (message,) = check_serving_settings()
    assert message.id == "sitemaps_plus.E011"
    assert "'measured'" in message.msg and "'short'" not in message.msg


@pytest.mark.parametrize(
    "override",
    [
        {"CACHE_TIMEOUT": 0},
        {"CACHE_TIMEOUT": "3600"},
        {"CACHE_LOCK_TIMEOUT": None},
        {"CACHE_LOCK_WAIT": -1},
        {"CACHE_BREAKER_SECONDS": -1},
        {"CACHE_BREAKER_SECONDS": None},
        {"CACHE_BREAKER_SECONDS": "5"},
        {"INDEXNOW_TIMEOUT": 0},
        {"INDEXNOW_MAX_ATTEMPTS": 0},
    ],
)
def test_e012_bad_numbers(settings, override):
    settings.SITEMAPS_PLUS = {**BASE, **override}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E012"]


@pytest.mark.parametrize("stale", [-1, None, "300", True])
def test_e024_bad_stale_seconds(settings, stale):
    settings.SITEMAPS_PLUS = {**BASE, "CACHE_STALE_SECONDS": stale}
    (message,) = check_serving_settings()
    assert message.id == "sitemaps_plus.E024"
    assert "CACHE_STALE_SECONDS" in message.msg


@pytest.mark.parametrize("stale", [0, 2.5, 3600])
def test_e024_accepts_zero_and_any_number_of_seconds(settings, stale):
    settings.SITEMAPS_PLUS = {**BASE, "CACHE_STALE_SECONDS": stale}
    assert check_serving_settings() == []


def test_e018_cache_control_not_a_string(settings):
    settings.SITEMAPS_PLUS = {**BASE, "CACHE_CONTROL": 300}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E018"]


@pytest.mark.parametrize("value", [-1, "3600", True, [60]])
def test_e025_bad_reconcile(settings, value):
    settings.SITEMAPS_PLUS = {**BASE, "CACHE_RECONCILE": value}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E025"]


@pytest.mark.parametrize("value", [0, 0.5, 3600, None])
def test_e025_accepts_seconds_or_none(settings, value):
    settings.SITEMAPS_PLUS = {**BASE, "CACHE_RECONCILE": value}
    assert check_serving_settings() == []


def test_e012_accepts_a_breaker_of_zero_seconds(settings):
    settings.SITEMAPS_PLUS = {**BASE, "CACHE_BREAKER_SECONDS": 0}
    assert check_serving_settings() == []


def test_e012_accepts_no_maximum_age(settings):
    settings.SITEMAPS_PLUS = {**BASE, "CACHE_TIMEOUT": None}
    assert check_serving_settings() == []


def test_e013_serve_built_value(settings, tmp_path):
    settings.SITEMAPS_PLUS = {**BASE, "SERVE_BUILT": "yes", "BUILD_DIR": str(tmp_path)}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E013"]


def test_e014_storage_alias(settings):
    settings.SITEMAPS_PLUS = {**BASE, "BUILD_STORAGE": "nosuch"}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E014"]


def test_e019_serve_built_with_nothing_to_serve_from(settings, tmp_path):
    settings.SITEMAPS_PLUS = {**BASE, "SERVE_BUILT": "serve"}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E019"]
    settings.SITEMAPS_PLUS = {**BASE, "SERVE_BUILT": "serve", "BUILD_DIR": str(tmp_path)}
    assert check_serving_settings() == []


@pytest.mark.parametrize("key", ["short", "has space in it", "x" * 129, 12345678])
def test_e015_indexnow_key(settings, key):
    settings.SITEMAPS_PLUS = {**BASE, "INDEXNOW_KEY": key}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E015"]


def test_e020_indexnow_needs_a_host(settings):
    settings.SITEMAPS_PLUS = {"INDEXNOW_KEY": "a1b2c3d4e5f6"}
    settings.INSTALLED_APPS = [a for a in settings.INSTALLED_APPS if a != "django.contrib.sites"]
    assert ids(check_serving_settings()) == ["sitemaps_plus.E020"]


@pytest.mark.parametrize("endpoint", ["ftp://example.com/", "api.indexnow.org", None])
def test_e021_indexnow_endpoint(settings, endpoint):
    settings.SITEMAPS_PLUS = {**BASE, "INDEXNOW_ENDPOINT": endpoint}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E021"]


@pytest.mark.parametrize("size", [0, 10_001, "100", 1.5])
def test_e022_indexnow_batch_size(settings, size):
    settings.SITEMAPS_PLUS = {**BASE, "INDEXNOW_BATCH_SIZE": size}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E022"]


def test_w003_local_memory_cache_on_deploy(settings, registry):
    from django_sitemaps_plus import ModelSection, register
    from tests.testapp.models import Article

    settings.SITEMAPS_PLUS = dict(BASE)
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    register(ModelSection(Article, name="short", max_loc_length=100))  # sized by count
    (message,) = check_cache_is_shared()
    assert message.id == "sitemaps_plus.W003"
    assert "does not invalidate the others" in message.msg
    assert "measure" not in message.msg
    # A measured section: the commands' measurements never reach the web processes.
    register(ModelSection(Article, name="measured"))
    (message,) = check_cache_is_shared()
    assert "does not invalidate the others" in message.msg
    assert "files by the worst case ('measured')" in message.msg
    assert "one measurement serves them all" in message.hint
    # Files rendered per request: the measuring cost alone.
    settings.SITEMAPS_PLUS = {**BASE, "CACHE": False}
    (message,) = check_cache_is_shared()
    assert "invalidate" not in message.msg and "'measured'" in message.msg
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:6379/1",
        }
    }
    assert check_cache_is_shared() == []


def test_w003_dummy_cache_leaves_measuring_to_w007(settings, registry):
    from django_sitemaps_plus import ModelSection, register
    from tests.testapp.models import Article

    settings.SITEMAPS_PLUS = {**BASE, "CACHE": False}
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
    register(ModelSection(Article, name="measured"))
    assert check_cache_is_shared() == []
    settings.SITEMAPS_PLUS = dict(BASE)
    (message,) = check_cache_is_shared()
    assert message.id == "sitemaps_plus.W003" and "measure" not in message.msg


def test_w007_measured_sections_with_a_dummy_cache(settings, registry):
    from django_sitemaps_plus import ModelSection, register
    from django_sitemaps_plus.checks import check_measured_sections_have_a_cache
    from tests.testapp.models import Article

    settings.SITEMAPS_PLUS = dict(BASE)
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
    register(ModelSection(Article, name="short", max_loc_length=100))
    assert check_measured_sections_have_a_cache() == []  # sized by count: nothing kept
    register(ModelSection(Article, name="measured"))
    messages = check_measured_sections_have_a_cache()
    assert ids(messages) == ["sitemaps_plus.W007"]
    assert "'measured'" in messages[0].msg and "'short'" not in messages[0].msg
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    assert check_measured_sections_have_a_cache() == []
