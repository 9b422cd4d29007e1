from __future__ import annotations

from django_sitemaps_plus import register
from tests.testapp.models import Article

# Two URLs a file: a few rows make several file jobs for the workers.
register(Article, limit=2, lastmod_fields=["updated_at"])
