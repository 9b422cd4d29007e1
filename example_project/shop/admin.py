from __future__ import annotations

from django.contrib import admin

from shop.models import Category, Product, ProductImage


class ProductImageInline(admin.TabularInline):  # type: ignore[type-arg]
    model = ProductImage
    extra = 0


@admin.register(Product)
class ProductAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["name", "category", "price", "is_active", "modified"]
    list_filter = ["is_active", "category"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [ProductImageInline]
    show_full_result_count = False


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
