from __future__ import annotations

from django.apps import AppConfig


class DemoConfig(AppConfig):
    """Holds the ``seed_demo`` command; no models of its own."""

    name = "demo"
