"""Sitemap extensions: each declares its namespace, writes its children after
``priority`` (the XSD order), contributes its system checks and owns its rules.

``Hreflang``, ``Images``, ``Video`` go in a section's ``extensions``;
``NewsSection`` is a section of its own. They are imported lazily, so listing
the app imports no model code early.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django_sitemaps_plus.extensions.base import Extension

__all__ = ["Extension", "Hreflang", "Images", "News", "NewsSection", "Video", "VideoInfo"]

if TYPE_CHECKING:
    from django_sitemaps_plus.extensions.hreflang import Hreflang
    from django_sitemaps_plus.extensions.images import Images
    from django_sitemaps_plus.extensions.news import News, NewsSection
    from django_sitemaps_plus.extensions.video import Video, VideoInfo

_MODULES = {
    "Hreflang": "hreflang",
    "Images": "images",
    "News": "news",
    "NewsSection": "news",
    "Video": "video",
    "VideoInfo": "video",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)
