from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import include, path, re_path, register_converter


def page(request: HttpRequest, **kwargs: object) -> HttpResponse:
    return HttpResponse("page")


class PaddedConverter:
    """A custom converter whose ``to_url`` is not ``str()``: zero-padded."""

    regex = "[0-9]+"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: object) -> str:
        return f"{int(str(value)):06d}"


class LowercaseConverter:
    """A custom converter that lowercases in ``to_url``."""

    regex = "[-a-zA-Z0-9_]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: object) -> str:
        return str(value).lower()


register_converter(PaddedConverter, "padded")
register_converter(LowercaseConverter, "lowercase")

urlpatterns = [
    path("", page, name="home"),
    path("about/", page, name="about"),
    path("articles/<str:slug>/", page, name="article"),
    path("numbered/<int:number>/", page, name="numbered"),
    path("a/<slug:first>/b/<int:second>/", page, name="two-kwargs"),
    path("padded/<padded:number>/", page, name="padded"),
    path("lower/<lowercase:slug>/", page, name="lowercase"),
    path("blog/", include(([path("<slug:slug>/", page, name="entry")], "blog"))),
    re_path(r"^low/(?P<slug>[a-z0-9_-]+)/$", page, name="regex-lowercase"),
    path("", include("django_sitemaps_plus.urls")),
]
