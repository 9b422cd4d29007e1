"""Absolute, percent-encoded locations on one scheme and host.

The base URL comes from ``SITEMAPS_PLUS["BASE_URL"]``, else the Sites
framework, else the request. A location is a path (made absolute with the
base URL) or an absolute URL on the same scheme and host; IRIs are
percent-encoded as UTF-8 (RFC 3987 → RFC 3986). A location that is relative,
on another host, or too long is never emitted.
"""

from __future__ import annotations

import inspect
import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import itemgetter
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.apps import apps
from django.http import HttpRequest
from django.urls import NoReverseMatch, converters, get_resolver, get_urlconf, reverse
from django.urls.resolvers import URLResolver, get_ns_resolver
from django.utils import translation
from django.utils.encoding import iri_to_uri
from django.utils.module_loading import import_string

from django_sitemaps_plus import protocol, quiet
from django_sitemaps_plus.conf import conf


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
    from django.conf import settings
    from django.contrib.sites.models import Site
    from django.contrib.sites.shortcuts import get_current_site
    from django.db import DatabaseError

    site_id = getattr(settings, "SITE_ID", None)
    if site_id is not None:
        key = f"id:{site_id}"
    elif request is not None:
        key = f"host:{request.get_host().lower()}"
    else:
        key = ""
    try:
        site = get_current_site(request)
    except DatabaseError:
        remembered = _remembered_site(key) if key else None
        if remembered is None:
            raise
        pk, domain, name = remembered
        return Site(pk=pk, domain=domain, name=name)
    if (
        key
        and isinstance(site, Site)
        and _remembered_sites.get(key)
        != (
            site.pk,
            site.domain,
            site.name,
        )
    ):
        _remember_site(key, site)
    return site


def _site_cache_key(key: str) -> str:
    return f"sitemaps_plus:site:{key}"


def _remember_site(key: str, site: Any) -> None:
    if not conf.CACHE:
        return

    value = (site.pk, site.domain, site.name)
    try:
        quiet.call(quiet.get_cache(), "set", _site_cache_key(key), value, timeout=None)
    except quiet.CacheDown:
        return  # the cache is down too: nothing to remember it in
    _remembered_sites[key] = value


def _remembered_site(key: str) -> tuple[Any, str, str] | None:
    if not conf.CACHE:
        return None

    value = quiet.quietly(None, quiet.available(), "get", _site_cache_key(key))
    if isinstance(value, (list, tuple)) and len(value) == 3:
        return (value[0], str(value[1]), str(value[2]))
    return None


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


_AUTHORITY_RE = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*:)?//[^/?#]*")
_STRAY_PERCENT_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def to_uri(iri: str) -> str:
    """``iri`` as a URI: Django's ``iri_to_uri``, a ``%`` that starts no
    escape encoded as ``%25``, a ``#`` after the first as ``%23``, and ``[``
    and ``]`` encoded outside the host.
    ``ValueError`` when ``iri`` has a lone surrogate.

    ``iri_to_uri`` keeps ``%`` (it may start an escape) and the brackets, but
    RFC 3986 allows brackets only around an IP-literal host, and XML Schema's
    ``anyURI`` (the type of every ``loc`` in the official XSDs) refuses them
    in a path or query, as it refuses a bare ``%``.
    """
    try:
        uri = iri_to_uri(iri)
    except UnicodeEncodeError:
        # Only a lone surrogate cannot be encoded: no URL names it.
        raise ValueError("has a lone surrogate, which no URL can hold") from None
    if "%" in uri:
        uri = _STRAY_PERCENT_RE.sub("%25", uri)
    if uri.count("#") > 1:
        # The first "#" starts the fragment; a fragment holds no other.
        before, _, fragment = uri.partition("#")
        uri = f"{before}#{fragment.replace('#', '%23')}"
    if "[" not in uri and "]" not in uri:
        return uri
    authority = _AUTHORITY_RE.match(uri)
    start = authority.end() if authority else 0
    return uri[:start] + uri[start:].replace("[", "%5B").replace("]", "%5D")


def absolute_location(location: str, site: SiteContext) -> tuple[str | None, str | None]:
    """``(url, None)`` for a location that may be listed, else ``(None, why)``.
    ``location`` is a path starting with ``/`` (as ``get_absolute_url``
    returns) or an absolute URL on the site's own scheme and host.
    """
    if not location:
        return None, "is empty"
    try:
        uri = to_uri(location)
    except ValueError as exc:
        return None, f"{exc} ({location!r})"
    if uri.startswith("/") and not uri.startswith("//"):
        url = site.absolute(uri)
    else:
        parts = urlsplit(uri)
        if not parts.scheme or not parts.netloc:
            return None, f"is relative ({location!r}); return a path starting with '/'"
        if parts.scheme != site.scheme or parts.netloc.lower() != site.netloc:
            return None, f"is on another scheme or host ({location!r}) than {site.base_url}"
        url = uri
    problem = protocol.loc_problem(url)
    if problem:
        return None, problem
    return url, None


#: The characters of a path ``to_uri`` leaves as it is: the ASCII characters
#: ``iri_to_uri`` keeps (letters, digits, ``-._~`` and its safe set, less
#: ``#``, ``[`` and ``]``, which ``to_uri`` may rewrite), and ``%`` when it
#: starts an escape (``_STRAY_PERCENT_RE``). A newline separates the paths of
#: a batch. One character class: the regex engine keeps no backtracking
#: state, whatever the length of the batch.
_PLAIN_PATHS_TEXT = re.compile(r"[A-Za-z0-9\-._~/=:;$&()+,!?*@'%\n]*")
#: A base URL whose scheme and host no appended path can change.
_PLAIN_BASE = re.compile(r"https?://[^/?#\s]+(?:/[^?#\s]*)?")


@lru_cache(maxsize=64)
def _base_room(base_url: str) -> int:
    """Characters a plain path may have on ``base_url`` (-1: check every URL).
    Proved once per base URL: for a path of ``_PLAIN_PATHS_TEXT``,
    ``absolute_location`` gives ``base_url + path`` (``to_uri`` keeps the
    path, the scheme and host are the base's), and ``loc_problem`` of it is
    the base's (scheme, host) or the length.
    """
    if not base_url.isascii() or not _PLAIN_BASE.fullmatch(base_url):
        return -1
    if protocol.loc_problem(base_url + "/") is not None:
        return -1
    return protocol.MAX_LOC_LENGTH - len(base_url)


def absolute_paths(locations: Sequence[Any], site: SiteContext) -> list[str] | None:
    """``absolute_location(location, site)[0]`` for each of a batch of
    locations, or None when a cheap test cannot prove them all listable
    (then check each with ``absolute_location``).

    Proved at C speed over the joined batch: every location is a plain path
    (``_PLAIN_PATHS_TEXT``, each starting with one ``/``) short enough for
    the base URL, whose own checks are made once (``_base_room``). What
    ``get_absolute_url()`` returns for almost every site passes; anything
    else (an absolute URL, a non-ASCII path, a stray ``%``, ``#``,
    brackets) gets the full check, with its log line when refused.
    """
    room = _base_room(site.base_url)
    if room < 0 or not locations:
        return None
    try:
        joined = "\n".join(locations)
    except TypeError:  # None (not located) or not text: check one by one
        return None
    lines = len(locations) - 1
    if (
        max(map(len, locations)) > room
        # Each location one line, each a path: "/" first, never "//".
        or joined.count("\n") != lines
        or joined.count("\n/") != lines
        or not joined.startswith("/")
        or joined.startswith("//")
        or "\n//" in joined
        or not _PLAIN_PATHS_TEXT.fullmatch(joined)
        or ("%" in joined and _STRAY_PERCENT_RE.search(joined))
    ):
        return None
    base = site.base_url
    return [base + location for location in locations]


# The fast path: a URL pattern reversed once, values substituted per row ------

#: Probe values for each URL kwarg, each with the values it proves acceptable:
#: a value the pattern accepted as a probe that matches the same class of
#: characters is accepted without calling reverse() for it.
_PROBES: Sequence[tuple[str, re.Pattern[str]]] = (
    ("zzsitemapsplusprobe-0_9", re.compile(r"[A-Za-z0-9_-]+")),
    ("908172635409", re.compile(r"[0-9]+")),
    (
        "0e9e9e9e-0000-4000-8000-00000000abcd",
        re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
    ),
)

#: Django's own converters: ``to_url(value)`` is ``str(value)`` and their regex
#: accepts every value of the class its probe proves (checked by exact type: a
#: subclass may override ``to_url``).
_PLAIN_CONVERTERS = (
    converters.StringConverter,
    converters.SlugConverter,
    converters.IntConverter,
    converters.UUIDConverter,
    converters.PathConverter,
)


def _reverse_resolver(url_name: str) -> tuple[URLResolver, str]:
    """The resolver ``reverse(url_name)`` looks the name up in, and the name.
    The namespace walk of ``django.urls.reverse`` (without ``current_app``,
    as ``LocationTemplate`` reverses).
    """
    resolver = get_resolver(get_urlconf())
    *path, view = url_name.split(":")
    ns_pattern = ""
    ns_converters: dict[str, Any] = {}
    for ns in path:
        app_list = resolver.app_dict.get(ns)
        if app_list and ns not in app_list:
            ns = app_list[0]
        extra, resolver = resolver.namespace_dict[ns]
        ns_pattern += extra
        ns_converters.update(resolver.pattern.converters)
    if ns_pattern:
        resolver = get_ns_resolver(ns_pattern, resolver, tuple(ns_converters.items()))
    return resolver, view


def _splices_like_reverse(url_name: str, kwarg_names: Sequence[str]) -> bool:
    """Whether splicing values of the probes' classes gives what reverse gives.
    True only when exactly one pattern of ``url_name`` takes these kwargs
    (so no other pattern could take a value instead), none of them has a
    default, and each is captured by one of Django's own converters: their
    ``to_url`` is ``str()`` and their regex accepts the whole class. A
    custom converter (its ``to_url`` may pad or lowercase) or a ``re_path``
    group (its regex may accept less than the class) leaves every URL to
    ``reverse()``.
    """
    try:
        resolver, view = _reverse_resolver(url_name)
    except KeyError:
        return False
    names = set(kwarg_names)
    candidates = [
        (params, defaults, converters_)
        for possibility, _pattern, defaults, converters_ in resolver.reverse_dict.getlist(view)
        for _result, params in possibility
        if not names.symmetric_difference(params).difference(defaults)
    ]
    if len(candidates) != 1:
        return False
    params, defaults, converters_ = candidates[0]
    return all(
        name in params and name not in defaults and type(converters_.get(name)) in _PLAIN_CONVERTERS
        for name in kwarg_names
    )


class LocationTemplate:
    """A named URL pattern reversed once, with per-row values spliced in.
    ``reverse()`` costs tens of microseconds; for a 50,000-URL page that is
    most of the page's time. The pattern is reversed once with probe values;
    each row's values are checked against what the probe proved the pattern
    accepts and spliced into the result. A value outside that class goes
    through ``reverse()`` itself, so the output is always what reverse gives.
    The splice is used only for a pattern whose kwargs are all captured by
    Django's own converters (``<slug:...>``, ``<str:...>``, ``<int:...>``,
    ``<uuid:...>``, ``<path:...>``); with a custom converter or a
    ``re_path`` group every URL goes through ``reverse()`` (``fast`` False).
    """

    def __init__(self, url_name: str, kwargs: Mapping[str, str]) -> None:
        self.url_name = url_name
        self.kwarg_names = list(kwargs)
        self.pieces: list[str] = []
        self.accepts: list[re.Pattern[str]] = []
        probes = self._find_probes()
        if probes is None or not _splices_like_reverse(url_name, self.kwarg_names):
            self.fast = False
            return
        path = reverse(url_name, kwargs={k: p for k, (p, _) in zip(self.kwarg_names, probes)})
        rest = iri_to_uri(path)
        # Split the reversed path around each probe, in the order they appear.
        order = sorted(range(len(probes)), key=lambda i: rest.find(probes[i][0]))
        self.order = order
        for i in order:
            before, found, rest = rest.partition(probes[i][0])
            if not found or probes[i][0] in rest:
                self.fast = False
                return
            self.pieces.append(before)
        self.pieces.append(rest)
        self.accepts = [probes[i][1] for i in order]
        # The same classes over a whole column of a batch, values joined by
        # newlines (which no class accepts): one regex call per column.
        self.column_accepts = [
            re.compile(rf"(?:{a.pattern})(?:\n(?:{a.pattern}))*") for a in self.accepts
        ]
        self.fast = True

    def _find_probes(self) -> list[tuple[str, re.Pattern[str]]] | None:
        # Few kwargs (one or two) and three probes: try the combinations.
        for combo in itertools.product(_PROBES, repeat=len(self.kwarg_names)):
            kwargs = {name: probe for name, (probe, _) in zip(self.kwarg_names, combo)}
            try:
                reverse(self.url_name, kwargs=kwargs)
            except NoReverseMatch:
                continue
            return list(combo)
        return None

    def path(self, values: Sequence[Any]) -> str:
        """The percent-encoded path for one row's values (in kwarg order)."""
        if self.fast:
            texts = [str(values[i]) for i in self.order]
            if all(a.fullmatch(t) for a, t in zip(self.accepts, texts)):
                pieces = self.pieces
                if len(texts) == 1:
                    return pieces[0] + texts[0] + pieces[1]
                out = [pieces[0]]
                for text, piece in zip(texts, pieces[1:]):
                    out += (text, piece)
                return "".join(out)
        return iri_to_uri(reverse(self.url_name, kwargs=dict(zip(self.kwarg_names, values))))

    def paths(
        self, rows: Sequence[Sequence[Any]], start: int = 0, prefix: str = ""
    ) -> list[str] | None:
        """``prefix + path(row[start:start + n])`` for each of many rows, or None.

        When every value of the batch is in the class its probe proved, the
        paths are spliced in one pass (a regex call per column, not per row),
        equal to what ``path()`` gives. Otherwise None: call ``path()`` per row.
        """
        if not self.fast or not rows:
            return None
        columns = [list(map(itemgetter(start + i), rows)) for i in self.order]
        for position, texts in enumerate(columns):
            if set(map(type, texts)) != {str}:  # ints, UUIDs...: as path() does
                columns[position] = [str(value) for value in texts]
        for accept, texts in zip(self.column_accepts, columns):
            joined = "\n".join(texts)
            # The count rules out a value that itself contains a newline.
            if joined.count("\n") != len(texts) - 1 or not accept.fullmatch(joined):
                return None
        pieces = self.pieces
        if len(columns) == 1:
            head, tail = prefix + pieces[0], pieces[1]
            return [f"{head}{text}{tail}" for text in columns[0]]
        paths = []
        for row_texts in zip(*columns):
            out = [prefix, pieces[0]]
            for text, piece in zip(row_texts, pieces[1:]):
                out += (text, piece)
            paths.append("".join(out))
        return paths


class LanguageTemplates:
    """A URL name's ``LocationTemplate`` in each language, each made once
    (reversed with that language active): ``ModelSection``'s fast path for
    hreflang, which locates every item in every language."""

    def __init__(self, url_name: str, url_kwargs: Mapping[str, str]) -> None:
        self.url_name = url_name
        self.url_kwargs = url_kwargs
        self._made: dict[str, LocationTemplate] = {}

    def get(self, language: str) -> LocationTemplate:
        template = self._made.get(language)
        if template is None:
            with translation.override(language):
                template = LocationTemplate(self.url_name, self.url_kwargs)
            self._made[language] = template
        return template

    def location(self, language: str, values: Sequence[Any]) -> str | None:
        """The path of one row's URL kwarg ``values`` in ``language``, or None
        when the pattern does not reverse with them."""
        template = self.get(language)
        spliced = template.paths([values])
        if spliced is not None:
            return spliced[0]
        try:
            with translation.override(language):
                return template.path(values)
        except NoReverseMatch:
            return None

    def locators(
        self,
        rows: Sequence[Sequence[Any]],
        fallback: Callable[[str, Any, Any], str | None],
    ) -> list[Callable[[str], str | None]]:
        """For each (item, kwarg values) of a batch, ``locate(language)``: each
        language's paths for the whole batch in one splice, made when first
        asked for; ``fallback(language, item, values)`` for a batch the splice
        cannot take."""
        values = [row[1] or () for row in rows]
        by_language: dict[str, list[str] | None] = {}

        def locator(position: int, item: Any, row_values: Any) -> Callable[[str], str | None]:
            def locate(language: str) -> str | None:
                if language not in by_language:
                    by_language[language] = self.get(language).paths(values)
                paths = by_language[language]
                if paths is not None:
                    return paths[position]
                return fallback(language, item, row_values)

            return locate

        return [locator(i, row[0], row[1]) for i, row in enumerate(rows)]


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
