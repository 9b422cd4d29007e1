"""Typed access to the ``SITEMAPS_PLUS`` setting, and each setting's check.

Every setting is read live from ``django.conf.settings`` on each access, so
``override_settings`` in tests just works. Each setting is one row of
``Settings``: its default, the type it is read as, and how ``manage.py check``
judges a value (the registered checks of ``checks.py`` walk ``SETTINGS``).
Adding a setting: a row here and a row in docs/settings.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.core.checks import CheckMessage, Error, Tags
from django.utils.module_loading import import_string

from django_sitemaps_plus import protocol

T = TypeVar("T")

#: The problem with a setting's value (the text a message is made from), or
#: None when the value is fine.
Validator = Callable[[Any], "str | None"]


class Setting(Generic[T]):
    """One setting: its default, the type it is read as (``read``), and how
    a value is checked.

    ``validate`` says what is wrong with a value; it is reported as
    ``check_id``, with ``message`` (``{where}``, ``{value!r}`` and
    ``{problem}`` filled in) and ``hint``, by the registered check of ``tag``:
    ``check_settings`` (``Tags.compatibility``) or ``check_serving_settings``
    (``Tags.caches``). On ``conf`` it reads as ``read(value)``.
    """

    def __init__(
        self,
        default: Any,
        read: Callable[[Any], T],
        validate: Validator | None = None,
        check_id: str = "",
        message: str = "{where} = {value!r} {problem}.",
        *,
        hint: str | None = None,
        tag: str = Tags.compatibility,
    ) -> None:
        self.default, self.read, self.validate = default, read, validate
        self.check_id, self.message, self.hint, self.tag = check_id, message, hint, tag
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type) -> Setting[T]: ...
    @overload
    def __get__(self, instance: Settings, owner: type) -> T: ...
    def __get__(self, instance: Settings | None, owner: type) -> Setting[T] | T:
        if instance is None:
            return self
        return self.read(instance.get(self.name))

    def errors(self, where: str, value: Any) -> list[CheckMessage]:
        """The error for ``value`` (of the setting, or of a section option
        judged by the same rule), named ``where`` in the message; or none."""
        problem = None if self.validate is None else self.validate(value)
        if problem is None:
            return []
        message = self.message.format(where=where, value=value, problem=problem)
        return [Error(message, hint=self.hint, id=self.check_id)]


def _is_number(value: Any, *, minimum: float, integer: bool = False) -> bool:
    """Whether ``value`` is a number (an integer when ``integer``; never a
    bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if integer and not isinstance(value, int):
        return False
    return value >= minimum


def _at_least(minimum: float, *, integer: bool = False, nullable: bool = False) -> Validator:
    kind = "an integer" if integer else "a number"
    problem = f"must be {kind} of at least {minimum}" + (" or None" if nullable else "")

    def validate(value: Any) -> str | None:
        if (nullable and value is None) or _is_number(value, minimum=minimum, integer=integer):
            return None
        return problem

    return validate


def _integers(low: int, high: int, problem: str) -> Validator:
    """An integer (not a bool) from ``low`` to ``high``; ``problem`` may name them."""
    text = problem.format(low=low, high=high)
    return lambda value: (
        None if _is_number(value, minimum=low, integer=True) and value <= high else text
    )


def _site_root(value: Any) -> str | None:
    if not value:
        return None  # the Sites framework or the request (W002)
    base = str(value).rstrip("/")
    parts = urlsplit(base)
    if parts.scheme in ("http", "https") and parts.netloc and not parts.path and not parts.query:
        return None
    return f"{base!r} is not an absolute http(s) URL of a site root"


def _http_url(value: Any) -> str | None:
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is not None and parts.scheme in ("http", "https") and parts.netloc:
        return None
    return "is not an http(s) URL"


def _dotted_callable(value: Any) -> str | None:
    """None, or the dotted path of a callable."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        return "is not a dotted path"
    try:
        target = import_string(value)
    except ImportError as exc:
        return f"cannot be imported ({exc})"
    return None if callable(target) else "is not callable"


def _storage_alias(value: Any) -> str | None:
    if value is None or value in getattr(settings, "STORAGES", {}):
        return None
    return "is not an alias of STORAGES"


def _indexnow_key(value: Any) -> str | None:
    if not value or (isinstance(value, str) and protocol.INDEXNOW_KEY_RE.fullmatch(value)):
        return None
    return ""  # the message does not repeat a secret


def _optional(read: Callable[[Any], T]) -> Callable[[Any], T | None]:
    """None stays None; any other value is ``read``."""
    return lambda value: None if value is None else read(value)


def _name_or_none(value: Any) -> str | None:
    """A name, or None for an empty value."""
    return str(value) if value else None


def _base_url(value: Any) -> str | None:
    return str(value).rstrip("/") if value else None


#: A template block name as ``{% block %}`` takes it: one word.
_BLOCK_NAME_RE = re.compile(r"\w+")

_RANGE = "{where} = {value!r}: {problem}."


def _user_settings() -> dict[str, Any]:
    value = getattr(settings, "SITEMAPS_PLUS", None) or {}
    return value if isinstance(value, dict) else {}


class Settings:
    """The app's settings, a row each; attribute names match the keys of
    ``SITEMAPS_PLUS``, and ``conf.NAME`` reads the setting as its row says."""

    def get(self, name: str) -> Any:
        return _user_settings().get(name, DEFAULTS[name])

    # Scheme and host of every URL, e.g. "https://example.com". None: the Sites
    # framework when installed, else the request's own scheme and host.
    BASE_URL = Setting(
        None,
        _base_url,
        _site_root,
        "sitemaps_plus.E003",
        "{where} = {problem}.",
        hint="Use a scheme and host only, e.g. 'https://example.com'.",
    )
    # Dotted path to a callable(request or None) -> sites.SiteContext: the
    # base URL and site object of each request. None: the one an installed
    # integration names (the Wagtail app's), else BASE_URL, the Sites
    # framework, then the request (docs/sites.md).
    SITE_RESOLVER = Setting(
        None,
        _name_or_none,
        _dotted_callable,
        "sitemaps_plus.E016",
        hint="The dotted path of a callable(request or None) returning a "
        "django_sitemaps_plus.sites.SiteContext, or None.",
    )
    # Scheme used with the Sites framework (which stores no scheme).
    PROTOCOL = Setting("https", str)
    # URLs per sitemap file; the protocol allows at most 50,000.
    LIMIT = Setting(
        protocol.MAX_URLS_PER_FILE,
        int,
        _integers(1, protocol.MAX_URLS_PER_FILE, "a sitemap file holds {low:,} to {high:,} URLs"),
        "sitemaps_plus.E004",
        _RANGE,
        hint="sitemaps.org/protocol.html#index: at most 50,000 URLs per file.",
    )
    # Longest location a section lists (longer ones are refused); at 154 or
    # less a section without extensions is sized by count (docs/pagination).
    MAX_LOC_LENGTH = Setting(
        protocol.MAX_LOC_LENGTH,
        int,
        _integers(
            protocol.XSD_MIN_LOC_LENGTH,
            protocol.MAX_LOC_LENGTH,
            "must be {low:,} to {high:,} characters",
        ),
        "sitemaps_plus.E009",
        _RANGE,
        hint="sitemaps.org: a URL must be less than 2,048 characters.",
    )
    # Value of the X-Robots-Tag header on every sitemap response.
    X_ROBOTS_TAG = Setting("noindex, noodp, noarchive", str)
    # Serve /robots.txt with a Sitemap: line (for sites without their own).
    ROBOTS_TXT = Setting(False, bool)
    # Name the XSL stylesheet (/sitemap.xsl) in every XML file, so a browser
    # shows it as a table; search engines ignore the instruction. Off: browsers
    # are removing XSLT (docs/styled.md); the admin's tables need none.
    STYLESHEET = Setting(False, bool)
    # Import each installed app's ``sitemaps`` module in AppConfig.ready().
    AUTODISCOVER = Setting(True, bool)
    # The HTML sitemap for visitors (docs/html-sitemap.md) ---------------------
    # Links per page of a section's HTML sitemap (1 to 50,000).
    HTML_SITEMAP_PAGE_SIZE = Setting(
        500,
        int,
        _integers(
            1, protocol.MAX_URLS_PER_FILE, "an HTML sitemap page holds {low:,} to {high:,} links"
        ),
        "sitemaps_plus.E023",
        _RANGE,
        hint="A few hundred links per page keep it readable; the default is 500.",
    )
    # The project's template the HTML sitemap's pages extend.
    HTML_SITEMAP_BASE_TEMPLATE = Setting(
        "base.html",
        str,
        lambda value: None if isinstance(value, str) and value else "is not a template name",
        "sitemaps_plus.E023",
        hint="The template the HTML sitemap extends, e.g. 'base.html'.",
    )
    # The block of that template the HTML sitemap fills.
    HTML_SITEMAP_BLOCK = Setting(
        "content",
        str,
        lambda value: (
            None
            if isinstance(value, str) and _BLOCK_NAME_RE.fullmatch(value)
            else "is not a block name"
        ),
        "sitemaps_plus.E023",
        hint="The block of the base template the HTML sitemap fills, e.g. 'content'.",
    )
    # Cached serving (docs/caching.md) ----------------------------------------
    # Serve every sitemap file from Django's cache framework.
    CACHE = Setting(True, bool)
    # Alias in settings.CACHES holding rendered files and version keys
    # (checked with CACHE and the sections: checks.check_serving_settings).
    CACHE_ALIAS = Setting("default", str)
    # Maximum age (seconds) of a cached file: the bound on staleness for writes
    # that bypass signals (QuerySet.update(), raw SQL, other services). None:
    # no bound (invalidation only).
    CACHE_TIMEOUT = Setting(
        3600,
        _optional(int),
        _at_least(1, integer=True, nullable=True),
        "sitemaps_plus.E012",
        tag=Tags.caches,
    )
    # Before serving a cached section file, run the page's one aggregate query
    # (URL count and lastmod) and re-render when it moved. Catches updates that
    # bypass signals at the cost of one query per request.
    CACHE_FRESHNESS_CHECK = Setting(False, bool)
    # Seconds a model section's kept block figures (what its index is laid out
    # from) serve before every block is read again: the bound on how long a
    # write that sends no signal (QuerySet.update(), raw SQL, another process's
    # bulk load) stays out of the index; saves show at once. One hour, as
    # CACHE_TIMEOUT bounds the files. 0: read every block on every index;
    # None: only invalidate() (docs/caching.md).
    CACHE_RECONCILE = Setting(
        3600,
        _optional(float),
        _at_least(0, nullable=True),
        "sitemaps_plus.E025",
        hint="How long a write that sends no signal may stay out of the index; "
        "the default is 3600, 0 reads every block on every index (docs/caching.md).",
        tag=Tags.caches,
    )
    # Seconds the render lock lives: a render holder that dies frees it then.
    CACHE_LOCK_TIMEOUT = Setting(
        60, int, _at_least(1, integer=True), "sitemaps_plus.E012", tag=Tags.caches
    )
    # Seconds a request waits for another process's render before rendering
    # itself.
    CACHE_LOCK_WAIT = Setting(15.0, float, _at_least(0), "sitemaps_plus.E012", tag=Tags.caches)
    # Seconds after a change that a file's previous version may still be
    # served, at once, while another process renders the new one; 0: never
    # (requests wait for the render, up to CACHE_LOCK_WAIT). 300 outlasts a
    # render holder that died (its lock expires after CACHE_LOCK_TIMEOUT).
    CACHE_STALE_SECONDS = Setting(
        300,
        float,
        _at_least(0),
        "sitemaps_plus.E024",
        hint="How long after a change a file's previous version may still be served "
        "while another process renders the new one; 0 never serves it.",
        tag=Tags.caches,
    )
    # Seconds a process that saw the cache fail leaves it alone (its requests
    # render without it, one at a time per file) before trying it again; 0:
    # try it on every call.
    CACHE_BREAKER_SECONDS = Setting(5.0, float, _at_least(0), "sitemaps_plus.E012", tag=Tags.caches)
    # Serve gzip (stored compressed) to clients that accept it.
    GZIP = Setting(True, bool)
    # Cache-Control header of sitemap responses, e.g. "public, max-age=300";
    # None: no header.
    CACHE_CONTROL = Setting(
        None,
        _optional(str),
        lambda value: (
            None if value is None or isinstance(value, str) else "must be a header value or None"
        ),
        "sitemaps_plus.E018",
        hint="For example 'public, max-age=300'.",
        tag=Tags.caches,
    )
    # Static builds (docs/deployment.md) ----------------------------------------
    # Alias in settings.STORAGES that build_sitemaps writes to; None: a
    # FileSystemStorage at BUILD_DIR.
    BUILD_STORAGE = Setting(
        None,
        _optional(str),
        _storage_alias,
        "sitemaps_plus.E014",
        hint="Add it to settings.STORAGES, or leave it None to use BUILD_DIR.",
        tag=Tags.caches,
    )
    # Directory of the default FileSystemStorage for builds.
    BUILD_DIR = Setting(None, _optional(str))
    # Folder inside the storage for the built files ("" or e.g. "sitemaps/").
    BUILD_PREFIX = Setting("", lambda value: str(value or ""))
    # Also write a .gz beside each built file (for nginx gzip_static, CDNs).
    BUILD_GZIP = Setting(False, bool)
    # Views serve built files instead of rendering: None (render), "serve"
    # (stream from the storage) or "redirect" (302 to the storage's URL).
    SERVE_BUILT = Setting(
        None,
        _optional(str),
        lambda value: (
            None if value in (None, "serve", "redirect") else "is not None, 'serve' or 'redirect'"
        ),
        "sitemaps_plus.E013",
        tag=Tags.caches,
    )
    # The admin overview (docs/styled.md) --------------------------------------
    # Dotted path of a callable(run_id) that runs
    # django_sitemaps_plus.site_validation.run(run_id) in the background (a
    # Celery task's .delay, say); None: a thread of the web process.
    VALIDATION_RUNNER = Setting(
        None,
        _name_or_none,
        _dotted_callable,
        "sitemaps_plus.E030",
        hint="The dotted path of a callable(run_id) that runs "
        "django_sitemaps_plus.site_validation.run(run_id) in the background, "
        "e.g. a Celery task's delay; or None for a thread of the web process.",
    )
    # IndexNow (docs/indexnow.md) ----------------------------------------------
    # The site's IndexNow key (8-128 of a-z, A-Z, 0-9, '-'); None: off.
    INDEXNOW_KEY = Setting(
        None,
        _name_or_none,
        _indexnow_key,
        "sitemaps_plus.E015",
        "{where} must be 8 to 128 characters of a-z, A-Z, 0-9 and '-'.",
        hint="IndexNow protocol: https://www.indexnow.org/documentation",
        tag=Tags.caches,
    )
    # Where submissions go; api.indexnow.org shares them with Bing, Yandex and
    # the other participating engines.
    INDEXNOW_ENDPOINT = Setting(
        "https://api.indexnow.org/indexnow",
        str,
        _http_url,
        "sitemaps_plus.E021",
        hint="The default, 'https://api.indexnow.org/indexnow', shares submissions "
        "with every participating engine.",
        tag=Tags.caches,
    )
    # URLs per submission; the IndexNow protocol allows at most 10,000.
    INDEXNOW_BATCH_SIZE = Setting(
        protocol.INDEXNOW_MAX_URLS_PER_POST,
        int,
        _integers(1, protocol.INDEXNOW_MAX_URLS_PER_POST, "is not {low:,} to {high:,}"),
        "sitemaps_plus.E022",
        hint="IndexNow accepts at most 10,000 URLs per submission.",
        tag=Tags.caches,
    )
    # Seconds to wait for the endpoint's answer.
    INDEXNOW_TIMEOUT = Setting(10.0, float, _at_least(0.1), "sitemaps_plus.E012", tag=Tags.caches)
    # Attempts per batch (with exponential backoff) before giving up for this run.
    INDEXNOW_MAX_ATTEMPTS = Setting(
        5, int, _at_least(1, integer=True), "sitemaps_plus.E012", tag=Tags.caches
    )


SETTINGS: dict[str, Setting[Any]] = {
    name: row for name, row in vars(Settings).items() if isinstance(row, Setting)
}
DEFAULTS: dict[str, Any] = {name: row.default for name, row in SETTINGS.items()}

conf = Settings()


def get_cache() -> BaseCache:
    """The cache named by ``SITEMAPS_PLUS["CACHE_ALIAS"]``. The package's own
    calls go through ``quiet.get_cache``, which records a failure to make it."""
    return caches[conf.CACHE_ALIAS]
