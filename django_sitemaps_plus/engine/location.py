"""Absolute, percent-encoded locations on one scheme and host.

The scheme and host are the site's (``sites.SiteContext``). A location is a
path (made absolute with the base URL) or an absolute URL on the same scheme
and host; IRIs are percent-encoded as UTF-8 (RFC 3987 → RFC 3986). A location
that is relative, on another host, or too long is never emitted. The
``url_name`` fast path (``LocationTemplate``) reverses a URL pattern once and
splices each row's values into it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any
from urllib.parse import urlsplit

from django.urls import NoReverseMatch, converters, get_resolver, get_urlconf, reverse
from django.urls.resolvers import URLResolver, get_ns_resolver
from django.utils import translation
from django.utils.encoding import iri_to_uri

from django_sitemaps_plus import protocol
from django_sitemaps_plus.sites import SiteContext

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
        # Each probe's class over a whole column of a batch, values joined by
        # newlines (which no class accepts): one regex call per column.
        self.column_accepts = [
            re.compile(rf"(?:{a.pattern})(?:\n(?:{a.pattern}))*")
            for a in (probes[i][1] for i in order)
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
        spliced = self.paths([values])
        if spliced is not None:
            return spliced[0]
        return iri_to_uri(reverse(self.url_name, kwargs=dict(zip(self.kwarg_names, values))))

    def paths(
        self, rows: Sequence[Sequence[Any]], start: int = 0, prefix: str = ""
    ) -> list[str] | None:
        """``prefix + path(row[start:start + n])`` for each of many rows, or None.

        When every value of the batch is in the class its probe proved, the
        paths are spliced in one pass (a regex call per column, not per row),
        equal to what ``reverse()`` gives. Otherwise None: call ``path()`` per row.
        """
        if not self.fast or not rows:
            return None
        columns = [list(map(itemgetter(start + i), rows)) for i in self.order]
        for position, texts in enumerate(columns):
            if set(map(type, texts)) != {str}:  # ints, UUIDs...: as reverse() writes them
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
        try:
            with translation.override(language):
                return self.get(language).path(values)
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
