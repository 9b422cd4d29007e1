"""The app under a prefix that holds the digits the index reverses its file
URLs with (``views.PAGE_PLACEHOLDER``): the index must reverse each file."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import include, path


def page(request: HttpRequest, slug: str) -> HttpResponse:
    return HttpResponse(slug)


urlpatterns = [
    path("maps987654321/", include("django_sitemaps_plus.urls")),
    path("articles/<str:slug>/", page, name="article"),
]
