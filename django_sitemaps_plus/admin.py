"""The sitemap overview in the Django admin: the sections, their files and
figures, an HTML table of each file, a lastmod plot per section, the IndexNow
queue and a validation run in the background, for staff with the
``view_sitemap_overview`` permission."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, re_path, reverse
from django.views.decorators.http import require_POST

from django_sitemaps_plus import indexnow, names, overview, site_validation
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.models import SitemapOverview
from django_sitemaps_plus.serving import quiet
from django_sitemaps_plus.urls import PageConverter, SectionConverter  # noqa: F401 (registers them)

PERMISSION = "django_sitemaps_plus.view_sitemap_overview"
#: Rows per page of a file's HTML table.
FILE_PAGE_ROWS = 1_000


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

    def get_urls(self) -> list[URLPattern]:
        """The overview, its own views, and nothing of a model's object views:
        there is no table, so every other URL under the overview (an object's
        change, delete and history pages, add) redirects to the overview."""
        prefix = f"{self.opts.app_label}_{self.opts.model_name}"

        def wrap(view: Any) -> Any:
            return self.admin_site.admin_view(view)

        changelist = [p for p in super().get_urls() if p.name == f"{prefix}_changelist"]
        return [
            *changelist,
            # The converters of the files' own URLs: a section name that is
            # not a slug, or a page 0 or past 999,999,999, is a 404 here too.
            path(
                "file/<sitemap_section:section>/<sitemap_page:page>/",
                wrap(self.file_view),
                name=f"{prefix}_file",
            ),
            path("validate/", wrap(require_POST(self.validate_view)), name=f"{prefix}_validate"),
            # A run's id: what ``site_validation`` makes, and safe in any cache's key.
            re_path(
                r"^validate/(?P<run_id>[-a-zA-Z0-9_]{1,64})/$",
                wrap(self.validation_view),
                name=f"{prefix}_validation",
            ),
            path("<path:anything>", wrap(self.elsewhere_view)),
        ]

    def elsewhere_view(self, request: HttpRequest, anything: str = "") -> HttpResponse:
        """Any other URL under the overview: the overview (no object to show)."""
        return HttpResponseRedirect(
            reverse(f"{self.admin_site.name}:django_sitemaps_plus_sitemapoverview_changelist")
        )

    def _context(self, request: HttpRequest, title: str, **extra: Any) -> dict[str, Any]:
        if not self.has_view_permission(request):
            raise PermissionDenied
        return {
            **self.admin_site.each_context(request),
            "title": title,
            "opts": self.model._meta,
            **extra,
        }

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        context = self._context(request, "Sitemap overview")
        rows = overview.sections(request)
        context.update(
            sections=rows,
            total_urls=sum(r.urls for r in rows),
            total_files=sum(len(r.files) for r in rows),
            build=overview.last_build(),
            **self._from_cache(),
            **(extra_context or {}),
        )
        return TemplateResponse(request, "admin/django_sitemaps_plus/overview.html", context)

    @staticmethod
    def _from_cache() -> dict[str, Any]:
        """The last validation run and the IndexNow queue, or that they cannot
        be known: both are kept in the sitemap cache, and a cache that does
        not answer never breaks the page."""
        try:
            return {
                "validation": site_validation.latest(),
                "indexnow": indexnow.queue_status() if conf.INDEXNOW_KEY else None,
                "cache_unknown": False,
            }
        except quiet.CacheDown:
            return {
                "validation": None,
                "indexnow": None,
                "indexnow_on": bool(conf.INDEXNOW_KEY),
                "cache_unknown": True,
            }

    def file_view(self, request: HttpRequest, section: str, page: int) -> HttpResponse:
        """One file as an HTML table, without XSLT, 1,000 rows a page."""
        context = self._context(request, names.file_name(section, page))
        rows = overview.file_rows(request, section, page)
        if rows is None:
            raise Http404("No such sitemap file.")
        paginator = Paginator(rows, FILE_PAGE_ROWS)
        listed = paginator.get_page(request.GET.get("p"))
        context.update(
            section=section,
            page=page,
            urls=len(rows),
            rows=listed,
            file_url=reverse("sitemaps_plus:section", kwargs={"section": section, "page": page}),
            columns={
                kind: any(getattr(row, kind) for row in rows)
                for kind in ("images", "alternates", "news", "videos")
            },
        )
        return TemplateResponse(request, "admin/django_sitemaps_plus/file.html", context)

    def validate_view(self, request: HttpRequest) -> HttpResponse:
        """Start a validation run in the background; show its progress page."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        # Every XML file and its .txt twin, the index and sitemap.txt.
        # Only the files (remembered): not the lastmod counts the overview shows.
        try:
            run = site_validation.start(total=2 * overview.file_count(request) + 2)
        except quiet.CacheDown:
            messages.error(
                request,
                "The sitemap cache does not answer: a validation run is recorded there, "
                "so none was started. Run manage.py validate_sitemaps meanwhile.",
            )
            return self.elsewhere_view(request)
        return HttpResponseRedirect(
            reverse("admin:django_sitemaps_plus_sitemapoverview_validation", args=[run.id])
        )

    def validation_view(self, request: HttpRequest, run_id: str) -> HttpResponse:
        try:
            run = site_validation.get(run_id)
        except quiet.CacheDown:
            run = None
        if run is None:
            raise Http404("No such validation run (they are kept for a week).")
        context = self._context(
            request,
            "Sitemap validation",
            run=run,
            stalled_minutes=site_validation.STALLED_AFTER // 60,
        )
        return TemplateResponse(request, "admin/django_sitemaps_plus/validation.html", context)
