"""Helpers for a project's own tests of its sitemaps."""

from __future__ import annotations

import gzip

from django.http import HttpResponseBase


def response_bytes(response: HttpResponseBase) -> bytes:
    """The body of a sitemap response, however it was sent.

    Small cached files are plain responses (``response.content`` works, as
    with django.contrib.sitemaps); large or uncached ones stream, and a
    client that sent ``Accept-Encoding: gzip`` gets gzip. This reads all
    three::

        from django_sitemaps_plus.testing import response_bytes

        body = response_bytes(self.client.get("/sitemap.xml"))
    """
    if getattr(response, "streaming", False):
        data = b"".join(response.streaming_content)  # type: ignore[attr-defined]
    else:
        data = response.content  # type: ignore[attr-defined]
    if response.get("Content-Encoding") == "gzip":
        data = gzip.decompress(data)
    return data
