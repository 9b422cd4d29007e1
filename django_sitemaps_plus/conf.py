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
    # Scheme used with the Sites framework (which stores no scheme).
    "PROTOCOL": "https",
    # URLs per sitemap file; the protocol allows at most 50,000.
    "LIMIT": protocol.MAX_URLS_PER_FILE,
    # Longest location a section expects; sizes the per-URL byte budget that
    # keeps every file under 52,428,800 bytes (see docs/pagination).
    "MAX_LOC_LENGTH": protocol.MAX_LOC_LENGTH,
    # Value of the X-Robots-Tag header on every sitemap response.
    "X_ROBOTS_TAG": "noindex, noodp, noarchive",
    # Serve /robots.txt with a Sitemap: line (for sites without their own).
    "ROBOTS_TXT": False,
    # Import each installed app's ``sitemaps`` module in AppConfig.ready().
    "AUTODISCOVER": True,
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
    def ROBOTS_TXT(self) -> bool:
        return bool(self.get("ROBOTS_TXT"))

    @property
    def AUTODISCOVER(self) -> bool:
        return bool(self.get("AUTODISCOVER"))


conf = Settings()
