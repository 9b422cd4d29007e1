"""The sitemap overview in the Django admin: the sections, their files and
figures, for staff with the ``view_sitemap_overview`` permission."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from django_sitemaps_plus import overview
from django_sitemaps_plus.models import SitemapOverview

PERMISSION = "django_sitemaps_plus.view_sitemap_overview"


@admin.register(SitemapOverview)
class SitemapOverviewAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """Read-only: no object is ever added, changed or deleted."""

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.has_perm(PERMISSION)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(PERMISSION)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if not self.has_view_permission(request):
            from django.core.exceptions import PermissionDenied

            raise PermissionDenied
        rows = overview.sections(request)
        context = {
            **self.admin_site.each_context(request),
            "title": "Sitemap overview",
            "opts": self.model._meta,
            "sections": rows,
            "total_urls": sum(r.urls for r in rows),
            "total_files": sum(len(r.files) for r in rows),
            "build": overview.last_build(),
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/django_sitemaps_plus/overview.html", context)
