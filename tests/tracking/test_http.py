"""The package's one HTTP client (django_sitemaps_plus.http), used by the
validator and by IndexNow, against a real local server."""

from __future__ import annotations

import socket

import pytest

from django_sitemaps_plus import http
from tests.utils import QuietHandler, http_server


class Handler(QuietHandler):
    def do_GET(self) -> None:
        if self.path == "/moved":
            self.send_response(301)
            self.send_header("Location", "/target")
            self.end_headers()
            return
        status = 503 if self.path == "/busy" else 200
        body = self.headers.get("User-Agent", "").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        body = self.rfile.read(length)
        self.send_response(200 if body == b"{}" else 422)
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_an_answer_whatever_its_status():
    with http_server(Handler) as base:
        ok = http.request(f"{base}/", timeout=5, use_env_proxies=False)
        assert ok.status == 200 and ok.body is not None
        assert ok.body.read() == http.USER_AGENT.encode()
        ok.close()
        busy = http.request(f"{base}/busy", timeout=5, use_env_proxies=False)
        assert busy.status == 503 and http.retryable(busy.status)
        busy.close()


def test_redirects_are_answers_not_followed():
    with http_server(Handler) as base:
        moved = http.request(f"{base}/moved", timeout=5, use_env_proxies=False)
    assert moved.status == 301
    assert moved.header("Location") == "/target"


def test_post_and_a_status_no_retry_helps():
    with http_server(Handler) as base:
        refused = http.request(
            f"{base}/", method="POST", data=b"[]", timeout=5, use_env_proxies=False
        )
        accepted = http.request(
            f"{base}/", method="POST", data=b"{}", timeout=5, use_env_proxies=False
        )
    assert refused.status == 422 and not http.retryable(refused.status)
    assert accepted.status == 200


def test_no_answer_is_unreachable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(http.Unreachable, match=str(port)):
        http.request(f"http://127.0.0.1:{port}/", timeout=2, use_env_proxies=False)


@pytest.mark.parametrize(
    ("status", "retry"), [(429, True), (500, True), (403, False), (422, False)]
)
def test_retryable(status, retry):
    assert http.retryable(status) is retry
