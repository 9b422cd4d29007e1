"""The XSL stylesheet that shows a sitemap as a table in a browser: opt-in (docs/styled.md).

With ``SITEMAPS_PLUS["STYLESHEET"]`` on, every XML file the app serves names
it (``<?xml-stylesheet?>``); it is off by default because browsers are
removing XSLT, and the admin overview's HTML tables need none. Search engines
ignore the instruction, and the XML stays what the protocol says. XSLT 1.0,
one stylesheet for an index and a urlset, nothing loaded from elsewhere; its
one inline script shows each location as an IRI (``html_sitemap.display_url``
does the same in Python), which XSLT 1.0 cannot, while the links keep the
file's URIs.
"""

from __future__ import annotations

from pathlib import Path

from django.http import HttpRequest, HttpResponse

CONTENT_TYPE = "text/xsl; charset=utf-8"

#: The stylesheet, served as it is in ``assets/sitemap.xsl``. Its script's
#: ``sitemapIri(uri)`` decodes each table link's text as Django's ``uri_to_iri``
#: does: a run of %XX that is valid UTF-8 for a non-ASCII character, or an
#: unreserved ASCII one, becomes the character; anything else stays escaped.
#: Each ``xn--`` label of the host is decoded from Punycode (RFC 3492, section
#: 6.2); a label that does not decode, or decodes to ASCII only, stays.
XSL = (Path(__file__).parent / "assets" / "sitemap.xsl").read_text(encoding="utf-8")


def stylesheet(request: HttpRequest) -> HttpResponse:
    """``/sitemap.xsl``: the stylesheet the XML files name."""
    response = HttpResponse(XSL, content_type=CONTENT_TYPE)
    response["Cache-Control"] = "public, max-age=86400"
    response["X-Content-Type-Options"] = "nosniff"
    return response
