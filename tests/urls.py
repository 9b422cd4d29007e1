from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import include, path


def page(request: HttpRequest, **kwargs: object) -> HttpResponse:
    return HttpResponse("page")


urlpatterns = [
    path("", page, name="home"),
    path("about/", page, name="about"),
    path("articles/<str:slug>/", page, name="article"),
    path("numbered/<int:number>/", page, name="numbered"),
    path("a/<slug:first>/b/<int:second>/", page, name="two-kwargs"),
    path("", include("django_sitemaps_plus.urls")),
]
