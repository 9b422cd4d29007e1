"""Correct, fast, honest sitemaps for Django.

Public API: ``register``, ``Section``, ``ModelSection``, ``ContribSection``,
``site`` (the default registry), ``invalidate`` (sections' files out of date
at once, for writes that send no signal). Nothing here imports a model at
import time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["ContribSection", "ModelSection", "Section", "invalidate", "register", "site"]

if TYPE_CHECKING:
    from django_sitemaps_plus.contrib.django_sitemaps import ContribSection
    from django_sitemaps_plus.registry import register, site
    from django_sitemaps_plus.sections import ModelSection, Section
    from django_sitemaps_plus.serving.versions import invalidate


def __getattr__(name: str) -> Any:
    # Lazy so that listing the app in INSTALLED_APPS imports no ORM code early.
    if name in ("register", "site"):
        from django_sitemaps_plus import registry

        return getattr(registry, name)
    if name == "ContribSection":
        from django_sitemaps_plus.contrib import django_sitemaps

        return django_sitemaps.ContribSection
    if name == "invalidate":
        from django_sitemaps_plus.serving import versions

        return versions.invalidate
    if name in ("Section", "ModelSection"):
        from django_sitemaps_plus import sections

        return getattr(sections, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
