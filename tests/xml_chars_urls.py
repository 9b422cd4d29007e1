"""The extension tests' URLconf plus the core tests' article pattern."""

from __future__ import annotations

from django.urls import path

from tests.i18napp.urls import page
from tests.i18napp.urls import urlpatterns as extension_patterns

urlpatterns = [
    *extension_patterns,
    path("articles/<str:slug>/", page, name="article"),
]
