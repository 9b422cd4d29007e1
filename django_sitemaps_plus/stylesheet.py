"""The XSL stylesheet that shows a sitemap as a table in a browser.

Every XML file the app serves names it (``<?xml-stylesheet?>``) unless
``SITEMAPS_PLUS["STYLESHEET"]`` is off; search engines ignore the instruction,
and the XML stays what the protocol says. XSLT 1.0, one stylesheet for an
index (its files) and a urlset (its URLs, with counts of images, alternates,
news and videos), plain HTML and CSS, nothing loaded from elsewhere.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

CONTENT_TYPE = "text/xsl; charset=utf-8"

XSL = """<?xml version="1.0" encoding="UTF-8"?>
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
    xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
    xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
    xmlns:xhtml="http://www.w3.org/1999/xhtml"
    exclude-result-prefixes="sm image news video xhtml">
  <xsl:output method="html" encoding="UTF-8" indent="no"/>

  <xsl:template match="/">
    <html lang="en">
      <head>
        <meta charset="utf-8"/>
        <meta name="robots" content="noindex"/>
        <title>Sitemap</title>
        <style>
          body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
          h1 { font-size: 1.4em; margin: 0 0 .2em; }
          p.about { color: #555; margin: 0 0 1.2em; }
          table { border-collapse: collapse; width: 100%; }
          th, td { text-align: left; padding: .35em .6em; border-bottom: 1px solid #ddd; }
          th { background: #f4f4f4; position: sticky; top: 0; }
          td.n { text-align: right; font-variant-numeric: tabular-nums; width: 6em; }
          td.date { white-space: nowrap; width: 14em; }
          a { color: #0b57d0; word-break: break-all; }
        </style>
      </head>
      <body>
        <xsl:apply-templates select="sm:sitemapindex|sm:urlset"/>
      </body>
    </html>
  </xsl:template>

  <xsl:template match="sm:sitemapindex">
    <h1>Sitemap index</h1>
    <p class="about">
      <span id="count"><xsl:value-of select="count(sm:sitemap)"/></span> sitemap files.
      This page is the XML sitemap index search engines read, shown as a table.
    </p>
    <table id="sitemaps">
      <thead><tr><th>#</th><th>Sitemap file</th><th>Last modified</th></tr></thead>
      <tbody>
        <xsl:for-each select="sm:sitemap">
          <tr>
            <td class="n"><xsl:value-of select="position()"/></td>
            <td><a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a></td>
            <td class="date"><xsl:value-of select="sm:lastmod"/></td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>

  <xsl:template match="sm:urlset">
    <h1>Sitemap</h1>
    <p class="about">
      <span id="count"><xsl:value-of select="count(sm:url)"/></span> URLs.
      This page is the XML sitemap search engines read, shown as a table.
    </p>
    <table id="urls">
      <thead>
        <tr>
          <th>#</th><th>URL</th><th>Last modified</th>
          <th>Images</th><th>Alternates</th><th>News</th><th>Videos</th>
        </tr>
      </thead>
      <tbody>
        <xsl:for-each select="sm:url">
          <tr>
            <td class="n"><xsl:value-of select="position()"/></td>
            <td><a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a></td>
            <td class="date"><xsl:value-of select="sm:lastmod"/></td>
            <td class="n images"><xsl:value-of select="count(image:image)"/></td>
            <td class="n alternates">
              <xsl:value-of select="count(xhtml:link[@rel='alternate'])"/>
            </td>
            <td class="n news"><xsl:value-of select="count(news:news)"/></td>
            <td class="n videos"><xsl:value-of select="count(video:video)"/></td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>
</xsl:stylesheet>
"""


def stylesheet(request: HttpRequest) -> HttpResponse:
    """``/sitemap.xsl``: the stylesheet the XML files name."""
    response = HttpResponse(XSL, content_type=CONTENT_TYPE)
    response["Cache-Control"] = "public, max-age=86400"
    response["X-Content-Type-Options"] = "nosniff"
    return response
