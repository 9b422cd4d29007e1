"""A URLconf without the app's include: built files are served from the storage."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import path


def page(request: HttpRequest, **kwargs: object) -> HttpResponse:
    return HttpResponse("page")


urlpatterns = [path("articles/<str:slug>/", page, name="article")]
