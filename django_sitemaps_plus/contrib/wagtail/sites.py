"""The Wagtail ``Site`` of a request, and the page model in use."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.conf import settings
from django.db import models
from django.http import Http404, HttpRequest

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.serving import quiet
from django_sitemaps_plus.sites import SiteContext, ascii_origin, base_url_setting


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


#: The cache entry remembering which Wagtail Site each host:port resolved to.
HOSTS_CACHE_KEY = "sitemaps_plus:wagtail:hosts"
#: Most hosts remembered (a hostile Host header may not grow the entry).
MAX_HOSTS = 256


def find_site(request: HttpRequest) -> Any:
    """``Site.find_for_request(request)``, remembered per host and port in the
    sitemap cache while ``SITEMAPS_PLUS["CACHE"]`` is on.

    A warm sitemap request then costs no query at all: the Site is rebuilt
    from its remembered fields (its root page is read only when a file is
    rendered). Any save or delete of a Site forgets every host
    (``receivers.py``); changes that bypass signals last at most
    ``CACHE_TIMEOUT``. Wagtail's own matching rules decide every miss.
    """
    from django.http.request import split_domain_port
    from wagtail.models import Site

    if not conf.CACHE:
        return Site.find_for_request(request)
    # The raw host, as Wagtail reads it (no ALLOWED_HOSTS check here).
    raw_host: str = request._get_raw_host()  # type: ignore[attr-defined]
    key = f"{split_domain_port(raw_host)[0]}:{request.get_port()}"
    cache = quiet.available()
    unread = object()
    known = quiet.quietly(unread, cache, "get", HOSTS_CACHE_KEY)
    if known is unread:
        return Site.find_for_request(request)
    if isinstance(known, dict) and key in known:
        fields = known[key]
        if not fields:
            return None
        site = Site(**fields)
        site._state.adding = False
        return site
    site = Site.find_for_request(request)
    table = dict(known) if isinstance(known, dict) and len(known) < MAX_HOSTS else {}
    table[key] = (
        {f.attname: getattr(site, f.attname) for f in Site._meta.concrete_fields} if site else {}
    )
    quiet.quietly(None, cache, "set", HOSTS_CACHE_KEY, table, timeout=conf.CACHE_TIMEOUT)
    return site


def forget_hosts() -> None:
    """Drop the remembered host -> Site answers (a Site was saved or deleted)."""
    quiet.quietly(None, quiet.available(), "delete", HOSTS_CACHE_KEY)


def wagtail_site_context(request: HttpRequest | None = None) -> SiteContext:
    """The site resolver of the Wagtail integration.

    The request's Wagtail ``Site`` (``Site.find_for_request``: by host and
    port, else the default site; remembered per host, see ``find_site``);
    outside a request, the default site. The
    base URL is the site's ``root_url`` unless ``SITEMAPS_PLUS["BASE_URL"]``
    names one. A request no site matches, with no default site, is a 404;
    outside a request that is a ``ValueError`` (as the core resolver raises).
    """
    site = find_site(request) if request is not None else default_site()
    if site is None:
        if request is not None:
            raise Http404("No Wagtail site matches this host and there is no default site.")
        raise ValueError(
            "No default Wagtail site: mark one Site as the default (is_default_site) "
            "or set SITEMAPS_PLUS['BASE_URL']."
        )
    return SiteContext(base_url_setting() or ascii_origin(site.root_url), site, request)
