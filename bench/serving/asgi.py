"""``uvicorn bench.serving.asgi:application`` for the ASGI serving benchmark."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.serving.settings")
application = get_asgi_application()
