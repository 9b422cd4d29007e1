"""The Wagtail ``Site`` of a request, and the page model in use."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.conf import settings
from django.db import models
from django.http import Http404, HttpRequest

from django_sitemaps_plus.location import SiteContext, ascii_origin, base_url_setting


def page_model() -> type[models.Model]:
    """The concrete base page model: ``WAGTAIL_PAGE_MODEL`` (Wagtail 8's
    swappable page model) when set, else ``wagtailcore.Page``."""
    label = getattr(settings, "WAGTAIL_PAGE_MODEL", None) or "wagtailcore.Page"
    model: type[models.Model] = apps.get_model(label)
    return model


def default_site() -> Any:
    """The Wagtail ``Site`` marked as default, or None."""
    from wagtail.models import Site

    return Site.objects.select_related("root_page").filter(is_default_site=True).first()


def wagtail_site_context(request: HttpRequest | None = None) -> SiteContext:
    """The site resolver of the Wagtail integration.

    The request's Wagtail ``Site`` (``Site.find_for_request``: by host and
    port, else the default site); outside a request, the default site. The
    base URL is the site's ``root_url`` unless ``SITEMAPS_PLUS["BASE_URL"]``
    names one. A request no site matches, with no default site, is a 404;
    outside a request that is a ``ValueError`` (as the core resolver raises).
    """
    from wagtail.models import Site

    site = Site.find_for_request(request) if request is not None else default_site()
    if site is None:
        if request is not None:
            raise Http404("No Wagtail site matches this host and there is no default site.")
        raise ValueError(
            "No default Wagtail site: mark one Site as the default (is_default_site) "
            "or set SITEMAPS_PLUS['BASE_URL']."
        )
    return SiteContext(base_url_setting() or ascii_origin(site.root_url), site, request)
