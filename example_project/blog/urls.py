from __future__ import annotations

from django.urls import path

from blog import views

app_name = "blog"

urlpatterns = [
    path("", views.ArticleListView.as_view(), name="article-list"),
    # <str:slug>, not <slug:slug>: demo slugs are Unicode ("über-uns-12").
    path("<str:slug>/", views.ArticleDetailView.as_view(), name="article-detail"),
]
