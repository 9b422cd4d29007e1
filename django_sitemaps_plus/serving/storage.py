"""Where static builds go, how a file is replaced atomically, how views serve it.

Builds write to a Django storage: ``SITEMAPS_PLUS["BUILD_STORAGE"]`` names an
alias of ``settings.STORAGES`` (S3 through django-storages, say); without it a
``FileSystemStorage`` at ``BUILD_DIR``.

Replacing a file never shows a reader a half-written one:

- on a ``FileSystemStorage`` the new content goes to a temporary name in the
  same directory, is flushed to disk, and ``os.replace`` renames it over the
  old one (atomic on POSIX and Windows);
- object stores (S3, GCS, Azure) publish an upload whole when it completes, so
  a storage that overwrites in place (django-storages' default
  ``file_overwrite = True``) is atomic per file too. A storage that would pick
  another name for an existing file gets a delete then a save: a short window
  in which that one file is missing (documented in docs/deployment.md).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from typing import IO

from django.core.exceptions import ImproperlyConfigured
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages
from django.core.handlers.asgi import ASGIRequest
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponseBase,
    HttpResponseRedirect,
)

from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.serving.responses import (
    accepts_gzip,
    finish,
    respond_conditionally,
    streaming_response,
)

#: Bytes read or written per step when copying files.
COPY_CHUNK = 256 * 1024


def get_build_storage(alias: str | None = None, directory: str | None = None) -> Storage:
    """The storage builds write to and ``SERVE_BUILT`` reads from."""
    alias = alias or conf.BUILD_STORAGE
    if alias:
        return storages[alias]
    directory = directory or conf.BUILD_DIR
    if not directory:
        raise ImproperlyConfigured(
            "Set SITEMAPS_PLUS['BUILD_DIR'] (a directory) or SITEMAPS_PLUS['BUILD_STORAGE'] "
            "(an alias of STORAGES) to build or serve sitemap files."
        )
    return FileSystemStorage(location=directory)


def storage_name(name: str, prefix: str | None = None) -> str:
    """``name`` inside the build folder (``BUILD_PREFIX``)."""
    prefix = conf.BUILD_PREFIX if prefix is None else prefix
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    return f"{prefix}{name}"


def write_atomic(storage: Storage, name: str, source: IO[bytes]) -> None:
    """Replace ``name`` with the bytes of ``source`` so no reader sees a partial file."""
    source.seek(0)
    if isinstance(storage, FileSystemStorage):
        path = storage.path(name)
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        temporary = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
        try:
            with open(temporary, "wb") as out:
                while chunk := source.read(COPY_CHUNK):
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            if storage.file_permissions_mode is not None:
                os.chmod(temporary, storage.file_permissions_mode)
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
        return
    # A storage that overwrites (django-storages' default) answers with the
    # name itself and is asked nothing else; one that renames an existing
    # name instead needs room made first.
    if storage.get_available_name(name) != name:
        storage.delete(name)
    saved = storage.save(name, File(source, name=os.path.basename(name)))
    if saved != name:  # pragma: no cover - a storage that renames regardless
        raise OSError(f"Storage saved {name!r} as {saved!r}.")


def write_bytes(storage: Storage, name: str, chunks: Iterable[bytes]) -> None:
    """``write_atomic`` for content given as chunks (spooled through a temp file)."""
    with tempfile.TemporaryFile() as spool:
        for chunk in chunks:
            spool.write(chunk)
        write_atomic(storage, name, spool)


def read_bytes(storage: Storage, name: str) -> bytes | None:
    """The content of ``name``, or None when it does not exist."""
    try:
        with storage.open(name, "rb") as handle:
            data = handle.read()
    except (FileNotFoundError, OSError):
        return None
    return data if isinstance(data, bytes) else str(data).encode()


def _read_chunks(handle: IO[bytes]) -> Iterator[bytes]:
    try:
        while chunk := handle.read(COPY_CHUNK):
            yield chunk
    finally:
        handle.close()


def serve_built(request: HttpRequest, name: str, content_type: str) -> HttpResponseBase:
    """A built file, streamed from the storage or by redirect to its URL."""
    storage = get_build_storage()
    path = storage_name(name)
    if conf.SERVE_BUILT == "redirect":
        # The storage's own URL (a CDN, S3): its server answers conditional
        # requests and compression itself.
        return finish(HttpResponseRedirect(storage.url(path)))
    gzip = conf.BUILD_GZIP and accepts_gzip(request) and storage.exists(path + ".gz")
    chosen = path + ".gz" if gzip else path
    try:
        modified = storage.get_modified_time(chosen)
    except NotImplementedError:
        modified = None
    except Exception:
        # Each storage says "missing" its own way (FileNotFoundError here,
        # botocore's ClientError 404 in django-storages' S3): ask it.
        if storage.exists(chosen):
            raise
        raise Http404("No such sitemap file.") from None
    last_modified = int(modified.timestamp()) if modified is not None else None

    def full() -> HttpResponseBase:
        try:
            handle = storage.open(chosen, "rb")
        except (FileNotFoundError, OSError):
            raise Http404("No such sitemap file.") from None
        file_response: HttpResponseBase
        if isinstance(request, ASGIRequest):
            # FileResponse's file iterator is synchronous: read in a thread.
            file_response = streaming_response(request, _read_chunks(handle), content_type)
            with contextlib.suppress(NotImplementedError, OSError):
                file_response["Content-Length"] = str(storage.size(chosen))
        else:
            file_response = FileResponse(handle, content_type=content_type)
        if gzip:
            file_response["Content-Encoding"] = "gzip"
        return file_response

    response = respond_conditionally(request, last_modified, content_type, full)
    if conf.BUILD_GZIP:
        response["Vary"] = "Accept-Encoding"
    return finish(response, last_modified)
