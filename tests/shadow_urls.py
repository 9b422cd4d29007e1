"""A project URLconf with the app's include first and its own text files after it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import include, path


def own_file(request: HttpRequest, name: str) -> HttpResponse:
    return HttpResponse(f"the project's {name}", content_type="text/plain")


urlpatterns = [
    path("", include("django_sitemaps_plus.urls")),
    path("robots.txt", own_file, {"name": "robots.txt"}),
    path("security.txt", own_file, {"name": "security.txt"}),
    path("humans.txt", own_file, {"name": "humans.txt"}),
    path("0123456789abcdef.txt", own_file, {"name": "key-like file"}),
    path("articles/<str:slug>/", own_file, {"name": "article"}, name="article"),
]
