"""``PageImages``: a page's images as ``image:image``, through ``Images``.

A page type names where its images are:

- ``sitemap_image_fields = ["hero_image", "body"]``: foreign keys to an image
  model, and StreamFields whose ``ImageChooserBlock`` values (at any depth:
  in lists and structs too) are listed in order;
- or a method ``sitemap_images()`` returning images, files, URLs or paths.

Per batch of rows, each page type that names images costs one query for its
pages (with the image foreign keys joined); a StreamField loads its images in
one query per page. Page types that name none cost nothing. Each image is
listed at its original file's URL (its storage's; a CDN's when the storage
says so). The writing, de-duplication and ``max_per_url`` are ``Images``'.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from django.core.checks import CheckMessage, Error
from django.db import models

from django_sitemaps_plus.contrib.pages import PageEntry, PageImagesBase, model_field

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import Section


def declares_images(model: type[models.Model] | None) -> bool:
    """Whether a page type names its images (see the module docstring)."""
    return model is not None and (
        bool(getattr(model, "sitemap_image_fields", None))
        or callable(getattr(model, "sitemap_images", None))
    )


def images_in(value: Any) -> Iterator[Any]:
    """The images in a field value: an image, or a StreamField's blocks."""
    from wagtail.blocks import StreamValue, StructValue
    from wagtail.images.models import AbstractImage

    if value is None:
        return
    if isinstance(value, AbstractImage):
        yield value
    elif isinstance(value, StreamValue):
        for child in value:
            yield from images_in(child.value)
    elif isinstance(value, StructValue):
        for item in value.values():
            yield from images_in(item)
    elif isinstance(value, Sequence) and not isinstance(value, str | bytes):
        for item in value:
            yield from images_in(item)


def _address(image: Any) -> Any:
    """What ``Images`` makes a URL of: an image's original file."""
    from wagtail.images.models import AbstractImage

    return image.file if isinstance(image, AbstractImage) else image


class PageImages(PageImagesBase):
    """``image:image`` for each page from the images its type names.

    ``PageSection`` adds it by default when any page type names images.
    """

    def images_of(self, entries: Sequence[PageEntry]) -> dict[int, list[Any]]:
        from django.contrib.contenttypes.models import ContentType

        by_type: dict[int, list[int]] = {}
        for entry in entries:
            if entry.content_type_id:
                by_type.setdefault(entry.content_type_id, []).append(entry.pk)
        found: dict[int, list[Any]] = {}
        for content_type_id, keys in by_type.items():
            model = ContentType.objects.get_for_id(content_type_id).model_class()
            if model is None or not declares_images(model):
                continue
            for page in self._pages(model, keys):
                found[page.pk] = [_address(image) for image in self._images_of(page)]
        return found

    @staticmethod
    def _pages(model: type[models.Model], keys: list[int]) -> models.QuerySet[Any]:
        names = list(getattr(model, "sitemap_image_fields", None) or ())
        related = [
            name for name in names if isinstance(model_field(model, name), models.ForeignKey)
        ]
        pages: models.QuerySet[Any] = model._base_manager.filter(pk__in=keys).select_related(
            *related
        )
        return pages

    @staticmethod
    def _images_of(page: Any) -> Iterator[Any]:
        method = getattr(page, "sitemap_images", None)
        if callable(method):
            yield from (value for value in method() if value not in (None, ""))
            return
        for name in page.sitemap_image_fields:
            yield from images_in(getattr(page, name))

    def check(self, section: Section) -> list[CheckMessage]:
        from wagtail.models import get_page_models

        errors = [e for e in super().check(section) if e.id != "sitemaps_plus.E112"]
        for model in get_page_models():
            for name in getattr(model, "sitemap_image_fields", None) or ():
                if model_field(model, name) is None:
                    errors.append(
                        Error(
                            f"{model._meta.label}.sitemap_image_fields names {name!r}, "
                            "which is not a field of that page type.",
                            hint="Name image foreign keys and StreamFields.",
                            obj=model,
                            id="sitemaps_plus.E112",
                        )
                    )
        return errors
