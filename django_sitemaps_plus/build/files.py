"""What a build leaves in its storage (docs/deployment.md): section files and
their ``.gz`` (``Writer``: each replaced atomically, the ``.gz`` first; not
rewritten when its SHA-256 in the manifest matches, not rendered when its
fingerprint does; a ``.gz`` a build with gzip left is removed by one
without, as ``gzip_static`` would send it), the manifest, the JSON documents
of a build, and the interim index written before any file is replaced
(``write_interim_index``), so a killed build never leaves an index stating
an older lastmod than a file it names.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from django.core.files.storage import Storage
from django.urls import NoReverseMatch, reverse

from django_sitemaps_plus import names
from django_sitemaps_plus.engine import xml
from django_sitemaps_plus.serving.responses import Measured, as_utc, gzip_chunks
from django_sitemaps_plus.serving.storage import (
    COPY_CHUNK,
    read_bytes,
    storage_name,
    write_atomic,
    write_bytes,
)
from django_sitemaps_plus.sites import SiteContext

logger = logging.getLogger("django_sitemaps_plus")

MANIFEST_NAME = "sitemaps-manifest.json"
INDEX_NAME = "sitemap.xml"


@dataclass
class BuildResult:
    """What a build did, by file name (relative to the build folder)."""

    written: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: Built by an earlier run of the same plan that failed or was killed.
    resumed: list[str] = field(default_factory=list)
    urls: int = 0
    seconds: float = 0.0

    @property
    def files(self) -> int:
        return len(self.written) + len(self.skipped) + len(self.resumed)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "files": self.files, "seconds": round(self.seconds, 3)}


def file_loc(site: SiteContext, section: str, page: int, ext: str) -> str:
    """The ``<loc>`` an index gives a built file."""
    name = "section" if ext == "xml" else "section_txt"
    try:
        path = reverse(f"sitemaps_plus:{name}", kwargs={"section": section, "page": page})
    except NoReverseMatch:
        # The app's URLs are not included: files are served from the site root.
        path = f"/{storage_name(names.file_name(section, page, ext))}"
    return site.absolute(path)


class Writer:
    """Writes files that changed (by SHA-256 against the manifest), counts the rest."""

    def __init__(
        self,
        storage: Storage,
        prefix: str,
        gzip: bool,
        old: dict[str, Any],
        result: BuildResult,
        renew: Callable[[], None] = lambda: None,
    ) -> None:
        self.storage = storage
        self.prefix = prefix
        self.gzip = gzip
        self.old = old
        self.new: dict[str, Any] = {}
        self.result = result
        self.renew = renew

    def write(self, name: str, chunks: Iterable[bytes], **info: Any) -> None:
        self.renew()
        measured = Measured(chunks)
        with tempfile.TemporaryFile() as spool:
            for chunk in measured:
                spool.write(chunk)
            sha = measured.hexdigest()
            self.new[name] = {"sha256": sha, "bytes": measured.size, "gzip": self.gzip, **info}
            before = self.old.get(name)
            path = storage_name(name, self.prefix)
            if not self.gzip:
                # A .gz of older content would be served by nginx's gzip_static.
                self._remove_gzip(before, path)
            if self._unchanged(before, sha, path):
                self.result.skipped.append(name)
                return
            if self.gzip:
                # Compressed only now: an unchanged file is never compressed.
                with tempfile.TemporaryFile() as zipped:
                    spool.seek(0)
                    for piece in gzip_chunks(iter(partial(spool.read, COPY_CHUNK), b"")):
                        zipped.write(piece)
                    # The .gz first: a server preferring it never finds it older.
                    write_atomic(self.storage, path + ".gz", zipped)
            write_atomic(self.storage, path, spool)
            self.result.written.append(name)

    def kept(self, name: str, fingerprint: str | None, **info: Any) -> bool:
        """Whether ``name`` need not be rendered at all: the manifest holds
        it with this ``fingerprint`` (``layout.file_fingerprint``) and the
        storage has it as this build would write it (with its .gz, or
        without one). Then it is kept in the new manifest as it was."""
        before = self.old.get(name)
        if (
            fingerprint is None
            or not isinstance(before, dict)
            or before.get("fingerprint") != fingerprint
            or bool(before.get("gzip")) != self.gzip
            or not self._unchanged(
                before, before.get("sha256", ""), storage_name(name, self.prefix)
            )
        ):
            return False
        self.renew()
        self.new[name] = {**before, **info, "fingerprint": fingerprint}
        self.result.skipped.append(name)
        return True

    def _unchanged(self, before: Any, sha: str, path: str) -> bool:
        """Whether the storage holds this content already (with its .gz when gzipping)."""
        if not isinstance(before, dict) or before.get("sha256") != sha:
            return False
        if self.gzip and not (before.get("gzip") and self.storage.exists(path + ".gz")):
            return False
        return self.storage.exists(path)

    def _remove_gzip(self, before: Any, path: str) -> None:
        """Delete the .gz an earlier build with gzip on may have left beside ``path``."""
        # A manifest entry without gzip: the build that wrote it removed the .gz.
        if isinstance(before, dict) and not before.get("gzip"):
            return
        if self.storage.exists(path + ".gz"):
            self.storage.delete(path + ".gz")


def _lastmod_value(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return as_utc(value)


def write_interim_index(
    storage: Storage,
    prefix: str,
    gzip: bool,
    site: SiteContext,
    previous: dict[str, Any],
    planned: dict[str, str | None],
    stylesheet: str | None = None,
) -> bool:
    """Before files are replaced: an index of the files that exist already,
    each with the later of its old and new lastmod (``planned``: each file's
    new lastmod, W3C text). Written only when some lastmod moves forward;
    returns whether it was written.

    A build killed after replacing some files then leaves an index whose
    lastmods are never older than those files' (at worst newer than a file
    not rewritten yet, which costs a crawler one needless fetch).
    """
    entries: list[xml.IndexedFile] = []
    moved = False
    for name in sorted(previous):
        match = names.FILE_NAME_RE.fullmatch(name)
        info = previous[name]
        if match is None or match["ext"] != "xml" or not isinstance(info, dict):
            continue
        old_text = info.get("lastmod")
        old_value = _lastmod_value(old_text)
        new_text = planned.get(name)
        lastmod = old_text
        if new_text and (old_value is None or (_lastmod_value(new_text) or old_value) > old_value):
            lastmod, moved = new_text, True
        urls = info.get("urls")
        loc = file_loc(site, match[1], int(match[2]), "xml")
        entries.append(xml.IndexedFile(loc, lastmod, urls if isinstance(urls, int) else None))
    if not moved or not entries:
        return False
    path = storage_name(INDEX_NAME, prefix)
    if gzip:
        write_bytes(storage, path + ".gz", gzip_chunks(xml.stream_index(entries, stylesheet)))
    write_bytes(storage, path, xml.stream_index(entries, stylesheet))
    return True


def built_files(storage: Storage, prefix: str) -> set[str]:
    """The built section files in the storage's build folder, manifest or not."""
    try:
        _, listed = storage.listdir(storage_name("", prefix) or ".")
    except (FileNotFoundError, NotImplementedError, OSError):
        return set()
    return {
        name.removesuffix(".gz")
        for name in listed
        if names.FILE_NAME_RE.fullmatch(name.removesuffix(".gz"))
    }


def load_json(storage: Storage, name: str) -> Any:
    """The JSON document ``name`` of the storage; None when missing or unreadable."""
    data = read_bytes(storage, name)
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def write_json(storage: Storage, name: str, document: Any, indent: int | None = None) -> None:
    write_bytes(storage, name, [json.dumps(document, indent=indent, sort_keys=True).encode()])


def load_manifest(storage: Storage, prefix: str) -> dict[str, Any]:
    """The files the last build's manifest names, with what it kept of each
    (empty: no manifest, or one that cannot be read)."""
    name = storage_name(MANIFEST_NAME, prefix)
    manifest = load_json(storage, name)
    if manifest is None and read_bytes(storage, name):
        logger.warning("Ignoring an unreadable %s: rebuilding every file.", MANIFEST_NAME)
    files = manifest.get("files") if isinstance(manifest, dict) else None
    return files if isinstance(files, dict) else {}


def write_manifest(storage: Storage, prefix: str, base_url: str, files: dict[str, Any]) -> None:
    """The manifest of a build that wrote its index: ``files`` by name."""
    manifest = {"version": 1, "base_url": base_url, "files": files}
    write_json(storage, storage_name(MANIFEST_NAME, prefix), manifest, indent=1)
