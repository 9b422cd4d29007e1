<?xml version="1.0" encoding="UTF-8"?>
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
          /* Cheap to lay out at 50,000 rows (measured in Chromium, see
             docs/styled.md): a fixed layout (widths from the col elements,
             not from measuring every cell), one line per cell, separate
             borders; collapsed borders and breaking long URLs over lines
             each cost more than the rest of the page together. */
          table { border-spacing: 0; width: 100%; table-layout: fixed; }
          col.n { width: 6em; }
          col.date { width: 8em; }
          th, td { text-align: left; padding: .35em .6em; border-bottom: 1px solid #ddd; }
          td { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
          th { background: #f4f4f4; }
          td.n { text-align: right; }
          a { color: #0b57d0; }
        </style>
      </head>
      <body>
        <xsl:apply-templates select="sm:sitemapindex|sm:urlset"/>
        <script><![CDATA[
function sitemapIri(uri) {
  function percent(text) {
    return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, function (run) {
      var bytes = run.match(/%[0-9A-Fa-f]{2}/g), out = "", at = 0;
      while (at < bytes.length) {
        var first = parseInt(bytes[at].slice(1), 16);
        if (first < 0x80) {
          var c = String.fromCharCode(first);
          out += /[A-Za-z0-9._~-]/.test(c) ? c : bytes[at];
          at += 1;
          continue;
        }
        var size = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
        try {
          out += decodeURIComponent(bytes.slice(at, at + size).join(""));
          at += size;
        } catch (e) {
          out += bytes[at];
          at += 1;
        }
      }
      return out;
    });
  }
  function label(text) {
    var base = 36, tMin = 1, tMax = 26, code = 128, bias = 72, index = 0;
    var body = text.slice(4), dash = body.lastIndexOf("-"), points = [], read = 0;
    if (dash > 0) {
      for (; read < dash; read++) points.push(body.charCodeAt(read));
      read = dash + 1;
    }
    while (read < body.length) {
      var before = index, weight = 1, k = base;
      for (;;) {
        if (read >= body.length) throw new Error("truncated");
        var ch = body.charCodeAt(read++);
        var digit = ch >= 48 && ch <= 57 ? ch - 22 : ch >= 65 && ch <= 90 ? ch - 65
          : ch >= 97 && ch <= 122 ? ch - 97 : base;
        if (digit >= base) throw new Error("not a digit");
        index += digit * weight;
        var threshold = k <= bias ? tMin : k >= bias + tMax ? tMax : k - bias;
        if (digit < threshold) break;
        weight *= base - threshold;
        k += base;
      }
      var count = points.length + 1, delta = index - before;
      delta = before === 0 ? Math.floor(delta / 700) : Math.floor(delta / 2);
      delta += Math.floor(delta / count);
      var shift = 0;
      for (; delta > ((base - tMin) * tMax) / 2; shift += base) {
        delta = Math.floor(delta / (base - tMin));
      }
      bias = shift + Math.floor(((base - tMin + 1) * delta) / (delta + 38));
      code += Math.floor(index / count);
      index %= count;
      if (code > 0x10ffff) throw new Error("out of range");
      points.splice(index, 0, code);
      index += 1;
    }
    // An ACE label stands for a name with a non-ASCII character.
    if (points.every(function (point) { return point < 128; })) throw new Error("ASCII");
    return String.fromCodePoint.apply(null, points).toLowerCase();
  }
  function host(text) {
    return text.replace(/(^|[.@])(xn--[A-Za-z0-9-]+)/gi, function (whole, lead, name) {
      try {
        return lead + label(name.toLowerCase());
      } catch (e) {
        return whole;
      }
    });
  }
  var parts = /^([A-Za-z][A-Za-z0-9+.-]*:[/][/])([^/?#]*)(.*)$/.exec(uri);
  if (!parts) return percent(uri);
  return parts[1] + host(parts[2]) + percent(parts[3]);
}
var links = document.querySelectorAll("table td a");
for (var n = 0; n < links.length; n++) {
  var text = links[n].textContent;
  if (text.indexOf("%") >= 0 || /xn--/i.test(text)) links[n].textContent = sitemapIri(text);
}
]]></script>
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
      <colgroup><col class="n"/><col/><col class="date"/><col class="n"/></colgroup>
      <thead><tr><th>#</th><th>Sitemap file</th><th>Last modified</th><th>URLs</th></tr></thead>
      <tbody>
        <xsl:for-each select="sm:sitemap">
          <tr>
            <td class="n"><xsl:value-of select="position()"/></td>
            <td><a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a></td>
            <td class="date"><xsl:apply-templates select="sm:lastmod"/></td>
            <td class="n urls">
              <xsl:value-of select="normalize-space(
                  substring-after(comment()[contains(., 'urls:')], 'urls:'))"/>
            </td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>

  <!-- A lastmod cell: the ISO date, the whole W3C value (time, zone) on hover. -->
  <xsl:template match="sm:lastmod">
    <xsl:attribute name="title"><xsl:value-of select="."/></xsl:attribute>
    <xsl:value-of select="substring(., 1, 10)"/>
  </xsl:template>

  <!-- A urlset: a column per kind of extension child only where the file has
       any (a browser's time grows with the number of cells: a plain
       50,000-URL file is 150,000 of them). -->
  <xsl:template match="sm:urlset">
    <xsl:variable name="images" select="boolean(sm:url/image:image)"/>
    <xsl:variable name="alternates" select="boolean(sm:url/xhtml:link[@rel='alternate'])"/>
    <xsl:variable name="news" select="boolean(sm:url/news:news)"/>
    <xsl:variable name="videos" select="boolean(sm:url/video:video)"/>
    <h1>Sitemap</h1>
    <p class="about">
      <span id="count"><xsl:value-of select="count(sm:url)"/></span> URLs.
      This page is the XML sitemap search engines read, shown as a table.
    </p>
    <table id="urls">
      <colgroup>
        <col class="n"/><col/><col class="date"/>
        <xsl:if test="$images"><col class="n"/></xsl:if>
        <xsl:if test="$alternates"><col class="n"/></xsl:if>
        <xsl:if test="$news"><col class="n"/></xsl:if>
        <xsl:if test="$videos"><col class="n"/></xsl:if>
      </colgroup>
      <thead>
        <tr>
          <th>#</th><th>URL</th><th>Last modified</th>
          <xsl:if test="$images"><th class="images">Images</th></xsl:if>
          <xsl:if test="$alternates"><th class="alternates">Alternates</th></xsl:if>
          <xsl:if test="$news"><th class="news">News</th></xsl:if>
          <xsl:if test="$videos"><th class="videos">Videos</th></xsl:if>
        </tr>
      </thead>
      <tbody>
        <xsl:for-each select="sm:url">
          <tr>
            <td class="n"><xsl:value-of select="position()"/></td>
            <td><a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a></td>
            <td class="date"><xsl:apply-templates select="sm:lastmod"/></td>
            <xsl:if test="$images">
              <td class="n"><xsl:value-of select="count(image:image)"/></td>
            </xsl:if>
            <xsl:if test="$alternates">
              <td class="n"><xsl:value-of select="count(xhtml:link[@rel='alternate'])"/></td>
            </xsl:if>
            <xsl:if test="$news">
              <td class="n"><xsl:value-of select="count(news:news)"/></td>
            </xsl:if>
            <xsl:if test="$videos">
              <td class="n"><xsl:value-of select="count(video:video)"/></td>
            </xsl:if>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>
</xsl:stylesheet>
