"""Sitemap sections of the shop, found by the app's autodiscovery."""

from __future__ import annotations

from django_sitemaps_plus import register
from shop.models import Product

# No class needed: locations come from Product.get_absolute_url(), lastmod is
# the later of the product's own change and its newest image.
register(
    Product,
    queryset=Product.objects.filter(is_active=True),
    lastmod_fields=["modified", "images__uploaded_at"],
)
