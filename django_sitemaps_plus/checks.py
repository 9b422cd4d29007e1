"""System checks: misconfiguration is reported by ``manage.py check``.

Every problem has a stable id, listed in docs/checks.md. Each setting's check
is its row of ``conf.SETTINGS``; each section's are its ``check()``
(``Section``, ``ModelSection``, ``ContribSection``), and each extension's its
``check(section)``. The functions here register them with Django, with the
checks that span several settings or the cache.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from django_sitemaps_plus.conf import DEFAULTS, SETTINGS, conf
from django_sitemaps_plus.registry import site
from django_sitemaps_plus.sites import app_resolver_path

ID = "sitemaps_plus"


def _setting_errors(tag: str) -> list[CheckMessage]:
    """Each setting of ``tag`` judged by its row of ``conf.SETTINGS``."""
    return [
        error
        for name, setting in SETTINGS.items()
        if setting.tag == tag
        for error in setting.errors(f"SITEMAPS_PLUS[{name!r}]", conf.get(name))
    ]


@register(Tags.compatibility)
def check_settings(app_configs: Sequence[Any] | None = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = _namespace_errors()
    errors.extend(_setting_errors(Tags.compatibility))
    if (
        not conf.get("BASE_URL")
        and not apps.is_installed("django.contrib.sites")
        # a resolver other than the built-in one gives the base URL
        and not (conf.get("SITE_RESOLVER") or app_resolver_path())
    ):
        errors.append(
            Warning(
                "Sitemap URLs will be built from each request's Host header.",
                hint="Set SITEMAPS_PLUS['BASE_URL'] (or use django.contrib.sites) so every "
                "sitemap names one canonical scheme and host.",
                id=f"{ID}.W002",
            )
        )
    return errors


def _namespace_errors() -> list[CheckMessage]:
    """``SITEMAPS_PLUS`` itself: a dict (E017) of known keys (W004).
    The app reads a non-dict as no settings at all, so it still runs on the
    defaults; a misspelt key would otherwise be ignored without a word.
    """
    value = getattr(settings, "SITEMAPS_PLUS", None)
    if value is None:
        return []
    if not isinstance(value, dict):
        return [
            Error(
                f"SITEMAPS_PLUS is a {type(value).__name__}, not a dict; every "
                "django-sitemaps-plus setting falls back to its default.",
                hint='For example SITEMAPS_PLUS = {"BASE_URL": "https://example.com"}.',
                id=f"{ID}.E017",
            )
        ]
    messages: list[CheckMessage] = []
    for key in value:
        if key in DEFAULTS:
            continue
        close = difflib.get_close_matches(str(key).upper(), DEFAULTS, n=1, cutoff=0.6)
        messages.append(
            Warning(
                f"SITEMAPS_PLUS[{key!r}] is not a django-sitemaps-plus setting; it is ignored.",
                hint=(f"Did you mean {close[0]!r}? " if close else "")
                + "The settings are listed in the docs' settings page.",
                id=f"{ID}.W004",
            )
        )
    return messages


@register(Tags.caches)
def check_serving_settings(
    app_configs: Sequence[Any] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """Cached serving, static builds and IndexNow settings (E011-E015, E018-E022, E024, E025):
    their rows of ``conf.SETTINGS`` and the checks across settings."""
    errors: list[CheckMessage] = []
    get = conf.get
    if get("CACHE_ALIAS") not in settings.CACHES:
        if get("CACHE"):
            errors.append(
                Error(
                    f"SITEMAPS_PLUS['CACHE_ALIAS'] = {get('CACHE_ALIAS')!r} is not in CACHES.",
                    hint="Name a cache of settings.CACHES, or set SITEMAPS_PLUS['CACHE'] = False.",
                    id=f"{ID}.E011",
                )
            )
        # With CACHE off the alias still keeps the measured sections' blocks
        # and layouts: without it their files stay sized by the worst case.
        elif measured := _measured_sections():
            errors.append(
                Error(
                    f"SITEMAPS_PLUS['CACHE_ALIAS'] = {get('CACHE_ALIAS')!r} is not in CACHES; "
                    f"sitemap sections {', '.join(map(repr, measured))} keep their measured "
                    "sizes and layout there even with CACHE off; without it no measurement "
                    "is kept, so their files stay sized by the worst case (smaller, more "
                    "files).",
                    hint="Name a cache of settings.CACHES (docs/pagination.md).",
                    id=f"{ID}.E011",
                )
            )
    errors.extend(_setting_errors(Tags.caches))
    if get("BUILD_STORAGE") is None and get("SERVE_BUILT") and not get("BUILD_DIR"):
        errors.append(
            Error(
                "SITEMAPS_PLUS['SERVE_BUILT'] is set but there is no BUILD_STORAGE or "
                "BUILD_DIR to serve from.",
                hint="Set BUILD_STORAGE (an alias of STORAGES) or BUILD_DIR, where "
                "build_sitemaps writes.",
                id=f"{ID}.E019",
            )
        )
    if (
        get("INDEXNOW_KEY")
        and not get("BASE_URL")
        and not apps.is_installed("django.contrib.sites")
    ):
        errors.append(
            Error(
                "SITEMAPS_PLUS['INDEXNOW_KEY'] is set, but URLs queued on a save have no "
                "request to take a host from.",
                hint="Set SITEMAPS_PLUS['BASE_URL'] or install django.contrib.sites.",
                id=f"{ID}.E020",
            )
        )
    return errors


def _measured_sections() -> list[str]:
    """The names of the registered sections whose files are measured (their
    blocks and layout kept in the sitemap cache)."""
    return [s.get_name() for s in site if s.file_sizing() == "measure"]


def _cache_backend() -> str:
    return str(settings.CACHES.get(conf.get("CACHE_ALIAS"), {}).get("BACKEND", ""))


@register(Tags.caches, deploy=True)
def check_cache_is_shared(
    app_configs: Sequence[Any] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """W003 (``check --deploy``): a per-process sitemap cache. Invalidation
    needs a cache every process shares, and so do the blocks measured off
    the request path (``build_sitemaps``, ``measure_sitemaps``)."""
    backend = _cache_backend()
    if not backend.endswith(("LocMemCache", "DummyCache")):
        return []
    cached = bool(conf.get("CACHE"))
    # A DummyCache keeps no measurement at all: W007 says so.
    measured = _measured_sections() if backend.endswith("LocMemCache") else []
    if not cached and not measured:
        return []
    name = backend.rsplit(".", 1)[-1]
    costs = []
    if cached:
        costs.append(
            "a change saved in one process does not invalidate the others (they serve "
            "stale files for up to CACHE_TIMEOUT seconds)"
        )
    if measured:
        costs.append(
            "the blocks that build_sitemaps or measure_sitemaps measure stay in that "
            "command's process, so the web processes size the measured sections' files "
            f"by the worst case ({', '.join(map(repr, measured))}), and may serve a file "
            "from a layout older than the index another process listed"
        )
    return [
        Warning(
            f"The sitemap cache is {name}: each process has its own, so "
            + "; and ".join(costs)
            + ".",
            hint="Use Redis, Memcached or the database cache (or set SITEMAPS_PLUS["
            "'CACHE_ALIAS'] to one) when running several processes: one invalidation "
            "then reaches them all, and one measurement serves them all.",
            id=f"{ID}.W003",
        )
    ]


@register(Tags.caches)
def check_measured_sections_have_a_cache(
    app_configs: Sequence[Any] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """W007: measured sections keep their blocks in a cache that keeps nothing."""
    if not _cache_backend().endswith("DummyCache"):
        return []
    measured = _measured_sections()
    if not measured:
        return []
    return [
        Warning(
            f"Sitemap sections {', '.join(map(repr, measured))} are sized from their "
            "entries' measured bytes, which are kept in the cache: DummyCache keeps "
            "nothing, so their files are always sized by the worst case (smaller, more "
            "files) and every request lays them out again.",
            hint="Use a real cache (Redis, Memcached, the database or local memory) as "
            "SITEMAPS_PLUS['CACHE_ALIAS'], or lower max_loc_length to 154 or less in "
            "sections without extensions so they are sized by count (docs/pagination.md).",
            id=f"{ID}.W007",
        )
    ]


@register(Tags.urls)
def check_contrib_templates(
    app_configs: Sequence[Any] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """W006: a contrib sitemap view given ``template_name`` in the URLconf.
    Contrib renders its sitemaps through a template; this app writes XML
    itself and has no template to honour, so a site migrating would lose its
    customisation without a word.
    """
    from django.contrib.sitemaps import views as contrib_views
    from django.urls import URLPattern, URLResolver, get_resolver

    found: list[CheckMessage] = []
    names = {contrib_views.index: "index", contrib_views.sitemap: "sitemap"}

    def walk(patterns: Any, prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and pattern.callback in names:
                template = pattern.default_args.get("template_name")
                if template:
                    found.append(
                        Warning(
                            f"The URL pattern '{prefix}{pattern.pattern}' passes "
                            f"template_name={template!r} to django.contrib.sitemaps' "
                            f"{names[pattern.callback]} view: django-sitemaps-plus writes its "
                            "sitemaps itself and uses no template, so that customisation "
                            "does not carry over to the files it serves.",
                            hint="Move what the template adds to a Section (changefreq, "
                            "priority, extensions such as Images or Hreflang), then route "
                            "the URL through include('django_sitemaps_plus.urls') "
                            "(docs/migration.md).",
                            id=f"{ID}.W006",
                        )
                    )

    try:
        walk(get_resolver().url_patterns, "")
    except Exception:  # a broken URLconf is reported by Django's own checks
        return []
    return found


#: Backends whose client waits forever on a frozen server unless told not to,
#: and the OPTIONS keys that bound the wait (socket reads, connecting).
_TIMEOUT_OPTIONS: dict[str, tuple[str, str]] = {
    "django.core.cache.backends.redis.RedisCache": ("socket_timeout", "socket_connect_timeout"),
    "django_redis.cache.RedisCache": ("SOCKET_TIMEOUT", "SOCKET_CONNECT_TIMEOUT"),
    "django.core.cache.backends.memcached.PyMemcacheCache": ("timeout", "connect_timeout"),
}


@register(Tags.caches, deploy=True)
def check_cache_timeouts(
    app_configs: Sequence[Any] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """W005 (``check --deploy``): a frozen cache server must not hang requests.
    Without a socket timeout a Redis or Memcached client waits forever for a
    server that stopped answering (paused, swapping, a network partition);
    with one, the request takes the cache-down path and renders the file.
    """
    if not conf.get("CACHE"):
        return []
    alias = conf.get("CACHE_ALIAS")
    config = settings.CACHES.get(alias, {})
    keys = _TIMEOUT_OPTIONS.get(str(config.get("BACKEND", "")))
    if keys is None:
        return []
    options = config.get("OPTIONS") or {}
    missing = [key for key in keys if options.get(key) is None]
    if not missing:
        return []
    return [
        Warning(
            f"CACHES[{alias!r}] (the sitemap cache) sets no {' or '.join(missing)}: a cache "
            "server that stops answering makes every sitemap request wait for it.",
            hint=f"Set OPTIONS {{{', '.join(f'{k!r}: 1' for k in missing)}}} (seconds); a "
            "timeout serves the file rendered without the cache (docs: deployment).",
            id=f"{ID}.W005",
        )
    ]


@register(Tags.compatibility)
def check_sections(app_configs: Sequence[Any] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Each registered section's own checks (``Section.check()``)."""
    return [message for section in site for message in section.check()]
