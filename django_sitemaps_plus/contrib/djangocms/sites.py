"""The Sites framework ``Site`` of a request, as django CMS resolves it."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.sites import (
    SiteContext,
    base_url_setting,
    default_site_context,
    normalized_origin,
)


def cms_site_context(request: HttpRequest | None = None) -> SiteContext:
    """The site resolver of the django CMS integration.

    A site middleware that set ``request.site`` (as django CMS's own lookup,
    ``cms.utils.get_current_site``, honours) decides; otherwise the core
    resolver (``BASE_URL``, ``SITE_ID`` or the request's host through the
    Sites framework).
    """
    from django.contrib.sites.models import Site

    site = getattr(request, "site", None) if request is not None else None
    if isinstance(site, Site):
        base = base_url_setting() or normalized_origin(f"{conf.PROTOCOL}://{site.domain}")
        return SiteContext(base, site, request)
    context = default_site_context(request)
    if isinstance(context.site, Site):
        return context
    return SiteContext(context.base_url, as_cms_site(context.site), request)


def as_cms_site(site: Any) -> Any:
    """``site`` when it is a Sites framework ``Site``, else the current one
    (``SITE_ID``; with ``BASE_URL`` set the resolver hands no site)."""
    from django.contrib.sites.models import Site

    if isinstance(site, Site):
        return site
    return Site.objects.get_current()
