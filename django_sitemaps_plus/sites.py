"""The site a sitemap is for: its scheme and host (``SiteContext``) and the
site object a request is for, found by the site resolver.

The base URL comes from ``SITEMAPS_PLUS["BASE_URL"]``, else the Sites
framework, else the request; ``SITE_RESOLVER`` (or an installed integration's,
the Wagtail app's) replaces that choice (docs/sites.md). ``call_with_site``
hands a section's ``items(site)`` or ``get_queryset(site)`` the site object
when the method takes it.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.apps import apps
from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest
from django.utils.module_loading import import_string

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.serving import quiet


@dataclass(frozen=True)
class SiteContext:
    """Scheme and host every URL of a response is built on, and the site asked for.
    ``site`` is the site object the request is for, as the site resolver
    found it: a Sites framework ``Site`` or ``RequestSite``, a Wagtail
    ``Site``, or None. Sections that list different things per site read it
    (``ModelSection.get_queryset(site)``, ``Section.items(site)``), and cached
    files are keyed by it as well as by the host.
    """

    base_url: str  # "https://example.com", no trailing slash
    site: Any = field(default=None, compare=False)
    request: HttpRequest | None = field(default=None, compare=False, repr=False)

    @property
    def scheme(self) -> str:
        return self.base_url.split("://", 1)[0]

    @property
    def netloc(self) -> str:
        return urlsplit(self.base_url).netloc.lower()

    @property
    def site_key(self) -> str:
        """``"<app_label>.<model>:<pk>"`` of ``site``; "" for none or an unsaved one."""
        meta = getattr(self.site, "_meta", None)
        pk = getattr(self.site, "pk", None)
        if meta is None or pk is None:
            return ""
        return f"{meta.label_lower}:{pk}"

    @property
    def cache_key(self) -> str:
        key = self.site_key
        return f"{self.base_url.lower()}|{key}" if key else self.base_url.lower()

    def absolute(self, path: str) -> str:
        return self.base_url + path


#: A site resolver: the ``SiteContext`` of a request (None: outside a request,
#: as in ``build_sitemaps`` and ``validate_sitemaps``).
SiteResolver = Callable[[HttpRequest | None], SiteContext]


def site_context(request: HttpRequest | None = None) -> SiteContext:
    """The base URL and site for ``request``, from the site resolver.
    ``SITEMAPS_PLUS["SITE_RESOLVER"]`` when set, else the resolver an installed
    integration names (its AppConfig's ``sitemaps_plus_site_resolver``, as the
    Wagtail one does), else ``default_site_context``.
    """
    return get_site_resolver()(request)


def get_site_resolver() -> SiteResolver:
    """The site resolver in use (see ``site_context``)."""
    return _import_resolver(conf.SITE_RESOLVER or app_resolver_path())


@lru_cache(maxsize=8)
def _import_resolver(path: str) -> SiteResolver:
    if not path:
        return default_site_context
    resolver: SiteResolver = import_string(path)
    return resolver


def app_resolver_path() -> str:
    """The resolver an installed app names, "" for none (the first one wins)."""
    for config in apps.get_app_configs():
        path = getattr(config, "sitemaps_plus_site_resolver", None)
        if path:
            return str(path)
    return ""


def base_url_setting() -> str | None:
    """``SITEMAPS_PLUS["BASE_URL"]`` in its ASCII form, or None when unset.
    Site resolvers honour it first: it names the one host of every URL.
    """
    return ascii_origin(conf.BASE_URL) if conf.BASE_URL else None


def default_site_context(request: HttpRequest | None = None) -> SiteContext:
    """The built-in resolver: ``BASE_URL``, then the Sites framework, then the request.
    ``site`` is the Sites framework's current ``Site`` (a ``RequestSite``
    without the Sites framework's models) when it gives the base URL; None
    with ``BASE_URL`` (one host for every URL, no lookup) or without it.
    """
    base = conf.BASE_URL
    site: Any = None
    if not base and apps.is_installed("django.contrib.sites"):
        site = _current_site(request)
        base = f"{conf.PROTOCOL}://{site.domain}".rstrip("/")
    if not base:
        if request is None:
            raise ValueError(
                "Cannot build absolute URLs without a request: set SITEMAPS_PLUS['BASE_URL'] "
                "or install django.contrib.sites."
            )
        base = f"{request.scheme}://{request.get_host()}"
    return SiteContext(normalized_origin(base), site, request)


#: Sites (SITE_ID or host → pk, domain, name) this process has written to the
#: sitemap cache, so each is written once (and again when it changes), not on
#: every request.
_remembered_sites: dict[str, tuple[Any, str, str]] = {}


def _current_site(request: HttpRequest | None) -> Any:
    """The Sites framework's current site, remembered in the sitemap cache.
    ``get_current_site`` queries on a process's first request (and on every
    one for a host-matched site after ``Site.objects.clear_cache()``). When
    that query fails because the database is down, the site remembered in
    the shared cache stands in, so warm files are still served (its cache
    keys are the same: they use the site's primary key).
    """
    from django.contrib.sites.models import Site
    from django.contrib.sites.shortcuts import get_current_site

    site_id = getattr(settings, "SITE_ID", None)
    if site_id is not None:
        key = f"sitemaps_plus:site:id:{site_id}"
    elif request is not None:
        key = f"sitemaps_plus:site:host:{request.get_host().lower()}"
    else:
        key = ""
    kept = key and conf.CACHE
    try:
        site = get_current_site(request)
    except DatabaseError:
        remembered = quiet.quietly(None, quiet.available(), "get", key) if kept else None
        if not (isinstance(remembered, (list, tuple)) and len(remembered) == 3):
            raise
        pk, domain, name = remembered
        return Site(pk=pk, domain=str(domain), name=str(name))
    value = (getattr(site, "pk", None), site.domain, site.name)
    if kept and isinstance(site, Site) and _remembered_sites.get(key) != value:
        with contextlib.suppress(quiet.CacheDown):  # down too: nothing to remember it in
            quiet.call(quiet.get_cache(), "set", key, value, timeout=None)
            _remembered_sites[key] = value
    return site


_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalized_origin(base_url: str) -> str:
    """``base_url`` as one spelling per origin: scheme and host lower-cased,
    an internationalised host in its ASCII (IDNA) form, a default port
    (``:443`` for https, ``:80`` for http) dropped.

    ``Host: WWW.EXAMPLE.COM:443`` and ``Host: www.example.com`` are one site:
    the same URLs in the files and the same cache key, not a render each.
    """
    ascii_base = ascii_origin(base_url)
    parts = urlsplit(ascii_base)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    if parts.username or parts.password:
        return ascii_base
    normalized = urlunsplit((scheme, netloc, parts.path, parts.query, parts.fragment))
    return normalized.rstrip("/")


def ascii_origin(base_url: str) -> str:
    """``base_url`` with an internationalised host in its ASCII (IDNA) form.
    A ``<loc>`` must be a URI (RFC 3986): ``https://bücher.example`` is
    written ``https://xn--bcher-kva.example``.
    """
    if base_url.isascii():
        return base_url
    parts = urlsplit(base_url)
    host = (parts.hostname or "").encode("idna").decode("ascii")
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


@lru_cache(maxsize=256)
def _takes_site(function: Callable[..., Any]) -> bool:
    """Whether ``function`` (a method, unbound) accepts an argument after self."""
    try:
        parameters = list(inspect.signature(function).parameters.values())[1:]
    except (TypeError, ValueError):
        return False
    return any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in parameters
    )


def call_with_site(method: Callable[..., Any], site: SiteContext | None) -> Any:
    """``method(site.site)`` when the method takes the site, else ``method()``.
    ``items(site)`` and ``get_queryset(site)`` may be overridden with or
    without the site argument; the site object is None outside a request
    that resolved one (and when dependencies are discovered).
    """
    function = getattr(method, "__func__", method)
    if _takes_site(function):
        return method(site.site if site is not None else None)
    return method()
