"""System checks: misconfiguration is reported by ``manage.py check``.

Every problem has a stable id, listed in docs/checks.md.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import partial
from itertools import islice
from typing import Any
from urllib.parse import urlsplit

from django.apps import apps
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured
from django.db import DatabaseError, connections, models
from django.urls import NoReverseMatch
from django.utils.module_loading import import_string

from django_sitemaps_plus import indexnow, protocol
from django_sitemaps_plus.conf import DEFAULTS, conf
from django_sitemaps_plus.lastmod import LastmodFieldError, LastmodSpec

ID = "sitemaps_plus"


@register(Tags.compatibility)
def check_settings(app_configs: Sequence[Any] | None = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = _namespace_errors()
    base = conf.BASE_URL
    if base is not None:
        parts = urlsplit(base)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query:
            errors.append(
                Error(
                    f"SITEMAPS_PLUS['BASE_URL'] = {base!r} is not an absolute http(s) URL of a "
                    "site root.",
                    hint="Use a scheme and host only, e.g. 'https://example.com'.",
                    id=f"{ID}.E003",
                )
            )
    elif not apps.is_installed("django.contrib.sites") and not _has_site_resolver():
        errors.append(
            Warning(
                "Sitemap URLs will be built from each request's Host header.",
                hint="Set SITEMAPS_PLUS['BASE_URL'] (or use django.contrib.sites) so every "
                "sitemap names one canonical scheme and host.",
                id=f"{ID}.W002",
            )
        )
    errors.extend(_site_resolver_errors())
    errors.extend(_validation_runner_errors())
    errors.extend(_limit_errors("SITEMAPS_PLUS['LIMIT']", conf.get("LIMIT")))
    errors.extend(_loc_length_errors("SITEMAPS_PLUS['MAX_LOC_LENGTH']", conf.get("MAX_LOC_LENGTH")))
    errors.extend(_html_sitemap_errors())
    return errors


#: A template block name as ``{% block %}`` takes it: one word.
_BLOCK_NAME_RE = re.compile(r"\w+")


def _html_sitemap_errors() -> list[CheckMessage]:
    """The HTML sitemap's page size, base template and block (E023)."""
    errors = _range_errors(
        "SITEMAPS_PLUS['HTML_SITEMAP_PAGE_SIZE']",
        conf.get("HTML_SITEMAP_PAGE_SIZE"),
        1,
        protocol.MAX_URLS_PER_FILE,
        "an HTML sitemap page holds {low:,} to {high:,} links",
        hint="A few hundred links per page keep it readable; the default is 500.",
        id=f"{ID}.E023",
    )
    base = conf.get("HTML_SITEMAP_BASE_TEMPLATE")
    if not isinstance(base, str) or not base:
        errors.append(
            Error(
                f"SITEMAPS_PLUS['HTML_SITEMAP_BASE_TEMPLATE'] = {base!r} is not a template name.",
                hint="The template the HTML sitemap extends, e.g. 'base.html'.",
                id=f"{ID}.E023",
            )
        )
    block = conf.get("HTML_SITEMAP_BLOCK")
    if not isinstance(block, str) or not _BLOCK_NAME_RE.fullmatch(block):
        errors.append(
            Error(
                f"SITEMAPS_PLUS['HTML_SITEMAP_BLOCK'] = {block!r} is not a block name.",
                hint="The block of the base template the HTML sitemap fills, e.g. 'content'.",
                id=f"{ID}.E023",
            )
        )
    return errors


def _namespace_errors() -> list[CheckMessage]:
    """``SITEMAPS_PLUS`` itself: a dict (E017) of known keys (W004).

    The app reads a non-dict as no settings at all, so it still runs on the
    defaults; a misspelt key would otherwise be ignored without a word.
    """
    from django.conf import settings

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


def _has_site_resolver() -> bool:
    """Whether a resolver other than the built-in one gives the base URL."""
    from django_sitemaps_plus.location import app_resolver_path

    return bool(conf.get("SITE_RESOLVER") or app_resolver_path())


def _callable_path_errors(name: str, hint: str, check_id: str) -> list[CheckMessage]:
    """An error when ``SITEMAPS_PLUS[name]`` is set but names no callable."""
    path = conf.get(name)
    if path is None:
        return []
    problem = None
    if not isinstance(path, str) or not path:
        problem = "is not a dotted path"
    else:
        try:
            target = import_string(path)
        except ImportError as exc:
            problem = f"cannot be imported ({exc})"
        else:
            if not callable(target):
                problem = "is not callable"
    if problem is None:
        return []
    return [Error(f"SITEMAPS_PLUS[{name!r}] = {path!r} {problem}.", hint=hint, id=check_id)]


def _site_resolver_errors() -> list[CheckMessage]:
    return _callable_path_errors(
        "SITE_RESOLVER",
        "The dotted path of a callable(request or None) returning a "
        "django_sitemaps_plus.location.SiteContext, or None.",
        f"{ID}.E016",
    )


def _validation_runner_errors() -> list[CheckMessage]:
    return _callable_path_errors(
        "VALIDATION_RUNNER",
        "The dotted path of a callable(run_id) that runs "
        "django_sitemaps_plus.site_validation.run(run_id) in the background, "
        "e.g. a Celery task's delay; or None for a thread of the web process.",
        f"{ID}.E030",
    )


def _is_number(value: Any, *, minimum: float, integer: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if integer and not isinstance(value, int):
        return False
    return value >= minimum


@register(Tags.caches)
def check_serving_settings(
    app_configs: Sequence[Any] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    """Cached serving, static builds and IndexNow settings (E011-E015, E018-E022)."""
    from django.conf import settings

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
    numbers = [
        ("CACHE_TIMEOUT", get("CACHE_TIMEOUT"), 1, True, True),
        ("CACHE_LOCK_TIMEOUT", get("CACHE_LOCK_TIMEOUT"), 1, True, False),
        ("CACHE_LOCK_WAIT", get("CACHE_LOCK_WAIT"), 0, False, False),
        ("CACHE_BREAKER_SECONDS", get("CACHE_BREAKER_SECONDS"), 0, False, False),
        ("INDEXNOW_TIMEOUT", get("INDEXNOW_TIMEOUT"), 0.1, False, False),
        ("INDEXNOW_MAX_ATTEMPTS", get("INDEXNOW_MAX_ATTEMPTS"), 1, True, False),
    ]
    for name, value, minimum, integer, nullable in numbers:
        if nullable and value is None:
            continue
        if not _is_number(value, minimum=minimum, integer=integer):
            kind = "an integer" if integer else "a number"
            errors.append(
                Error(
                    f"SITEMAPS_PLUS[{name!r}] = {value!r} must be {kind} of at least {minimum}"
                    + (" or None." if nullable else "."),
                    id=f"{ID}.E012",
                )
            )
    control = get("CACHE_CONTROL")
    if control is not None and not isinstance(control, str):
        errors.append(
            Error(
                f"SITEMAPS_PLUS['CACHE_CONTROL'] = {control!r} must be a header value or None.",
                hint="For example 'public, max-age=300'.",
                id=f"{ID}.E018",
            )
        )
    serve_built = get("SERVE_BUILT")
    if serve_built not in (None, "serve", "redirect"):
        errors.append(
            Error(
                f"SITEMAPS_PLUS['SERVE_BUILT'] = {serve_built!r} is not None, 'serve' or "
                "'redirect'.",
                id=f"{ID}.E013",
            )
        )
    storage = get("BUILD_STORAGE")
    if storage is not None and storage not in getattr(settings, "STORAGES", {}):
        errors.append(
            Error(
                f"SITEMAPS_PLUS['BUILD_STORAGE'] = {storage!r} is not an alias of STORAGES.",
                hint="Add it to settings.STORAGES, or leave it None to use BUILD_DIR.",
                id=f"{ID}.E014",
            )
        )
    elif storage is None and serve_built and not get("BUILD_DIR"):
        errors.append(
            Error(
                "SITEMAPS_PLUS['SERVE_BUILT'] is set but there is no BUILD_STORAGE or "
                "BUILD_DIR to serve from.",
                hint="Set BUILD_STORAGE (an alias of STORAGES) or BUILD_DIR, where "
                "build_sitemaps writes.",
                id=f"{ID}.E019",
            )
        )
    key = get("INDEXNOW_KEY")
    if key and not (isinstance(key, str) and indexnow.KEY_RE.fullmatch(key)):
        errors.append(
            Error(
                "SITEMAPS_PLUS['INDEXNOW_KEY'] must be 8 to 128 characters of a-z, A-Z, 0-9 "
                "and '-'.",
                hint="IndexNow protocol: https://www.indexnow.org/documentation",
                id=f"{ID}.E015",
            )
        )
    if key and not get("BASE_URL") and not apps.is_installed("django.contrib.sites"):
        errors.append(
            Error(
                "SITEMAPS_PLUS['INDEXNOW_KEY'] is set, but URLs queued on a save have no "
                "request to take a host from.",
                hint="Set SITEMAPS_PLUS['BASE_URL'] or install django.contrib.sites.",
                id=f"{ID}.E020",
            )
        )
    endpoint = get("INDEXNOW_ENDPOINT")
    parts = urlsplit(endpoint) if isinstance(endpoint, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        errors.append(
            Error(
                f"SITEMAPS_PLUS['INDEXNOW_ENDPOINT'] = {endpoint!r} is not an http(s) URL.",
                hint="The default, 'https://api.indexnow.org/indexnow', shares submissions "
                "with every participating engine.",
                id=f"{ID}.E021",
            )
        )
    batch = get("INDEXNOW_BATCH_SIZE")
    if not (_is_number(batch, minimum=1, integer=True) and batch <= 10_000):
        errors.append(
            Error(
                f"SITEMAPS_PLUS['INDEXNOW_BATCH_SIZE'] = {batch!r} is not 1 to 10,000.",
                hint="IndexNow accepts at most 10,000 URLs per submission.",
                id=f"{ID}.E022",
            )
        )
    return errors


def _measured_sections() -> list[str]:
    """The names of the registered sections whose files are measured (their
    blocks and layout kept in the sitemap cache)."""
    from django_sitemaps_plus.registry import site

    return [s.get_name() for s in site if s.file_sizing() == "measure"]


def _cache_backend() -> str:
    from django.conf import settings

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
    from django.conf import settings

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


def _range_errors(
    where: str, value: Any, low: int, high: int, problem: str, hint: str, id: str
) -> list[CheckMessage]:
    """An error unless ``value`` is an integer (not a bool) from ``low`` to ``high``."""
    if _is_number(value, minimum=low, integer=True) and value <= high:
        return []
    return [Error(f"{where} = {value!r}: {problem.format(low=low, high=high)}.", hint=hint, id=id)]


def _limit_errors(where: str, limit: Any) -> list[CheckMessage]:
    return _range_errors(
        where,
        limit,
        1,
        protocol.MAX_URLS_PER_FILE,
        "a sitemap file holds {low:,} to {high:,} URLs",
        hint="sitemaps.org/protocol.html#index: at most 50,000 URLs per file.",
        id=f"{ID}.E004",
    )


def _loc_length_errors(where: str, length: Any) -> list[CheckMessage]:
    return _range_errors(
        where,
        length,
        protocol.XSD_MIN_LOC_LENGTH,
        protocol.MAX_LOC_LENGTH,
        "must be {low:,} to {high:,} characters",
        hint="sitemaps.org: a URL must be less than 2,048 characters.",
        id=f"{ID}.E009",
    )


@register(Tags.compatibility)
def check_sections(app_configs: Sequence[Any] | None = None, **kwargs: Any) -> list[CheckMessage]:
    from django_sitemaps_plus.contrib.django_sitemaps import ContribSection
    from django_sitemaps_plus.names import SECTION_NAME_RE
    from django_sitemaps_plus.registry import site
    from django_sitemaps_plus.sections import ModelSection, call_with_site

    errors: list[CheckMessage] = []
    for section in site:
        name = section.get_name()
        label = f"Sitemap section {name!r}"
        if not SECTION_NAME_RE.fullmatch(name):
            errors.append(
                Error(
                    f"{label}: the name must be a lowercase slug (it is used in file names).",
                    hint="Set name = 'articles' (letters, digits, '-' and '_').",
                    obj=section,
                    id=f"{ID}.E005",
                )
            )
        if section.limit is not None:
            errors.extend(_limit_errors(f"{label}: limit", section.limit))
        if section.max_loc_length is not None:
            errors.extend(_loc_length_errors(f"{label}: max_loc_length", section.max_loc_length))
        if section.changefreq is not None and section.changefreq not in protocol.CHANGEFREQ_VALUES:
            errors.append(
                Error(
                    f"{label}: changefreq {section.changefreq!r} is not a protocol value.",
                    hint="One of: " + ", ".join(sorted(protocol.CHANGEFREQ_VALUES)) + ".",
                    obj=section,
                    id=f"{ID}.E008",
                )
            )
        if section.priority is not None and not (
            protocol.MIN_PRIORITY <= float(section.priority) <= protocol.MAX_PRIORITY
        ):
            errors.append(
                Error(
                    f"{label}: priority {section.priority!r} is outside 0.0 to 1.0.",
                    obj=section,
                    id=f"{ID}.E008",
                )
            )
        # Each extension checks its own configuration (ids E101-E139).
        for extension in section.extensions:
            errors.extend(extension.check(section))
        if isinstance(section, ModelSection):
            errors.extend(_model_section_errors(section, label))
        elif isinstance(section, ContribSection):
            errors.extend(_unordered_warning(label, section.sitemap.items))
            sitemap = section.sitemap
            # Contrib's own calls: (item, language) pairs when i18n is on.
            items = getattr(sitemap, "_items", sitemap.items)
            locate = getattr(sitemap, "_location", sitemap.location)
            errors.extend(_location_warning(label, items, locate))
        else:
            items = partial(call_with_site, section.items, None)
            errors.extend(_unordered_warning(label, items))
            errors.extend(_location_warning(label, items, section.location))
    return errors


class _QueryRefused(Exception):
    """Raised by the execute wrapper of ``_items_without_queries``."""


def _refuse_query(*args: Any) -> Any:
    raise _QueryRefused


def _items_without_queries(items: Callable[[], Any]) -> Any:
    """``items()``, or None when it runs a query (or fails).

    System checks run before ``migrate`` (the tables may not exist yet) and
    must not query: an ``items()`` that returns a lazy queryset is inspected;
    one that queries (``list(...)``, a count) is not, and its query is refused
    before it reaches the database.
    """
    with _queries_refused():
        try:
            return items()
        except (_QueryRefused, DatabaseError):
            return None


@contextmanager
def _queries_refused() -> Iterator[None]:
    """Every query on every connection raises ``_QueryRefused`` in the block."""
    with ExitStack() as stack:
        for connection in connections.all():
            stack.enter_context(connection.execute_wrapper(_refuse_query))
        yield


#: Items whose ``location()`` W008 tries: the first of ``items()``.
LOCATION_SAMPLE = 10


def _location_warning(
    label: str, items_method: Callable[[], Any], locate: Callable[[Any], Any]
) -> list[CheckMessage]:
    """W008: ``location()`` raised for every item of a sample (the first
    ``LOCATION_SAMPLE`` of ``items()``), so the section's files would list
    no URL: the index leaves them out (``Section.listed_pages``), and the
    site owner should know. Only items that come without a query (a list of
    URL names or paths) are sampled; a location that queries is not judged."""
    failures: list[str] = []
    with _queries_refused():
        try:
            items = items_method()
            if isinstance(items, models.QuerySet):
                return []
            sample = list(islice(items, LOCATION_SAMPLE))
            for item in sample:
                try:
                    locate(item)
                except (_QueryRefused, DatabaseError):
                    return []
                except Exception as exc:
                    failures.append(f"{item!r} ({type(exc).__name__}: {exc})")
                else:
                    return []
        except Exception:  # items() queried or failed: not this check's to judge
            return []
    if not failures:
        return []
    shown = "; ".join(failures[:3]) + ("; ..." if len(failures) > 3 else "")
    return [
        Warning(
            f"{label}: location() failed for each of the first {len(failures)} items "
            f"of items(): {shown}. Its files would list no URL, so the index leaves "
            "them out (and an error is logged when it does).",
            hint="Fix location() or get_absolute_url(), or the URL names items() lists: "
            "each must be a URL name of this project's URLconf (or a path).",
            id=f"{ID}.W008",
        )
    ]


def _unordered_warning(label: str, items_method: Callable[[], Any]) -> list[CheckMessage]:
    items = _items_without_queries(items_method)
    if isinstance(items, models.QuerySet) and not items.ordered:
        return [
            Warning(
                f"{label}: items() returns an unordered queryset, so its pages may overlap "
                "or skip rows between requests.",
                hint="Add .order_by('pk') (or another unique ordering) to items().",
                id=f"{ID}.W001",
            )
        ]
    return []


def _model_section_errors(section: Any, label: str) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    model = section.get_model()
    try:
        LastmodSpec(model, section.lastmod_fields, section.lastmod_fallbacks)
    except LastmodFieldError as exc:
        errors.append(
            Error(
                f"{label}: {exc}.",
                hint="lastmod_fields names DateField/DateTimeField paths, e.g. "
                "'updated_at' or 'comments__created_at'; lastmod_fallbacks maps one of "
                "them (an own field) to own fields of the same kind.",
                obj=section,
                id=f"{ID}.E001",
            )
        )
    try:
        section._check_integer_pk()
    except ImproperlyConfigured as exc:
        errors.append(
            Error(
                str(exc),
                hint="Register a Section (or a contrib Sitemap) for this model instead.",
                obj=section,
                id=f"{ID}.E006",
            )
        )
    from django_sitemaps_plus.sections import ModelSection

    overrides_location = type(section).location is not ModelSection.location
    if section.url_name:
        errors.extend(_url_name_errors(section, label, model))
    elif not overrides_location and not hasattr(model, "get_absolute_url"):
        errors.append(
            Error(
                f"{label}: {model._meta.label} has no get_absolute_url() and the section "
                "defines neither location() nor url_name.",
                hint="Add get_absolute_url() to the model, or set url_name and url_kwargs.",
                obj=section,
                id=f"{ID}.E002",
            )
        )
    return errors


def _url_name_errors(section: Any, label: str, model: type[models.Model]) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    for kwarg, field in section.url_kwargs.items():
        try:
            model._meta.get_field(field)
        except FieldDoesNotExist:
            errors.append(
                Error(
                    f"{label}: url_kwargs[{kwarg!r}] names {field!r}, which is not a field "
                    f"of {model._meta.label}.",
                    obj=section,
                    id=f"{ID}.E007",
                )
            )
    if errors:
        return errors
    try:
        template = section.location_template()
        if not template.fast:
            # No probe value reversed: the name may not exist at all.
            from django.urls import reverse

            try:
                reverse(section.url_name, kwargs=dict.fromkeys(section.url_kwargs, "1"))
            except NoReverseMatch as missing:
                if "not found" in str(missing):
                    raise
    except NoReverseMatch as exc:
        errors.append(
            Error(
                f"{label}: url_name {section.url_name!r} does not reverse with kwargs "
                f"{sorted(section.url_kwargs)}: {exc}",
                obj=section,
                id=f"{ID}.E007",
            )
        )
    return errors
