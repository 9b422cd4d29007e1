"""Getting a sitemap's bytes: over HTTP, or from the site itself in-process
(the validator's fetches, and the admin overview's check that the site serves
its files). Neither lxml nor the validator is imported here.

A fetcher answers one URL with status, headers and a body that is read
lazily in chunks, so the size cap downstream bounds memory. Redirects are
never followed silently: each hop is recorded, so the report can say so; a
redirect is followed only within the origin (scheme, host, port) that was
asked for, never to another one. Over HTTP, a host that resolves to a
private, loopback or link-local address is refused before any connection,
unless the caller named it (``allow_hosts``); otherwise the connection goes
to the addresses checked, never to those of a second lookup (DNS rebinding).
"""

from __future__ import annotations

import contextlib
import io
import ipaddress
import socket
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Protocol
from urllib.parse import urljoin, urlsplit

from django.core.handlers.base import BaseHandler
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpResponseBase, StreamingHttpResponse

from django_sitemaps_plus import http

#: Bytes read from a response at a time.
CHUNK_SIZE = 1 << 16
#: Redirect hops followed before giving up.
MAX_REDIRECTS = 5
DEFAULT_TIMEOUT = 10.0
#: Seconds one whole response may take to read.
DEFAULT_TOTAL_TIMEOUT = 120.0
USER_AGENT = "django-sitemaps-plus-validator"


def url_origin(url: str) -> tuple[str, str]:
    """A URL's origin as the scope rules compare it: (scheme, host[:port])."""
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


class FetchError(Exception):
    """The URL could not be read: network error, timeout, bad status, bad scheme."""


@dataclass
class Fetched:
    """A response with status 200 (others raise ``FetchError``)."""

    final_url: str
    content_type: str | None
    chunks: Iterator[bytes]
    #: (status, from URL, to URL) for every redirect hop followed.
    redirects: list[tuple[int, str, str]] = field(default_factory=list)
    close: Callable[[], None] = lambda: None
    #: (status, from URL, to URL) of a redirect to another origin, which was
    #: not followed: nothing was read (``chunks`` is empty).
    left_origin: tuple[int, str, str] | None = None


class Fetcher(Protocol):
    def fetch(self, url: str) -> Fetched: ...


@dataclass
class _Hop:
    status: int
    location: str | None
    content_type: str | None
    chunks: Iterator[bytes]
    close: Callable[[], None]


def _follow(url: str, get: Callable[[str], _Hop]) -> Fetched:
    origin = url_origin(url)
    redirects: list[tuple[int, str, str]] = []
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        hop = get(current)
        if hop.status in (301, 302, 303, 307, 308) and hop.location:
            hop.close()
            target = urljoin(current, hop.location)
            if url_origin(target) != origin:
                # Never fetch another host on a server's word, as on an index's.
                left = (hop.status, current, target)
                return Fetched(current, None, iter(()), redirects, left_origin=left)
            redirects.append((hop.status, current, target))
            current = target
            continue
        if hop.status != 200:
            hop.close()
            raise FetchError(f"HTTP {hop.status} for {current}")
        return Fetched(current, hop.content_type, hop.chunks, redirects, hop.close)
    raise FetchError(f"more than {MAX_REDIRECTS} redirects from {url}")


def _read_chunks(response: IO[bytes], url: str, deadline: float) -> Iterator[bytes]:
    from http.client import HTTPException

    while True:
        try:
            chunk = response.read(CHUNK_SIZE)
        except (OSError, HTTPException) as exc:  # a timeout, a reset, a short body, TLS
            raise FetchError(f"reading {url} failed: {_reason(exc)}") from exc
        if not chunk:
            # http.client ends a body cut short quietly; the length it still expected says so.
            missing = getattr(response, "length", None)
            if missing:
                raise FetchError(
                    f"reading {url} failed: the connection closed {missing:,} bytes short "
                    "of the Content-Length"
                )
            return
        yield chunk
        # The socket timeout bounds each read; this bounds a server that
        # trickles bytes just fast enough to never time out.
        if time.monotonic() > deadline:
            raise FetchError(f"reading {url} took longer than allowed")


def _reason(exc: BaseException) -> str:
    """A one-line reason for a failed read: ``timed out``, not a traceback."""
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(getattr(exc, "strerror", None) or exc) or type(exc).__name__


#: NAT64's well-known prefix: its addresses reach the IPv4 address they embed.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one reaches (mapped, NAT64, 6to4, Teredo)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def named_hosts(hosts: Iterable[str | None]) -> list[str]:
    """The hosts of URLs a user typed that name an internal address plainly:
    an IP address, or ``localhost`` (and ``*.localhost``, loopback by RFC
    6761). A DNS name is never trusted for what it resolves to: a sitemap's
    own host may resolve to a cloud metadata address."""
    named = []
    for host in hosts:
        if not host:
            continue
        bare = host.strip("[]").lower().rstrip(".")
        try:
            ipaddress.ip_address(bare.partition("%")[0])
        except ValueError:
            if bare != "localhost" and not bare.endswith(".localhost"):
                continue
        named.append(host)
    return named


def _internal_kind(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """What makes ``address`` one a validator must not reach unasked
    ("loopback", "link-local", "private", "non-public"), or None when public."""
    if isinstance(address, ipaddress.IPv6Address):
        address = _embedded_ipv4(address) or address
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:  # 169.254.169.254: cloud metadata services
        return "link-local"
    if address.is_private:
        return "private"
    if not address.is_global or address.is_multicast:
        return "non-public"
    return None


class HttpFetcher:
    """Fetches http(s) URLs with urllib: a timeout per read, redirects recorded.
    Before each request (the first URL, every redirect, every child of an
    index) the host is resolved, and refused when any of its addresses is
    private, loopback or link-local, unless it is one of ``allow_hosts``
    (host names or IP addresses, compared without the port): a sitemap,
    or a server's redirect, cannot make the validator reach inside a network.
    The connection goes to the addresses checked, not to a second lookup's,
    which a DNS-rebinding name would answer with an internal one.
    """

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        total_timeout: float = DEFAULT_TOTAL_TIMEOUT,
        use_env_proxies: bool = True,
        allow_hosts: Iterable[str] = (),
    ) -> None:
        self.timeout = timeout
        self.total_timeout = total_timeout
        self.use_env_proxies = use_env_proxies
        self.allow_hosts = frozenset(host_name(host) for host in allow_hosts)

    def fetch(self, url: str) -> Fetched:
        return _follow(url, self._get)

    def _get(self, url: str) -> _Hop:
        # The package's one HTTP client (django_sitemaps_plus.http), shared
        # with IndexNow; it never follows redirects: _follow records each hop.

        if urlsplit(url).scheme not in ("http", "https"):
            raise FetchError(f"not an http(s) URL: {url}")
        vetted = self._check_addresses(url)
        try:
            answer = http.request(
                url,
                headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"},
                timeout=self.timeout,
                use_env_proxies=self.use_env_proxies,
                connect_to=vetted,
            )
        except http.Unreachable as exc:
            raise FetchError(f"cannot fetch {exc}") from exc
        if answer.body is None or not 200 <= answer.status < 300:
            answer.close()
            return _Hop(answer.status, answer.header("Location"), None, iter(()), lambda: None)
        return _Hop(
            answer.status,
            answer.header("Location"),
            answer.header("Content-Type"),
            _read_chunks(answer.body, url, time.monotonic() + self.total_timeout),
            answer.close,
        )

    def _check_addresses(self, url: str) -> list[str] | None:
        """FetchError unless ``url``'s host is allowed (None) or resolves to
        public addresses only (every one of them: a connection may use any),
        which are returned: the connection uses these, as a second lookup
        could answer otherwise."""
        parts = urlsplit(url)
        host = parts.hostname
        if not host:
            raise FetchError(f"no host in {url}")
        if host in self.allow_hosts:
            return None
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, ValueError) as exc:  # gaierror, a bad port, an invalid name
            raise FetchError(f"cannot resolve {host} for {url}: {_reason(exc)}") from exc
        vetted: list[str] = []
        for *_, sockaddr in addresses:
            address = ipaddress.ip_address(str(sockaddr[0]).partition("%")[0])
            kind = _internal_kind(address)
            if kind is not None:
                raise FetchError(
                    f"refused {url}: {host} resolves to {address}, a {kind} address "
                    f"(fetched only when named: --allow-host {host})"
                )
            if str(address) not in vetted:
                vetted.append(str(address))
        return vetted


def host_name(host: str) -> str:
    """A host as ``allow_hosts`` compares it: lower case, no IPv6 brackets."""
    return host.strip().lower().removeprefix("[").removesuffix("]")


class SiteFetcher:
    """Serves URLs on the site's own host through Django's request handling.
    The real views render in-process (the project's middleware and URLconf,
    as a server would run them), so the site can be validated without a
    server; following an index works exactly as for a remote URL. No test
    machinery is involved, and no signal receiver is detached: the requests
    send neither ``request_started`` nor ``request_finished``, so the
    process's database connections are left as they are.
    """

    def __init__(self, base_url: str, progress: Callable[[str], None] | None = None) -> None:
        self.progress = progress
        parts = urlsplit(base_url)
        self.scheme = parts.scheme
        self.host = parts.netloc.lower()
        self._handler = BaseHandler()
        self._handler.load_middleware()

    def _request(self, path: str, query: str) -> WSGIRequest:
        host, _, port = self.host.partition(":")
        environ = {
            "REQUEST_METHOD": "GET",
            "SCRIPT_NAME": "",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "SERVER_NAME": host,
            "SERVER_PORT": port or ("443" if self.scheme == "https" else "80"),
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": self.host,
            "wsgi.url_scheme": self.scheme,
            "wsgi.input": io.BytesIO(),
            "wsgi.errors": sys.stderr,
        }
        if self.scheme == "https":
            environ["HTTPS"] = "on"
        return _SiteRequest(environ)

    def fetch(self, url: str) -> Fetched:
        if self.progress is not None:
            self.progress(url)
        return _follow(url, self._get)

    def _get(self, url: str) -> _Hop:
        parts = urlsplit(url)
        if parts.scheme != self.scheme or parts.netloc.lower() != self.host:
            raise FetchError(f"{url} is not on this site ({self.scheme}://{self.host})")
        response: Any = self._handler.get_response(self._request(parts.path or "/", parts.query))
        chunks: Iterator[bytes]
        if isinstance(response, StreamingHttpResponse):
            chunks = (bytes(chunk) for chunk in response.streaming_content)  # type: ignore[union-attr]
        else:
            chunks = iter((response.content,))
        return _Hop(
            response.status_code,
            response.get("Location"),
            response.get("Content-Type"),
            chunks,
            lambda: _release(response),
        )


class _SiteRequest(WSGIRequest):
    """The request of ``SiteFetcher``: its host is trusted, not checked.
    The host is the site's own (``BASE_URL``'s or the Sites framework's),
    set by the validator, not a header a client sent: ``ALLOWED_HOSTS``
    guards the served site against forged hosts and has no say here (a new
    project's does not list ``BASE_URL``'s host). Requests a server passes to
    the views are untouched and still checked.
    """

    def get_host(self) -> str:
        return str(self.META["HTTP_HOST"])


def _release(response: HttpResponseBase) -> None:
    """Free what an in-process response holds (an open file, a generator).
    Not ``response.close()``: that sends ``request_finished``, whose receiver
    ``close_old_connections`` would close the database connection between two
    files of one validation, breaking a surrounding transaction (a test's, or
    a caller's ``atomic()``); and detaching that receiver would affect every
    thread of the process.
    """
    for closer in getattr(response, "_resource_closers", ()):
        with contextlib.suppress(Exception):
            closer()
    close = getattr(getattr(response, "_iterator", None), "close", None)
    if close is not None:
        with contextlib.suppress(Exception):
            close()
