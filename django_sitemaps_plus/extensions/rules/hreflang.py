"""hreflang rules: ``xhtml:link rel="alternate"`` (SM841-SM844).

The writer (``extensions.hreflang``) gives each language version of a page
one ``<url>`` listing every version, itself included, with ``VALUE_RE``
codes and absolute hrefs: the sets are reciprocal by construction. The
validator checks each link (SM841, SM842) and, across the file, that each
page is among its own alternates (SM843) and that the versions list each
other (SM844), in bounded memory.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from itertools import chain, compress, repeat
from typing import Any, Final

from django_sitemaps_plus.extensions.rules.values import (
    MAX_KNOWN_VALUES,
    Findings,
    all_clean_urls,
    is_http_url,
)
from django_sitemaps_plus.protocol import XHTML_NS

#: An ISO 639-1 language, optionally a script (ISO 15924) and/or a region
#: (ISO 3166-1 alpha-2 or UN M.49), or x-default. Case-insensitive.
VALUE_RE: Final = re.compile(
    r"x-default|[a-z]{2}(?:-[a-z]{4})?(?:-(?:[a-z]{2}|\d{3}))?", re.IGNORECASE
)
#: The value naming the version for users whose language has none.
X_DEFAULT: Final = "x-default"

LINK_TAG: Final = f"{{{XHTML_NS}}}link"
#: Links waiting for their target entry; beyond this, reciprocity is checked
#: only for links whose target was already seen (bounded memory).
MAX_PENDING_ALTERNATES: Final = 100_000
#: Alternate URLs remembered as valid; the set starts again when full.
MAX_KNOWN_URLS: Final = 10_000
_SIGNATURE_MASK: Final = 0xFFFFFFFFFFFFFFFF
#: Marks "not in the dictionary" where None is a meaningful value.
_UNSEEN: Final = object()


@dataclass(frozen=True, slots=True)
class Cluster:
    """An entry's alternates as the reciprocity check needs them."""

    #: The distinct hrefs, the sum of their hashes, each href with its hash.
    members: set[str]
    total: int
    hashed: list[tuple[str, int]]

    @classmethod
    def of(cls, alternates: list[str]) -> Cluster:
        members = set(alternates)
        return cls(members, sum(map(hash, members)), [(href, hash(href)) for href in alternates])


class HreflangRules:
    """The hreflang rules of one file.

    ``seen`` is the file's hash(loc) → cluster signature (None: no
    alternates), shared with the location checks (which add the entries).
    """

    def __init__(self, report: Findings, seen: dict[int, int | None]) -> None:
        self.report = report
        self.seen = seen
        #: hash(href) → (signature of the entry that listed it, its line).
        self.pending: dict[int, tuple[int | None, int | None]] = {}
        #: Recently validated alternate URLs: each hreflang URL recurs once per
        #: version of the page, so a small cache saves most checks.
        self.valid_urls: set[str] = set()
        self.valid_hreflangs: set[str] = set()

    # Each link ------------------------------------------------------------------

    def hreflang_ok(self, value: str | None) -> bool:
        """Whether an hreflang value is valid (SM841; remembered when it is)."""
        known = self.valid_hreflangs
        if value in known:
            return True
        if value is None or not VALUE_RE.fullmatch(value):
            return False
        if len(known) < MAX_KNOWN_VALUES:
            known.add(value)
        return True

    def url_ok(self, href: str) -> bool:
        """Whether an alternate's href is an http(s) URL (SM842; remembered when it is)."""
        known = self.valid_urls
        if href in known:
            return True
        if not is_http_url(href):
            return False
        if len(known) >= MAX_KNOWN_URLS:
            known.clear()
        known.add(href)
        return True

    def known_good(self, link: Any) -> str | None:
        """A link's href when it has nothing to report and needs no check
        (its href and hreflang known valid, rel="alternate"), else None."""
        href = link.get("href")
        if (
            href in self.valid_urls
            and link.get("hreflang") in self.valid_hreflangs
            and link.get("rel") == "alternate"
        ):
            return href  # type: ignore[no-any-return]
        return None

    def href_ok(self, href: str) -> bool:
        """``url_ok`` for an href as written: False also when whitespace
        surrounds it (SM210 is not reported for attributes, but the per-entry
        path strips it, so such a link goes that way)."""
        return href in self.valid_urls or (href == href.strip() and self.url_ok(href))

    def check_link(self, link: Any, loc: str, alternates: list[str] | None) -> list[str] | None:
        """SM841 and SM842 for one link; the entry's alternates with its href added."""
        if link.get("rel") != "alternate":
            return alternates  # amphtml and other relations are not language versions
        hreflang = link.get("hreflang")
        href = link.get("href")
        if not self.hreflang_ok(hreflang):
            self.report.add(
                "SM841",
                f"hreflang {hreflang!r}"
                if hreflang is not None
                else 'rel="alternate" without hreflang',
                line=link.sourceline,
                url=loc or None,
            )
        href = (href or "").strip()
        if not self.url_ok(href):
            self.report.add("SM842", f"href {href[:200]!r}", line=link.sourceline, url=loc or None)
            return alternates
        if alternates is None:
            alternates = []
        alternates.append(href)
        return alternates

    def links_ok(self, rows: list[tuple[str, ...]], hreflangs: list[str], locs: list[str]) -> bool:
        """Whether every link of a batch has nothing to report, over whole
        lists: ``rows`` the distinct rows of hrefs, ``locs`` the batch's
        entries (their URLs are checked, more strictly, as locations)."""
        valid_urls = self.valid_urls
        new_urls = set(chain.from_iterable(rows)).difference(valid_urls)
        new_urls.difference_update(locs)
        if new_urls:
            fresh = list(new_urls)
            # Clean URLs, tested at once in C; else each by the rule itself.
            if not all_clean_urls(fresh) and not all(map(self.href_ok, fresh)):
                return False
            if len(valid_urls) + len(new_urls) > MAX_KNOWN_URLS:
                valid_urls.clear()
            valid_urls.update(new_urls)
        return all(map(self.hreflang_ok, set(hreflangs).difference(self.valid_hreflangs)))

    # Across the file --------------------------------------------------------------

    def check_cluster(
        self,
        key: int,
        loc: str,
        where: Any,
        alternates: list[str] | None,
        cluster: Cluster | None = None,
    ) -> None:
        """Self-reference (SM843) and reciprocity (SM844) of one entry's alternates.

        Every version of a page lists the same set of versions (itself
        included), so all members of a cluster share one signature: the sum
        of the hashes of the set. A link to an entry not seen yet waits in
        ``pending`` until that entry arrives; a link to an entry seen before
        compares with its stored signature.

        ``where`` is the entry's line or the entry itself (its line is read
        only when needed); ``cluster`` is ``Cluster.of(alternates)`` when the
        caller has it already (the versions of a page list the same links).
        """
        report = self.report
        line: int | None = where if where is None or isinstance(where, int) else None
        signature: int | None = None
        if alternates is not None:
            if cluster is None:
                cluster = Cluster.of(alternates)
            if loc in cluster.members:
                signature = cluster.total & _SIGNATURE_MASK
            else:
                if line is None and where is not None:
                    line = where.sourceline
                report.add("SM843", "the page is not among its own alternates", line=line, url=loc)
                signature = (cluster.total + hash(loc)) & _SIGNATURE_MASK
            self.seen[key] = signature
        waiting = self.pending.pop(key, None)
        if waiting is not None and waiting[0] != signature:
            if line is None and where is not None:
                line = where.sourceline
            report.add(
                "SM844",
                f"the entry at line {waiting[1]} lists this URL as an alternate, "
                "but this URL lists "
                + ("no alternates" if signature is None else "a different set of versions"),
                line=line,
                url=loc,
            )
        if cluster is None:
            return
        seen = self.seen
        pending = self.pending
        for href, other in cluster.hashed:
            if href == loc:
                continue
            other_signature = seen.get(other, _UNSEEN)
            if other_signature is not _UNSEEN:
                if other_signature != signature:
                    if line is None and where is not None:
                        line = where.sourceline
                    report.add(
                        "SM844",
                        f"lists {href} as an alternate, but that entry lists "
                        + (
                            "no alternates"
                            if other_signature is None
                            else "a different set of versions"
                        ),
                        line=line,
                        url=loc,
                    )
                continue
            waiting_for_other = pending.get(other)
            if waiting_for_other is not None:
                if waiting_for_other[0] != signature:
                    if line is None and where is not None:
                        line = where.sourceline
                    report.add(
                        "SM844",
                        f"lists {href} as an alternate, as does the entry at line "
                        f"{waiting_for_other[1]}, with a different set of versions",
                        line=line,
                        url=loc,
                    )
            elif len(pending) < MAX_PENDING_ALTERNATES:
                if line is None and where is not None:
                    line = where.sourceline
                pending[other] = (signature, line)

    def commit_rows(
        self,
        entries: list[Any],
        locs: list[str],
        hashes: list[int],
        rows: list[tuple[str, ...]],
        distinct: list[tuple[str, ...]],
    ) -> None:
        """Record a batch of entries with nothing else to report, in document
        order (reciprocity compares with the entries seen before): ``rows``
        holds each entry's hrefs, equal rows being one object."""
        if self.commit_closed_clusters(entries, locs, hashes, rows, distinct):
            return
        # The versions of one page follow each other with the same links.
        seen = self.seen
        previous: tuple[str, ...] | None = None
        cluster = Cluster.of([])
        for index, row in enumerate(rows):
            alternates = list(row)
            if row is not previous:
                previous = row
                cluster = Cluster.of(alternates)
            key = hashes[index]
            seen[key] = None
            self.check_cluster(key, locs[index], entries[index], alternates, cluster)

    def commit_closed_clusters(
        self,
        entries: list[Any],
        locs: list[str],
        hashes: list[int],
        rows: list[tuple[str, ...]],
        distinct: list[tuple[str, ...]],
    ) -> bool:
        """Record the batch's hreflang clusters; False (nothing done) when the
        order of the entries could matter, to check them one by one instead.

        ``rows`` holds each entry's links, ``distinct`` the distinct rows (equal
        rows are one object). A row is closed when each of its links names an
        entry of this batch listing that same row; an entry is closed when its
        row is, it lists itself, and no earlier entry waits for it. Checked one
        by one, closed entries would all agree and leave nothing pending, so
        they are recorded at once. The other entries (a cluster cut by the
        batch's edge, a broken one) then go through ``check_cluster`` in
        document order; that they refer to no closed entry keeps their findings
        those of the order of the file. (All of it over whole lists, in C: a
        Python loop here would cost more than the rest of the batch.)
        """
        links = len(distinct[0])
        by_loc = dict(zip(locs, rows))
        agree = map(
            operator.is_,
            map(by_loc.get, chain.from_iterable(distinct)),
            chain.from_iterable(map(repeat, distinct, repeat(links))),
        )
        closed_rows = list(compress(distinct, map(all, zip(*[agree] * links))))
        closed_row_ids = set(map(id, closed_rows))
        closed = list(
            map(
                operator.and_,
                map(closed_row_ids.__contains__, map(id, rows)),
                map(operator.contains, rows, locs),
            )
        )
        pending = self.pending
        if pending and not pending.keys().isdisjoint(hashes):
            closed = list(
                map(operator.and_, closed, map(operator.not_, map(pending.__contains__, hashes)))
            )
        # A cluster's signature: the sum of the hashes of its distinct members.
        signatures = dict(
            zip(
                map(id, closed_rows),
                map(
                    operator.and_,
                    map(sum, map(map, repeat(hash), map(set, closed_rows))),
                    repeat(_SIGNATURE_MASK),
                ),
            )
        )
        seen = self.seen
        if all(closed):
            seen.update(zip(hashes, map(signatures.__getitem__, map(id, rows))))
            return True
        open_indexes = list(compress(range(len(closed)), map(operator.not_, closed)))
        closed_locs = set(compress(locs, closed))
        if any(not closed_locs.isdisjoint(rows[index]) for index in open_indexes):
            return False
        seen.update(
            zip(
                compress(hashes, closed),
                map(signatures.__getitem__, map(id, compress(rows, closed))),
            )
        )
        check_cluster = self.check_cluster
        for index in open_indexes:
            key = hashes[index]
            seen[key] = None
            check_cluster(key, locs[index], entries[index], list(rows[index]))
        return True
