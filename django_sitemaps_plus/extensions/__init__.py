"""Sitemap extensions: each declares its namespace, writes its children after
``priority`` (the XSD order), contributes its system checks and owns its rules.

``Hreflang``, ``Images``, ``Video`` go in a section's ``extensions``; ``News``
is added by ``NewsSection`` (``django_sitemaps_plus.sections``).
"""

from __future__ import annotations

from django_sitemaps_plus.extensions.base import Extension
from django_sitemaps_plus.extensions.hreflang import Hreflang
from django_sitemaps_plus.extensions.images import Images
from django_sitemaps_plus.extensions.news import News
from django_sitemaps_plus.extensions.video import Video, VideoInfo

__all__ = ["Extension", "Hreflang", "Images", "News", "Video", "VideoInfo"]
