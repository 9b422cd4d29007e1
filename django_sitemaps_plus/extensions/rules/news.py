"""Google News rules: ``news:news`` (SM811-SM815).

The writer (``extensions.news``) lists at most ``MAX_NEWS_PER_FILE`` articles
per file, published in the last ``WINDOW_DAYS`` days, each with a publication
name, a ``LANGUAGE_RE`` language, a W3C publication date and a title; the
validator reports what breaks those rules.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Final

from django_sitemaps_plus.extensions.rules.values import Findings, w3c_span
from django_sitemaps_plus.protocol import NEWS_NS

#: Google News: at most 1,000 news:news per file, published in the last 2 days.
MAX_NEWS_PER_FILE: Final = 1_000
WINDOW_DAYS: Final = 2
#: An ISO 639 language code (two or three letters), except zh-cn and zh-tw for
#: Simplified and Traditional Chinese.
LANGUAGE_RE: Final = re.compile(r"[a-z]{2,3}|zh-cn|zh-tw")

NEWS_TAG: Final = f"{{{NEWS_NS}}}news"
_NS: Final = f"{{{NEWS_NS}}}"


def _child(element: Any, tag: str) -> Any:
    for child in element:
        if child.tag == tag:
            return child
    return None


class NewsRules:
    """The news rules of one file (SM815 counts over the whole file)."""

    def __init__(self, report: Findings, now: dt.datetime) -> None:
        self.report = report
        self.now = now
        self.count = 0
        self._first_over: int | None = None

    def check(self, news: Any, loc: str) -> None:
        """One ``news:news``: required children, language, publication date."""
        report = self.report
        self.count += 1
        if self.count == MAX_NEWS_PER_FILE + 1:
            self._first_over = news.sourceline
        missing: list[str] = []
        publication = _child(news, _NS + "publication")
        if publication is None:
            missing.append("news:publication")
        else:
            for name in ("name", "language"):
                element = _child(publication, _NS + name)
                if element is None or not (element.text or "").strip():
                    missing.append(f"news:{name}")
                elif name == "language":
                    language = element.text.strip()
                    if not LANGUAGE_RE.fullmatch(language):
                        report.add(
                            "SM812",
                            f"news:language {language!r}",
                            line=element.sourceline,
                            url=loc or None,
                        )
        title = _child(news, _NS + "title")
        if title is None or not (title.text or "").strip():
            missing.append("news:title")
        date = _child(news, _NS + "publication_date")
        if date is None or not (date.text or "").strip():
            missing.append("news:publication_date")
        else:
            value = date.text.strip()
            span = w3c_span(value)
            if span is None:
                report.add("SM813", f"{value!r}", line=date.sourceline, url=loc or None)
            elif span[1] < self.now - dt.timedelta(days=WINDOW_DAYS):
                report.add("SM814", f"published {value}", line=date.sourceline, url=loc or None)
        if missing:
            report.add(
                "SM811",
                f"missing or empty: {', '.join(missing)}",
                line=news.sourceline,
                url=loc or None,
            )

    def finish(self) -> None:
        if self.count > MAX_NEWS_PER_FILE:
            self.report.add(
                "SM815",
                f"{self.count:,} news:news (limit {MAX_NEWS_PER_FILE:,})",
                line=self._first_over,
            )
