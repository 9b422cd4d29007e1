"""The registry of sitemap sections, filled like the admin's.

``register(Model, **options)`` registers a ``ModelSection`` at once and
returns a decorator: applied to a ``ModelSection`` subclass, it replaces that
registration with the class. ``register(SectionSubclass)`` and
``register(ContribSitemapSubclass)`` register non-model sections.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from django.db import models

from django_sitemaps_plus import names
from django_sitemaps_plus.contrib.django_sitemaps import ContribSection
from django_sitemaps_plus.sections import ModelSection, Section

SectionT = TypeVar("SectionT", bound=type[Any])

#: Section names appear in file names: a lowercase slug (``names.py``).
SECTION_NAME_RE = names.SECTION_NAME_RE


class AlreadyRegistered(Exception):
    """A section name or model is registered twice."""


class NotRegistered(Exception):
    """An unregister or lookup of something never registered."""


def _is_contrib_sitemap(target: Any) -> bool:
    from django.contrib.sitemaps import Sitemap

    if isinstance(target, type):
        return issubclass(target, Sitemap)
    return isinstance(target, Sitemap)


class SitemapRegistry:
    """Named sections in registration order (the order of the index)."""

    def __init__(self) -> None:
        self._registry: dict[str, Section] = {}

    def __iter__(self) -> Iterator[Section]:
        return iter(list(self._registry.values()))

    def __len__(self) -> int:
        return len(self._registry)

    def __contains__(self, name: object) -> bool:
        return name in self._registry

    def get(self, name: str) -> Section | None:
        return self._registry.get(name)

    def add(self, section: Section, *, replace: Section | None = None) -> Section:
        """Register a section instance under its name."""
        name = section.get_name()
        existing = self._registry.get(name)
        if existing is not None and existing is not replace:
            raise AlreadyRegistered(f"A sitemap section named {name!r} is already registered.")
        if replace is not None:
            self._registry = {
                (name if value is replace else key): (section if value is replace else value)
                for key, value in self._registry.items()
            }
        else:
            self._registry[name] = section
        return section

    def unregister(self, name_or_model: str | type[models.Model]) -> None:
        for name, section in list(self._registry.items()):
            if name == name_or_model or (
                isinstance(section, ModelSection) and section.model is name_or_model
            ):
                del self._registry[name]
                return
        raise NotRegistered(f"{name_or_model!r} is not registered.")

    def register(self, target: Any = None, **options: Any) -> Any:
        """Register a model, a Section subclass or a contrib Sitemap.

        - ``register(Model, **options)`` / ``@register(Model)`` on a ModelSection
        - ``register(SectionClass, **options)`` / ``@register`` on a Section
        - ``register(ContribSitemapClassOrInstance, name=...)``
        """
        if target is None:
            return lambda cls: self.register(cls, **options)
        if isinstance(target, type) and issubclass(target, models.Model):
            return self._register_model(target, options)
        if _is_contrib_sitemap(target):
            # A class is made per request (as contrib's views do); an
            # instance is shared.
            self.add(ContribSection(target, **options))
            return target
        if isinstance(target, type) and issubclass(target, Section):
            if (
                issubclass(target, ModelSection)
                and target.model is None
                and target.queryset is None
            ):
                raise TypeError(
                    f"{target.__name__} has no model: use @register(Model) above the class."
                )
            self.add(target(**options))
            return target
        if isinstance(target, Section):
            self.add(target)
            return target
        raise TypeError(
            f"Cannot register {target!r}: expected a model, a Section subclass or a "
            "django.contrib.sitemaps.Sitemap."
        )

    def _register_model(
        self, model: type[models.Model], options: dict[str, Any]
    ) -> Callable[[SectionT], SectionT]:
        for section in self._registry.values():
            if (
                isinstance(section, ModelSection)
                and section.model is model
                and not options.get("name")
            ):
                raise AlreadyRegistered(
                    f"{model._meta.label} is already registered as section "
                    f"{section.get_name()!r}; pass name= to register it again."
                )
        default = self.add(ModelSection(model, **options))

        def decorator(section_class: SectionT) -> SectionT:
            if not issubclass(section_class, ModelSection):
                raise TypeError(f"@register({model.__name__}) decorates a ModelSection subclass.")
            self.add(section_class(model, **options), replace=default)
            return section_class

        return decorator


#: The default registry, used by ``register`` and the views.
site = SitemapRegistry()
register = site.register


def autodiscover() -> None:
    """Import each installed app's ``sitemaps`` module so it can register."""
    from django.utils.module_loading import autodiscover_modules

    autodiscover_modules("sitemaps")
