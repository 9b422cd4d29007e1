"""A shop: products in categories, each with a few images.

Images are stored as plain file paths (``FileField``), so the demo needs no
Pillow. A product's ``lastmod`` is the later of ``modified`` (stamped only
when what its page shows changes) and its newest image's ``uploaded_at``.
"""

from __future__ import annotations

from django.db import models
from django.urls import reverse
from django.utils import timezone

from django_sitemaps_plus.fields import ContentChangedField


class Category(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=120, unique=True, allow_unicode=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "categories"

    def __str__(self) -> str:
        return self.name


class Product(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=220, unique=True, allow_unicode=True)
    price = models.DecimalField(max_digits=10, decimal_places=2)
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="products")
    # What the product page shows; a save that changes none of it (stock
    # bookkeeping, is_active) leaves the sitemap's lastmod alone.
    modified = ContentChangedField(tracked_fields=["name", "price", "category"])
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("shop:product-detail", kwargs={"slug": self.slug})


class ProductImage(models.Model):
    product = models.ForeignKey(Product, on_delete=models.CASCADE, related_name="images")
    image = models.FileField(upload_to="products/", max_length=255)
    uploaded_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["uploaded_at", "pk"]
        indexes = [models.Index(fields=["product", "uploaded_at"])]

    def __str__(self) -> str:
        return self.image.name
