"""System checks of the serving settings: one test per id (E011-E015, W003)."""

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


@pytest.mark.parametrize(
    "override",
    [
        {"CACHE_TIMEOUT": 0},
        {"CACHE_TIMEOUT": "3600"},
        {"CACHE_LOCK_TIMEOUT": None},
        {"CACHE_LOCK_WAIT": -1},
        {"CACHE_CONTROL": 300},
        {"INDEXNOW_TIMEOUT": 0},
        {"INDEXNOW_MAX_ATTEMPTS": 0},
    ],
)
def test_e012_bad_numbers(settings, override):
    settings.SITEMAPS_PLUS = {**BASE, **override}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E012"]


def test_e012_accepts_no_maximum_age(settings):
    settings.SITEMAPS_PLUS = {**BASE, "CACHE_TIMEOUT": None}
    assert check_serving_settings() == []


def test_e013_serve_built_value(settings, tmp_path):
    settings.SITEMAPS_PLUS = {**BASE, "SERVE_BUILT": "yes", "BUILD_DIR": str(tmp_path)}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E013"]


def test_e014_storage(settings):
    settings.SITEMAPS_PLUS = {**BASE, "BUILD_STORAGE": "nosuch"}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E014"]
    settings.SITEMAPS_PLUS = {**BASE, "SERVE_BUILT": "serve"}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E014"]


@pytest.mark.parametrize(
    "override",
    [
        {"INDEXNOW_KEY": "short"},
        {"INDEXNOW_KEY": "has space in it"},
        {"INDEXNOW_ENDPOINT": "ftp://example.com/"},
        {"INDEXNOW_BATCH_SIZE": 10_001},
    ],
)
def test_e015_indexnow(settings, override):
    settings.SITEMAPS_PLUS = {**BASE, **override}
    assert ids(check_serving_settings()) == ["sitemaps_plus.E015"]


def test_e015_indexnow_needs_a_host(settings):
    settings.SITEMAPS_PLUS = {"INDEXNOW_KEY": "a1b2c3d4e5f6"}
    settings.INSTALLED_APPS = [a for a in settings.INSTALLED_APPS if a != "django.contrib.sites"]
    assert ids(check_serving_settings()) == ["sitemaps_plus.E015"]


def test_w003_local_memory_cache_on_deploy(settings):
    settings.SITEMAPS_PLUS = dict(BASE)
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    assert ids(check_cache_is_shared()) == ["sitemaps_plus.W003"]
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:6379/1",
        }
    }
    assert check_cache_is_shared() == []
