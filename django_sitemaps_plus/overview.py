"""What the admin overview shows, from the same queries as the index."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

from django_sitemaps_plus.cache import LastmodValue
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.location import site_context
from django_sitemaps_plus.registry import site as registry


@dataclass
class FileRow:
    number: int
    url: str
    urls: int
    lastmod: LastmodValue


@dataclass
class SectionRow:
    name: str
    files: list[FileRow] = field(default_factory=list)

    @property
    def urls(self) -> int:
        return sum(f.urls for f in self.files)

    @property
    def newest(self) -> LastmodValue:
        dated = [f.lastmod for f in self.files if f.lastmod is not None]
        return max(dated, key=_comparable) if dated else None

    @property
    def oldest(self) -> LastmodValue:
        dated = [f.lastmod for f in self.files if f.lastmod is not None]
        return min(dated, key=_comparable) if dated else None

    @property
    def undated_share(self) -> float:
        """The share of URLs in files without a lastmod (a file has one only
        when every URL in it has one)."""
        total = self.urls
        return sum(f.urls for f in self.files if f.lastmod is None) / total if total else 0.0


def _comparable(value: LastmodValue) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    assert value is not None
    return dt.datetime.combine(value, dt.time.min, tzinfo=dt.timezone.utc)


def sections(request: HttpRequest) -> list[SectionRow]:
    """Every registered section and its files, as the index lists them."""
    site = site_context(request)
    rows = []
    for section in registry:
        name = section.get_name()
        row = SectionRow(name)
        for page in section.index_pages(site):
            try:
                path = reverse(
                    "sitemaps_plus:section", kwargs={"section": name, "page": page.number}
                )
            except NoReverseMatch:
                path = f"/sitemap-{name}-{page.number}.xml"
            row.files.append(FileRow(page.number, path, page.url_count, page.lastmod))
        rows.append(row)
    return rows


def last_build() -> dict[str, Any] | None:
    """The last ``build_sitemaps`` run on the build storage, when there is one."""
    if not (conf.BUILD_STORAGE or conf.get("BUILD_DIR")):
        return None
    from django_sitemaps_plus.build import MANIFEST_NAME
    from django_sitemaps_plus.storage import get_build_storage, read_bytes, storage_name

    storage = get_build_storage()
    name = storage_name(MANIFEST_NAME)
    data = read_bytes(storage, name)
    if data is None:
        return {"found": False}
    try:
        files = json.loads(data).get("files", {})
        when = storage.get_modified_time(name)
    except (ValueError, NotImplementedError, OSError):
        return {"found": True, "files": None, "time": None}
    return {
        "found": True,
        "files": len(files),
        "urls": sum(int(f.get("urls") or 0) for f in files.values() if isinstance(f, dict)),
        "time": when,
    }
