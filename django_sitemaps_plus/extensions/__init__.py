"""Sitemap extensions: each declares its namespace, writes its children after
``priority`` (the XSD order), contributes its system checks and owns its rules."""

from __future__ import annotations

from django_sitemaps_plus.extensions.base import Extension

__all__ = ["Extension"]
