"""Typed access to the ``SITEMAPS_PLUS`` setting.

Every setting is read live from ``django.conf.settings`` on each access, so
``override_settings`` in tests just works. Defaults live here and only here.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from django_sitemaps_plus import protocol

DEFAULTS: dict[str, Any] = {
    # Scheme and host of every URL, e.g. "https://example.com". None: the Sites
    # framework when installed, else the request's own scheme and host.
    "BASE_URL": None,
    # Dotted path to a callable(request or None) -> location.SiteContext: the
    # base URL and site object of each request. None: the one an installed
    # integration names (the Wagtail app's), else BASE_URL, the Sites
    # framework, then the request (docs/sites.md).
    "SITE_RESOLVER": None,
    # Scheme used with the Sites framework (which stores no scheme).
    "PROTOCOL": "https",
    # URLs per sitemap file; the protocol allows at most 50,000.
    "LIMIT": protocol.MAX_URLS_PER_FILE,
    # Longest location a section lists (longer ones are refused); at 154 or
    # less a section without extensions is sized by count (docs/pagination).
    "MAX_LOC_LENGTH": protocol.MAX_LOC_LENGTH,
    # Value of the X-Robots-Tag header on every sitemap response.
    "X_ROBOTS_TAG": "noindex, noodp, noarchive",
    # Serve /robots.txt with a Sitemap: line (for sites without their own).
    "ROBOTS_TXT": False,
    # Name the XSL stylesheet (/sitemap.xsl) in every XML file, so a browser
    # shows it as a table; search engines ignore the instruction. Off: browsers
    # are removing XSLT (docs/styled.md); the admin's tables need none.
    "STYLESHEET": False,
    # Import each installed app's ``sitemaps`` module in AppConfig.ready().
    "AUTODISCOVER": True,
    # The HTML sitemap for visitors (docs/html-sitemap.md) ---------------------
    # Links per page of a section's HTML sitemap (1 to 50,000).
    "HTML_SITEMAP_PAGE_SIZE": 500,
    # The project's template the HTML sitemap's pages extend.
    "HTML_SITEMAP_BASE_TEMPLATE": "base.html",
    # The block of that template the HTML sitemap fills.
    "HTML_SITEMAP_BLOCK": "content",
    # Cached serving (docs/caching.md) ----------------------------------------
    # Serve every sitemap file from Django's cache framework.
    "CACHE": True,
    # Alias in settings.CACHES holding rendered files and version keys.
    "CACHE_ALIAS": "default",
    # Maximum age (seconds) of a cached file: the bound on staleness for writes
    # that bypass signals (QuerySet.update(), raw SQL, other services). None:
    # no bound (invalidation only).
    "CACHE_TIMEOUT": 3600,
    # Before serving a cached section file, run the page's one aggregate query
    # (URL count and lastmod) and re-render when it moved. Catches updates that
    # bypass signals at the cost of one query per request.
    "CACHE_FRESHNESS_CHECK": False,
    # Seconds a model section's kept block figures (what its index is laid out
    # from) serve before every block is read again: the bound on how long a
    # write that sends no signal (QuerySet.update(), raw SQL, another process's
    # bulk load) stays out of the index; saves show at once. One hour, as
    # CACHE_TIMEOUT bounds the files. 0: read every block on every index;
    # None: only invalidate() (docs/caching.md).
    "CACHE_RECONCILE": 3600,
    # Seconds the render lock lives: a render holder that dies frees it then.
    "CACHE_LOCK_TIMEOUT": 60,
    # Seconds a request waits for another process's render before rendering
    # itself.
    "CACHE_LOCK_WAIT": 15.0,
    # Seconds a process that saw the cache fail leaves it alone (its requests
    # render without it, one at a time per file) before trying it again; 0:
    # try it on every call.
    "CACHE_BREAKER_SECONDS": 5.0,
    # Serve gzip (stored compressed) to clients that accept it.
    "GZIP": True,
    # Cache-Control header of sitemap responses, e.g. "public, max-age=300";
    # None: no header.
    "CACHE_CONTROL": None,
    # Static builds (docs/deployment.md) ----------------------------------------
    # Alias in settings.STORAGES that build_sitemaps writes to; None: a
    # FileSystemStorage at BUILD_DIR.
    "BUILD_STORAGE": None,
    # Directory of the default FileSystemStorage for builds.
    "BUILD_DIR": None,
    # Folder inside the storage for the built files ("" or e.g. "sitemaps/").
    "BUILD_PREFIX": "",
    # Also write a .gz beside each built file (for nginx gzip_static, CDNs).
    "BUILD_GZIP": False,
    # Views serve built files instead of rendering: None (render), "serve"
    # (stream from the storage) or "redirect" (302 to the storage's URL).
    "SERVE_BUILT": None,
    # The admin overview (docs/styled.md) --------------------------------------
    # Dotted path of a callable(run_id) that runs
    # django_sitemaps_plus.site_validation.run(run_id) in the background (a
    # Celery task's .delay, say); None: a thread of the web process.
    "VALIDATION_RUNNER": None,
    # IndexNow (docs/indexnow.md) ----------------------------------------------
    # The site's IndexNow key (8-128 of a-z, A-Z, 0-9, '-'); None: off.
    "INDEXNOW_KEY": None,
    # Where submissions go; api.indexnow.org shares them with Bing, Yandex and
    # the other participating engines.
    "INDEXNOW_ENDPOINT": "https://api.indexnow.org/indexnow",
    # URLs per submission; the IndexNow protocol allows at most 10,000.
    "INDEXNOW_BATCH_SIZE": 10_000,
    # Seconds to wait for the endpoint's answer.
    "INDEXNOW_TIMEOUT": 10.0,
    # Attempts per batch (with exponential backoff) before giving up for this run.
    "INDEXNOW_MAX_ATTEMPTS": 5,
}


def _user_settings() -> dict[str, Any]:
    value = getattr(settings, "SITEMAPS_PLUS", None) or {}
    return value if isinstance(value, dict) else {}


class Settings:
    """The app's settings; attribute names match the keys of ``SITEMAPS_PLUS``."""

    def get(self, name: str) -> Any:
        return _user_settings().get(name, DEFAULTS[name])

    @property
    def BASE_URL(self) -> str | None:
        value: str | None = self.get("BASE_URL")
        return value.rstrip("/") if value else None

    @property
    def VALIDATION_RUNNER(self) -> str | None:
        value = self.get("VALIDATION_RUNNER")
        return str(value) if value else None

    @property
    def SITE_RESOLVER(self) -> str | None:
        value = self.get("SITE_RESOLVER")
        return str(value) if value else None

    @property
    def PROTOCOL(self) -> str:
        return str(self.get("PROTOCOL"))

    @property
    def LIMIT(self) -> int:
        return int(self.get("LIMIT"))

    @property
    def MAX_LOC_LENGTH(self) -> int:
        return int(self.get("MAX_LOC_LENGTH"))

    @property
    def X_ROBOTS_TAG(self) -> str:
        return str(self.get("X_ROBOTS_TAG"))

    @property
    def STYLESHEET(self) -> bool:
        return bool(self.get("STYLESHEET"))

    @property
    def ROBOTS_TXT(self) -> bool:
        return bool(self.get("ROBOTS_TXT"))

    @property
    def AUTODISCOVER(self) -> bool:
        return bool(self.get("AUTODISCOVER"))

    @property
    def HTML_SITEMAP_PAGE_SIZE(self) -> int:
        return int(self.get("HTML_SITEMAP_PAGE_SIZE"))

    @property
    def HTML_SITEMAP_BASE_TEMPLATE(self) -> str:
        return str(self.get("HTML_SITEMAP_BASE_TEMPLATE"))

    @property
    def HTML_SITEMAP_BLOCK(self) -> str:
        return str(self.get("HTML_SITEMAP_BLOCK"))

    @property
    def CACHE(self) -> bool:
        return bool(self.get("CACHE"))

    @property
    def CACHE_ALIAS(self) -> str:
        return str(self.get("CACHE_ALIAS"))

    @property
    def CACHE_TIMEOUT(self) -> int | None:
        value = self.get("CACHE_TIMEOUT")
        return None if value is None else int(value)

    @property
    def CACHE_FRESHNESS_CHECK(self) -> bool:
        return bool(self.get("CACHE_FRESHNESS_CHECK"))

    @property
    def CACHE_RECONCILE(self) -> float | None:
        value = self.get("CACHE_RECONCILE")
        return None if value is None else float(value)

    @property
    def CACHE_LOCK_TIMEOUT(self) -> int:
        return int(self.get("CACHE_LOCK_TIMEOUT"))

    @property
    def CACHE_LOCK_WAIT(self) -> float:
        return float(self.get("CACHE_LOCK_WAIT"))

    @property
    def CACHE_BREAKER_SECONDS(self) -> float:
        return float(self.get("CACHE_BREAKER_SECONDS"))

    @property
    def GZIP(self) -> bool:
        return bool(self.get("GZIP"))

    @property
    def CACHE_CONTROL(self) -> str | None:
        value = self.get("CACHE_CONTROL")
        return None if value is None else str(value)

    @property
    def BUILD_STORAGE(self) -> str | None:
        value = self.get("BUILD_STORAGE")
        return None if value is None else str(value)

    @property
    def BUILD_DIR(self) -> str | None:
        value = self.get("BUILD_DIR")
        return None if value is None else str(value)

    @property
    def BUILD_PREFIX(self) -> str:
        return str(self.get("BUILD_PREFIX") or "")

    @property
    def BUILD_GZIP(self) -> bool:
        return bool(self.get("BUILD_GZIP"))

    @property
    def SERVE_BUILT(self) -> str | None:
        value = self.get("SERVE_BUILT")
        return None if value is None else str(value)

    @property
    def INDEXNOW_KEY(self) -> str | None:
        value = self.get("INDEXNOW_KEY")
        return str(value) if value else None

    @property
    def INDEXNOW_ENDPOINT(self) -> str:
        return str(self.get("INDEXNOW_ENDPOINT"))

    @property
    def INDEXNOW_BATCH_SIZE(self) -> int:
        return int(self.get("INDEXNOW_BATCH_SIZE"))

    @property
    def INDEXNOW_TIMEOUT(self) -> float:
        return float(self.get("INDEXNOW_TIMEOUT"))

    @property
    def INDEXNOW_MAX_ATTEMPTS(self) -> int:
        return int(self.get("INDEXNOW_MAX_ATTEMPTS"))


conf = Settings()
