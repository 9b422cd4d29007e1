"""ASGI application of the test project, for the real-server tests (test_asgi.py)."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
application = get_asgi_application()

if os.environ.get("SITEMAPS_TEST_REGISTER") == "articles":
    from django_sitemaps_plus import register
    from tests.testapp.models import Article

    register(Article)
