"""The numbers and formats of the sitemaps protocol, in one place.

Both the writer (never emit a violation) and the validator (report one) import
from here, so a limit is defined exactly once. Sources: sitemaps.org protocol 0.9
(https://www.sitemaps.org/protocol.html), Google Search Central and Yandex
Webmaster help, as summarised in the project's rule book.
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

# Namespaces -----------------------------------------------------------------

#: The protocol's namespace. ``http``, not ``https``: it is an identifier.
SITEMAP_NS: Final = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE_NS: Final = "http://www.google.com/schemas/sitemap-image/1.1"
NEWS_NS: Final = "http://www.google.com/schemas/sitemap-news/0.9"
VIDEO_NS: Final = "http://www.google.com/schemas/sitemap-video/1.1"
XHTML_NS: Final = "http://www.w3.org/1999/xhtml"

# Limits ---------------------------------------------------------------------

#: sitemaps.org/protocol.html#index: at most 50,000 URLs per sitemap file and
#: 50,000 sitemaps per index.
MAX_URLS_PER_FILE: Final = 50_000
MAX_SITEMAPS_PER_INDEX: Final = 50_000
#: sitemaps.org/protocol.html#index: 50 MB (52,428,800 bytes) uncompressed.
MAX_FILE_BYTES: Final = 52_428_800
#: sitemaps.org/protocol.html#locdef: "must be less than 2,048 characters";
#: the official XSD (tLoc) allows up to 2,048, which is what we enforce.
MAX_LOC_LENGTH: Final = 2_048
#: Yandex's error reference flags URLs longer than 1,024 characters.
YANDEX_MAX_LOC_LENGTH: Final = 1_024

# IndexNow (https://www.indexnow.org/documentation) ---------------------------

#: "up to 10,000 URLs per post".
INDEXNOW_MAX_URLS_PER_POST: Final = 10_000
#: A key: 8 to 128 characters of a-z, A-Z, 0-9 and '-'.
INDEXNOW_KEY_RE: Final = re.compile(r"[A-Za-z0-9-]{8,128}")

# Values ---------------------------------------------------------------------

CHANGEFREQ_VALUES: Final = frozenset(
    {"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"}
)
MIN_PRIORITY: Final = 0.0
MAX_PRIORITY: Final = 1.0
#: Decimal places a written priority keeps (0.55 stays 0.55; a float's
#: 0.30000000000000004 is written 0.3): enough for any ranking, and a bound
#: on an entry's worst-case bytes.
PRIORITY_PLACES: Final = 4


def format_priority(value: object) -> str | None:
    """``value`` as the text of ``<priority>``, as given (not rounded to one
    place, as contrib does not), or None when it is not a number from 0.0 to
    1.0 (the element is then left out)."""
    from decimal import Decimal, InvalidOperation

    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    if not number.is_finite() or not MIN_PRIORITY <= number <= MAX_PRIORITY:
        return None
    if -number.as_tuple().exponent > PRIORITY_PLACES:  # type: ignore[operator]
        number = number.quantize(Decimal(1).scaleb(-PRIORITY_PLACES)).normalize()
    text = format(number, "f")
    return text if "." in text else f"{text}.0"


#: W3C Datetime (https://www.w3.org/TR/NOTE-datetime): YYYY, YYYY-MM,
#: YYYY-MM-DD, or a date with hh:mm, hh:mm:ss or hh:mm:ss.s and a zone (Z or
#: +hh:mm / -hh:mm). A time without a zone is not W3C Datetime.
W3C_DATETIME_RE: Final = re.compile(
    r"""
    (?P<year>\d{4})
    (?:-(?P<month>0[1-9]|1[0-2])
      (?:-(?P<day>0[1-9]|[12]\d|3[01])
        (?:T(?P<hour>[01]\d|2[0-3]):(?P<minute>[0-5]\d)
          (?::(?P<second>[0-5]\d)(?:\.(?P<fraction>\d+))?)?
          (?P<tz>Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)
        )?
      )?
    )?
    """,
    re.VERBOSE,
)


def is_w3c_datetime(value: str) -> bool:
    """Whether ``value`` is a W3C Datetime in one of the six protocol forms."""
    return W3C_DATETIME_RE.fullmatch(value) is not None


#: Query parameters that mark a non-canonical URL (sorting, filtering,
#: sessions, tracking): the rule book says they deserve a warning.
SESSION_PARAMS: Final = frozenset({"sessionid", "phpsessid", "jsessionid", "sid", "sessid"})
SORT_FILTER_PARAMS: Final = frozenset({"sort", "order", "orderby", "order_by", "sortby", "filter"})
TRACKING_PARAM_PREFIXES: Final = ("utm_",)
TRACKING_PARAMS: Final = frozenset({"gclid", "fbclid", "yclid", "msclkid", "_openstat"})


def loc_problem(loc: str) -> str | None:
    """Why ``loc`` may not appear in a sitemap, or ``None`` when it may.
    Checks what the protocol requires of every ``<loc>``: an absolute
    http(s) URL with a host, at most ``MAX_LOC_LENGTH`` characters.
    """
    if len(loc) > MAX_LOC_LENGTH:
        return f"longer than {MAX_LOC_LENGTH:,} characters ({len(loc):,})"
    try:
        parts = urlsplit(loc)
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "not an absolute http(s) URL"
    if not parts.hostname:
        return "has no host"
    return None


# Validator limits ---------------------------------------------------------------
# The extensions' limits (images, news, video, hreflang) are declared beside
# their writers, in django_sitemaps_plus.extensions.rules.

#: The official sitemap.xsd types <loc> as tLoc with minLength 12, stricter than
#: the protocol text (a validator reports it as XSD-only advice).
XSD_MIN_LOC_LENGTH: Final = 12
#: When at least this many entries of one file all carry the same lastmod, it is
#: most likely the generation time, not a content change (Google's advice).
SAME_LASTMOD_MIN_ENTRIES: Final = 3
#: Largest number of nested index levels a validator follows (Google supports
#: none: an index lists sitemaps, not other indexes).
MAX_INDEX_DEPTH: Final = 3
