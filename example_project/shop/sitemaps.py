"""Sitemap sections of the shop, found by the app's autodiscovery."""

from __future__ import annotations

from django_sitemaps_plus import register
from django_sitemaps_plus.extensions import Images
from shop.models import Product

# No class needed: locations come from Product.get_absolute_url(), lastmod is
# the later of the product's own change and its newest image. Each product's
# images (ProductImage.image, a FileField) are listed as image:image, their
# URLs from the storage (MEDIA_URL), one query per 2,000 products.
register(
    Product,
    queryset=Product.objects.filter(is_active=True),
    lastmod_fields=["modified", "images__uploaded_at"],
    extensions=[Images("images__image", max_per_url=10)],
)
