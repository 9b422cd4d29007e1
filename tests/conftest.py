from __future__ import annotations

from collections.abc import Iterator

import pytest

from django_sitemaps_plus.registry import SitemapRegistry, site


@pytest.fixture
def registry() -> Iterator[SitemapRegistry]:
    """The default registry, emptied for one test and restored after it."""
    saved = dict(site._registry)
    site._registry.clear()
    try:
        yield site
    finally:
        site._registry.clear()
        site._registry.update(saved)
