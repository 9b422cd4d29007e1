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


def _wagtail_settings() -> bool:
    import os

    return os.environ.get("DJANGO_SETTINGS_MODULE", "").endswith("wagtail_settings")


# The Wagtail integration's tests need Wagtail and their own settings: they run
# in their own environment (tox -e wagtail7 / wagtail8, .ci/run), not here.
collect_ignore = [] if _wagtail_settings() else ["cms_wagtail"]
