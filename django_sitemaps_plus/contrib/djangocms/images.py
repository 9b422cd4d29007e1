"""``PluginImages``: the images of a page content's plugins as ``image:image``.

A plugin model names its images:

- ``sitemap_image_fields = ["image"]``: fields holding an image (a file
  field, a foreign key to a django-filer image, or a URL);
- or a method ``sitemap_images()`` returning images, files, URLs or paths;
- or, for a plugin you do not own (djangocms-picture's ``Picture``), the
  section's ``image_plugins``: ``{"djangocms_picture.Picture":
  ["picture", "external_picture"]}``.

Per batch of rows, each plugin model with images costs one query (its
plugins in the batch's page contents' placeholders, in placeholder and
position order). The writing, de-duplication and ``max_per_url`` are
``Images``'.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import models

from django_sitemaps_plus.contrib.pages import PageEntry, PageImagesBase, model_field
from django_sitemaps_plus.extensions.images import DEFAULT_MAX_PER_URL


def plugin_models() -> list[type[models.Model]]:
    """Every concrete plugin model (a plugin's save is sent by its own class)."""
    from cms.models import CMSPlugin
    from django.apps import apps

    return [
        model
        for model in apps.get_models()
        if issubclass(model, CMSPlugin) and not model._meta.proxy
    ]


def image_sources(
    configured: Mapping[str, Sequence[str]],
) -> dict[type[models.Model], Sequence[str] | None]:
    """Plugin model -> its image field names (None: it has ``sitemap_images()``)."""
    from django.apps import apps

    found: dict[type[models.Model], Sequence[str] | None] = {}
    for model in plugin_models():
        if callable(getattr(model, "sitemap_images", None)):
            found[model] = None
        elif getattr(model, "sitemap_image_fields", None):
            found[model] = list(model.sitemap_image_fields)  # type: ignore[attr-defined]
    for label, fields in configured.items():
        try:
            found[apps.get_model(label)] = list(fields)
        except LookupError:
            continue  # not installed: nothing of it to list
    return found


def _address(value: Any) -> Any:
    """What ``Images`` makes a URL of: a filer image's file, else the value."""
    if isinstance(value, (models.fields.files.FieldFile, str)):
        return value
    return getattr(value, "file", value)


class PluginImages(PageImagesBase):
    """``image:image`` for each page content from its plugins' images.

    ``PageSection`` adds it by default when a plugin names its images.
    """

    def __init__(
        self,
        plugins: Mapping[str, Sequence[str]] | None = None,
        *,
        max_per_url: int = DEFAULT_MAX_PER_URL,
    ) -> None:
        super().__init__(max_per_url=max_per_url)
        self.plugins = dict(plugins or {})

    def images_of(self, entries: Sequence[PageEntry]) -> dict[int, list[Any]]:
        from cms.models import PageContent

        content_type = ContentType.objects.get_for_model(PageContent)
        keys = [entry.pk for entry in entries]
        found: dict[int, list[tuple[int, int, Any]]] = {}
        for model, fields in image_sources(self.plugins).items():
            foreign_key = models.ForeignKey
            related = [n for n in fields or () if isinstance(model_field(model, n), foreign_key)]
            plugins = model._base_manager.filter(
                placeholder__content_type=content_type, placeholder__object_id__in=keys
            ).annotate(_content=models.F("placeholder__object_id"))
            if related:
                plugins = plugins.select_related(*related)
            for plugin in plugins:
                order = (plugin.placeholder_id, plugin.position)
                for image in _images_of(plugin, fields):
                    found.setdefault(plugin._content, []).append((*order, image))
        return {
            key: [_address(image) for *_order, image in sorted(images, key=lambda i: i[:2])]
            for key, images in found.items()
        }


def _images_of(plugin: Any, fields: Sequence[str] | None) -> Iterator[Any]:
    if fields is None:
        yield from (value for value in plugin.sitemap_images() if value not in (None, ""))
        return
    for name in fields:
        value = getattr(plugin, name, None)
        if value not in (None, "") and not (hasattr(value, "name") and not value.name):
            yield value
