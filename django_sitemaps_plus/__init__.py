"""Correct, fast, honest sitemaps for Django.

Public API: ``register``, ``Section``, ``ModelSection``, ``ContribSection``,
``site`` (the default registry). Nothing here imports a model at import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["ContribSection", "ModelSection", "Section", "register", "site"]

if TYPE_CHECKING:
    from django_sitemaps_plus.contrib.django_sitemaps import ContribSection
    from django_sitemaps_plus.registry import register, site
    from django_sitemaps_plus.sections import ModelSection, Section


def __getattr__(name: str) -> Any:
    # Lazy so that listing the app in INSTALLED_APPS imports no ORM code early.
    if name in ("register", "site"):
        from django_sitemaps_plus import registry

        return getattr(registry, name)
    if name == "ContribSection":
        from django_sitemaps_plus.contrib import django_sitemaps

        return django_sitemaps.ContribSection
    if name in ("Section", "ModelSection"):
        from django_sitemaps_plus import sections

        return getattr(sections, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
