from __future__ import annotations

from django.apps import AppConfig


class WagtailDemoConfig(AppConfig):
    name = "wagtail_demo"
    default_auto_field = "django.db.models.BigAutoField"
