"""URLconf of the extension tests: language-prefixed pages (i18n_patterns)
beside the sitemap views and plain pages for images, news and video."""

from __future__ import annotations

from django.conf.urls.i18n import i18n_patterns
from django.http import HttpRequest, HttpResponse
from django.urls import include, path


def page(request: HttpRequest, **kwargs: object) -> HttpResponse:
    return HttpResponse("page")


urlpatterns = [
    path("", page, name="home"),
    path("", include("django_sitemaps_plus.urls")),
    path("galleries/<slug:slug>/", page, name="gallery"),
    path("news/<slug:slug>/", page, name="newsitem"),
    path("news/", page, name="news-index"),
    path("clips/<slug:slug>/", page, name="clip"),
    *i18n_patterns(
        path("about/", page, name="about"),
        path("stories/<str:slug>/", page, name="story"),
        path("places/<slug:slug>/", page, name="place"),
        path("guides/<str:slug>/", page, name="guide"),
    ),
]
