"""The one small HTTP client of the package: the validator's fetches and
IndexNow's submissions go through it.

Standard library only (``urllib.request``), imported on first use so that a
process that never leaves the site pays nothing for ssl and email. Redirects
are never followed here: the caller sees every hop (the validator records
each as a finding; IndexNow treats one as a failure). Non-2xx answers are
returned, not raised; only a failure to get an answer raises ``Unreachable``.
A caller that vetted the addresses of the URL's host (the validator) has the
connection made to those, not to a second lookup (``connect_to``).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any
from urllib.parse import urlsplit

#: Sent with every request; callers may name themselves (the validator does).
USER_AGENT = "django-sitemaps-plus"


class Unreachable(Exception):
    """No HTTP answer: DNS, connection, TLS, a timeout, a malformed URL."""


@dataclass
class Answer:
    """An HTTP answer: its status and headers, and its body while open."""

    status: int
    headers: Mapping[str, str]
    body: IO[bytes] | None

    def header(self, name: str) -> str | None:
        value = self.headers.get(name)
        return None if value is None else str(value)

    def close(self) -> None:
        if self.body is not None:
            self.body.close()


def retryable(status: int) -> bool:
    """Whether trying again later can help: 429 too many requests, and 5xx."""
    return status == 429 or status >= 500


_openers: dict[bool, Any] = {}


def _opener(use_env_proxies: bool) -> Any:
    if use_env_proxies not in _openers:
        import urllib.request

        class NoRedirects(urllib.request.HTTPRedirectHandler):
            # None makes urllib hand the 3xx back as an answer (HTTPError).
            def redirect_request(self, *args: object, **kwargs: object) -> None:
                return None

        class Pinned(urllib.request.AbstractHTTPHandler):
            # A request given ``connect_to`` carries its dialer (``pinned``).
            def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
                dial = getattr(req, "pinned", None)
                if dial is None:
                    return super().do_open(http_class, req, **kwargs)

                def connection(*args: Any, **options: Any) -> Any:
                    made = http_class(*args, **options)
                    # Only the TCP connection changes: the Host header and TLS
                    # (SNI, the certificate's name) still use the URL's host.
                    made._create_connection = dial
                    return made

                return super().do_open(connection, req, **kwargs)

        class PinnedHTTP(Pinned, urllib.request.HTTPHandler):
            pass

        class PinnedHTTPS(Pinned, urllib.request.HTTPSHandler):
            pass

        # (Instances of the default handlers' subclasses replace them.)
        handlers: list[urllib.request.BaseHandler] = [NoRedirects(), PinnedHTTP(), PinnedHTTPS()]
        if not use_env_proxies:
            handlers.append(urllib.request.ProxyHandler({}))
        _openers[use_env_proxies] = urllib.request.build_opener(*handlers)
    return _openers[use_env_proxies]


def _dialer(host: str, addresses: Sequence[str]) -> Callable[..., socket.socket]:
    """``socket.create_connection`` for ``host`` at ``addresses``, in order."""

    def dial(address: tuple[str, int], *args: Any) -> socket.socket:
        if address[0].lower() != host:  # a proxy: it connects to the host itself
            return socket.create_connection(address, *args)
        failure: OSError = OSError(f"no address to connect to for {host}")
        for ip in addresses:
            try:
                return socket.create_connection((ip, address[1]), *args)
            except OSError as exc:
                failure = exc
        raise failure

    return dial


def request(
    url: str,
    *,
    method: str = "GET",
    data: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float,
    use_env_proxies: bool = True,
    connect_to: Sequence[str] | None = None,
) -> Answer:
    """Send one request; the answer, whatever its status (close it when done).

    ``timeout`` bounds connecting and each read. ``connect_to``: the IP
    addresses to connect to for the URL's host, tried in order, instead of
    resolving its name again (through a proxy, the proxy connects). Raises
    ``Unreachable``.
    """
    import http.client
    import urllib.error
    import urllib.request

    sent = {"User-Agent": USER_AGENT, **(headers or {})}
    prepared = urllib.request.Request(url, data=data, method=method, headers=sent)
    if connect_to is not None:
        prepared.pinned = _dialer(urlsplit(url).hostname or "", connect_to)  # type: ignore[attr-defined]
    try:
        response = _opener(use_env_proxies).open(prepared, timeout=timeout)
    except urllib.error.HTTPError as exc:
        # A status outside 2xx, redirects included: an answer, not a failure.
        answer_headers = dict(exc.headers.items()) if exc.headers else {}
        exc.close()
        return Answer(exc.code, answer_headers, None)
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as exc:
        # (HTTPException: a malformed status line or header, from a broken server.)
        raise Unreachable(f"{url}: {getattr(exc, 'reason', exc)}") from exc
    return Answer(response.status, response.headers, response)
