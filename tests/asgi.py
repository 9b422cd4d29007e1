"""ASGI application of the test project (and ``wsgi``, its WSGI one, for
gunicorn), for the real-server tests (test_asgi.py).

``SITEMAPS_TEST_REGISTER=articles`` registers the articles section;
``=cached`` the same with the cache on (local memory: one server process);
``=counted`` a section that counts its renders, read at ``/renders/``, with the
cache on (local memory: one server process).
"""

from __future__ import annotations

import os
import time

from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
application = get_asgi_application()
wsgi = get_wsgi_application()

mode = os.environ.get("SITEMAPS_TEST_REGISTER")
if mode == "articles":
    from django_sitemaps_plus import register
    from tests.testapp.models import Article

    register(Article)
elif mode == "cached":
    from django.conf import settings

    from django_sitemaps_plus import register
    from tests.testapp.models import Article

    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    register(Article)
elif mode == "counted":
    from django.conf import settings
    from django.http import HttpRequest, HttpResponse
    from django.urls import clear_url_caches, include, path

    from django_sitemaps_plus import ModelSection, register
    from django_sitemaps_plus import cache as sitemap_cache
    from tests.testapp.models import Article

    renders = [0]
    waits = [0]
    wait_for_entry = sitemap_cache._wait_for_entry

    # A request that found the render lock held waits for the holder's file.
    def counting_wait(*args):  # type: ignore[no-untyped-def]
        waits[0] += 1
        return wait_for_entry(*args)

    sitemap_cache._wait_for_entry = counting_wait  # type: ignore[assignment]

    class Counted(ModelSection):
        name = "counted"

        def page_entries(self, number, site, info=None):  # type: ignore[no-untyped-def]
            renders[0] += 1
            time.sleep(0.5)  # long enough for every request to arrive meanwhile
            yield from super().page_entries(number, site, info)

    register(Article)(Counted)

    def count(request: HttpRequest) -> HttpResponse:
        return HttpResponse(f"{renders[0]} {waits[0]}")

    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    settings.ROOT_URLCONF = __name__
    urlpatterns = [path("renders/", count), path("", include("tests.urls"))]
    clear_url_caches()
