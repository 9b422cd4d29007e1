from __future__ import annotations

from django.urls import path

from shop import views

app_name = "shop"

urlpatterns = [
    path("", views.ProductListView.as_view(), name="product-list"),
    # <str:slug>, not <slug:slug>: demo slugs are Unicode ("café-crème").
    path("<str:slug>/", views.ProductDetailView.as_view(), name="product-detail"),
]
