"""Builds into django-storages' S3 backend, against a real S3 API: moto's
standalone server, started by this module on 127.0.0.1 and a free port (its
own process, stopped at the end), one bucket per test (issue 24).

What this covers is what docs/deployment.md says was tested against S3: full,
incremental, ``--jobs 2`` and failed builds, ``--force`` (which lists the
bucket), the cache build lock, a failed build's plan read back (``--wait``,
``build_status``), and ``SERVE_BUILT`` reading the bucket.
Without moto or django-storages the tests are skipped; in CI (``CI`` set)
they fail instead.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from django_sitemaps_plus.build import BuildFailed, BuildRunning, build
from django_sitemaps_plus.build import status as build_status
from django_sitemaps_plus.build.files import MANIFEST_NAME
from django_sitemaps_plus.build.lock import build_lock
from django_sitemaps_plus.build.plan import PLAN_DIR
from django_sitemaps_plus.serving.storage import get_build_storage
from tests.build.test_build_jobs import pages, report  # noqa: F401 (pages: a fixture)
from tests.testapp.models import Article
from tests.utils import (
    assert_schema_valid,
    at,
    failing_page,
    fetch,
    free_port,
    locs,
    require_module,
    wait_for_port,
    worker_dies_writing,
)

# ``pages``: five files of two articles each (tests/build/test_build_jobs.py).
pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("pages"),
]

REGION = "us-east-1"
#: moto accepts any credentials; these are never sent anywhere else.
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def _require(module: str) -> None:
    """Import ``module``: a skip without it, a failure in CI."""
    require_module(module)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """moto's S3-compatible server on 127.0.0.1, for this module."""
    for module in ("moto.server", "flask", "storages.backends.s3", "boto3"):
        _require(module)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        # Not piped: its log of every request would fill a pipe nobody reads.
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, server)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


def _client(endpoint: str) -> Any:
    import boto3

    return boto3.client("s3", endpoint_url=endpoint, region_name=REGION, **CREDENTIALS)


class Bucket:
    """A versioned bucket of moto's: every PUT of a key adds a version, so
    "not rewritten" is "still one version", whatever the clock says."""

    def __init__(self, endpoint: str) -> None:
        self.name = f"sitemaps-{uuid.uuid4().hex[:12]}"
        self.client = _client(endpoint)
        self.client.create_bucket(Bucket=self.name)
        self.client.put_bucket_versioning(
            Bucket=self.name, VersioningConfiguration={"Status": "Enabled"}
        )

    def names(self) -> list[str]:
        found = self.client.list_objects_v2(Bucket=self.name).get("Contents", [])
        return sorted(entry["Key"] for entry in found)

    def read(self, key: str) -> bytes:
        body: bytes = self.client.get_object(Bucket=self.name, Key=key)["Body"].read()
        return body

    def objects(self) -> dict[str, bytes]:
        return {key: self.read(key) for key in self.names()}

    def head(self, key: str) -> dict[str, Any]:
        found: dict[str, Any] = self.client.head_object(Bucket=self.name, Key=key)
        return found

    def versions(self) -> dict[str, int]:
        """How many times each key was written (deletions aside)."""
        counts: dict[str, int] = {}
        listed = self.client.list_object_versions(Bucket=self.name)
        for version in listed.get("Versions", []):
            counts[version["Key"]] = counts.get(version["Key"], 0) + 1
        return counts


def _storage_settings(endpoint: str, bucket: str, **options: Any) -> dict[str, Any]:
    """STORAGES["sitemaps"]: django-storages' S3Storage on moto, as its docs
    configure it (OPTIONS are the AWS_S3_* settings' lower-case names)."""
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": bucket,
            "endpoint_url": endpoint,
            "region_name": REGION,
            "access_key": CREDENTIALS["aws_access_key_id"],
            "secret_key": CREDENTIALS["aws_secret_access_key"],
            "file_overwrite": True,
            **options,
        },
    }


@pytest.fixture
def bucket(endpoint: str, settings: Any) -> Bucket:
    """A new bucket, the build storage (``BUILD_STORAGE = "sitemaps"``)."""
    created = Bucket(endpoint)
    settings.STORAGES = {**settings.STORAGES, "sitemaps": _storage_settings(endpoint, created.name)}
    settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "BUILD_STORAGE": "sitemaps"}
    return created


SECTION_FILES = [f"sitemap-articles-{n}.xml" for n in range(1, 6)]


class TestBuildIntoS3:
    def test_full_build(self, bucket):
        result = report("--storage", "sitemaps", "--gzip")
        assert result["files"] == 6 and result["urls"] == 9
        stored = bucket.objects()
        # The files, their .gz copies and the manifest; no plan, record or lock.
        assert sorted(stored) == sorted(
            [MANIFEST_NAME, "sitemap.xml", "sitemap.xml.gz"]
            + SECTION_FILES
            + [f"{name}.gz" for name in SECTION_FILES]
        )
        index = stored["sitemap.xml"]
        assert_schema_valid(index)
        listed = [loc.rsplit("/", 1)[1] for loc in locs(index)]
        assert listed == SECTION_FILES
        for name in listed:
            assert_schema_valid(stored[name])
            # What the views render, byte for byte.
            assert stored[name] == fetch(f"/{name}")[1]
            assert gzip.decompress(stored[f"{name}.gz"]) == stored[name]
        manifest = json.loads(stored[MANIFEST_NAME])
        assert sorted(manifest["files"]) == sorted([*SECTION_FILES, "sitemap.xml"])

    def test_each_file_is_one_upload(self, bucket):
        calls: list[tuple[str, str]] = []

        def record(model: Any, params: dict[str, Any], **kwargs: Any) -> None:
            calls.append((model.name, params.get("Key", "")))

        events = get_build_storage().connection.meta.client.meta.events
        events.register("before-parameter-build.s3", record)
        try:
            build(get_build_storage())
        finally:
            events.unregister("before-parameter-build.s3", record)
        written = [*SECTION_FILES, "sitemap.xml"]
        # Into an empty bucket: a PutObject per file, no question about it before.
        assert sorted(call for call in calls if call[1] in written) == sorted(
            ("PutObject", name) for name in written
        )

    def test_a_bucket_that_keeps_existing_names(self, bucket, endpoint, settings):
        # file_overwrite=False: S3Storage would pick another name for an existing
        # key; the build deletes the old object first, and keeps its names.
        options = _storage_settings(endpoint, bucket.name, file_overwrite=False)
        settings.STORAGES = {**settings.STORAGES, "sitemaps": options}
        report("--storage", "sitemaps")
        Article.objects.filter(pk=9).update(updated_at=at(2), slug="renamed")
        assert report("--storage", "sitemaps")["written"] == [
            "sitemap-articles-5.xml",
            "sitemap.xml",
        ]
        assert bucket.names() == sorted([MANIFEST_NAME, "sitemap.xml", *SECTION_FILES])
        assert b"renamed" in bucket.read("sitemap-articles-5.xml")

    def test_second_build_rewrites_only_what_changed(self, bucket):
        report("--storage", "sitemaps")
        before = {key: bucket.head(key) for key in bucket.names()}
        Article.objects.filter(pk=9).update(updated_at=at(2), slug="changed")
        result = report("--storage", "sitemaps")
        assert result["written"] == ["sitemap-articles-5.xml", "sitemap.xml"]
        versions = bucket.versions()
        for key in before:
            after = bucket.head(key)
            if key in ("sitemap-articles-5.xml", "sitemap.xml", MANIFEST_NAME):
                assert after["ETag"] != before[key]["ETag"]
                assert after["VersionId"] != before[key]["VersionId"]
            else:
                # Not rewritten: the same object version, not just the same bytes.
                assert after["VersionId"] == before[key]["VersionId"]
                assert after["LastModified"] == before[key]["LastModified"]
                assert versions[key] == 1
        assert b"changed" in bucket.read("sitemap-articles-5.xml")

    def test_two_processes_write_the_same_objects_as_one(self, bucket, endpoint, settings):
        other = Bucket(endpoint)
        settings.STORAGES = {**settings.STORAGES, "two": _storage_settings(endpoint, other.name)}
        report("--storage", "sitemaps", "--gzip", "--text", "--jobs", "1")
        result = report("--storage", "two", "--gzip", "--text", "--jobs", "2")
        assert result["files"] == 11
        one, two = bucket.objects(), other.objects()
        assert len(one) == 23  # 11 files, their .gz copies, the manifest
        assert one == two

    def test_each_worker_opens_its_own_connection(self, bucket, tmp_path, monkeypatch):
        from django_sitemaps_plus.build import workers as build_module

        # The parent's connection (boto3 resource, its pooled sockets): the one
        # the build's own requests use, open before the workers are forked.
        parent = id(get_build_storage().connection)
        seen = tmp_path / "seen"
        original = build_module.run_job

        def recording(storage, plan, job, site=None, renew=lambda: None):
            with open(seen, "a") as handle:
                handle.write(f"{os.getpid()} {id(storage.connection)}\n")
            return original(storage, plan, job, site, renew)

        monkeypatch.setattr(build_module, "run_job", recording)
        assert report("--storage", "sitemaps", "--jobs", "2")["files"] == 6
        lines = [line.split() for line in seen.read_text().split("\n") if line]
        assert len(lines) == 5
        assert {pid for pid, _ in lines} - {str(os.getpid())} == {pid for pid, _ in lines}
        # Never the parent's: two workers sharing its sockets would mix replies.
        assert str(parent) not in {connection for _, connection in lines}

    def test_failed_build_leaves_the_previous_set(self, bucket, monkeypatch):
        report("--storage", "sitemaps")
        before = bucket.objects()
        Article.objects.filter(pk__in=[1, 9]).update(updated_at=at(3), slug="new")
        failing_page(monkeypatch, 2)
        with pytest.raises(BuildFailed) as failed:
            build(get_build_storage())
        assert failed.value.files == SECTION_FILES[1:]
        after = bucket.objects()
        # The plan stays for the next build; the served set is whole.
        assert f"{PLAN_DIR}/plan.json" in after
        served = {key: data for key, data in after.items() if not key.startswith(PLAN_DIR)}
        assert served.keys() == before.keys()
        assert served[MANIFEST_NAME] == before[MANIFEST_NAME]
        assert b"new" in served["sitemap-articles-1.xml"]
        assert served["sitemap-articles-5.xml"] == before["sitemap-articles-5.xml"]
        # The interim index: the old file names, page 1's and 5's new lastmod.
        assert_schema_valid(served["sitemap.xml"])
        for loc in locs(served["sitemap.xml"]):
            assert_schema_valid(served[loc.rsplit("/", 1)[1]])
        monkeypatch.undo()
        result = build(get_build_storage())
        assert result.resumed == ["sitemap-articles-1.xml"]
        assert "sitemap-articles-5.xml" in result.written
        assert not [key for key in bucket.names() if key.startswith(PLAN_DIR)]
        assert b"new" in bucket.read("sitemap-articles-5.xml")

    def test_a_failed_builds_plan_is_read_from_the_bucket(self, bucket, monkeypatch):
        """What the overview's running build and ``--wait`` read: the plan
        and a listing of its records in the bucket."""
        failing_page(monkeypatch, 2)
        with pytest.raises(BuildFailed):
            build(get_build_storage())
        running = build_status.running_build(get_build_storage())
        assert running is not None and (running.jobs_done, running.jobs) == (1, 5)
        assert running.missing == SECTION_FILES[1:] and running.since is not None
        with pytest.raises(CommandError) as failed:
            call_command("build_sitemaps", "--wait", "--stalled-after", "0", "--quiet")
        assert failed.value.returncode == 1
        assert "4 file(s) not built: sitemap-articles-2.xml, " in str(failed.value)
        monkeypatch.undo()
        build(get_build_storage())
        assert build_status.running_build(get_build_storage()) is None
        last = build_status.last_build(get_build_storage())
        assert (last["files"], last["urls"], last["summary"]["resumed"]) == (6, 9, 1)

    def test_a_worker_killed_while_uploading_leaves_the_previous_set(self, bucket, monkeypatch):
        report("--storage", "sitemaps")
        before = bucket.objects()
        Article.objects.update(slug="changed")  # every file changes
        # The worker uploading page 2 dies (SIGKILL) as the storage reads its
        # content for the upload (tests.utils.worker_dies_writing).
        worker_dies_writing(monkeypatch, "sitemap-articles-2.xml")
        with pytest.raises(CommandError) as failed:
            call_command("build_sitemaps", "--storage", "sitemaps", "--jobs", "2", "--quiet")
        assert failed.value.returncode == 1
        error = failed.value.__cause__
        assert isinstance(error, BuildFailed) and "sitemap-articles-2.xml" in error.files
        after = bucket.objects()
        for name in ("sitemap.xml", MANIFEST_NAME, "sitemap-articles-2.xml"):
            assert after[name] == before[name]
        # Never replaced, not even by a partial object.
        assert bucket.versions()["sitemap-articles-2.xml"] == 1
        for loc in locs(after["sitemap.xml"]):
            assert_schema_valid(after[loc.rsplit("/", 1)[1]])
        monkeypatch.undo()
        result = report("--storage", "sitemaps", "--jobs", "2")
        assert "sitemap-articles-2.xml" in result["written"]
        assert b"changed" in bucket.read("sitemap-articles-2.xml")
        assert not [key for key in bucket.names() if key.startswith(PLAN_DIR)]

    def test_force_removes_unlisted_files_found_by_listing(self, bucket):
        report("--storage", "sitemaps", "--gzip")
        # A file no manifest names (an earlier build's, its manifest lost).
        for key in ("sitemap-articles-6.xml", "sitemap-articles-6.xml.gz"):
            bucket.client.put_object(Bucket=bucket.name, Key=key, Body=b"<urlset/>")
        result = report("--storage", "sitemaps", "--gzip", "--force")
        assert result["removed"] == ["sitemap-articles-6.xml"]
        assert "sitemap-articles-6.xml" not in bucket.names()
        assert "sitemap-articles-6.xml.gz" not in bucket.names()

    def test_prefix(self, bucket, settings):
        settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "BUILD_PREFIX": "maps"}
        report("--storage", "sitemaps")
        assert bucket.names() == sorted(
            f"maps/{name}" for name in [MANIFEST_NAME, "sitemap.xml", *SECTION_FILES]
        )

    # CI runs it again on Redis and Memcached: the lock machines share.
    @pytest.mark.cache
    def test_second_build_is_refused_while_the_cache_lock_is_held(self, bucket):
        with build_lock(get_build_storage(), ""), pytest.raises(CommandError) as refused:
            call_command("build_sitemaps", "--storage", "sitemaps", "--quiet")
        assert refused.value.returncode == 3
        assert bucket.names() == []

    def test_the_lock_of_one_bucket_leaves_another_free(self, bucket, endpoint, settings):
        other = Bucket(endpoint)
        settings.STORAGES = {**settings.STORAGES, "two": _storage_settings(endpoint, other.name)}
        from django.core.files.storage import storages

        with build_lock(get_build_storage(), ""):
            # The same bucket through another alias (another machine's settings) waits.
            settings.STORAGES = {
                **settings.STORAGES,
                "same": _storage_settings(endpoint, bucket.name),
            }
            with pytest.raises(BuildRunning):
                build(storages["same"])
            assert build(storages["two"]).urls == 9
        assert "sitemap.xml" in other.names() and bucket.names() == []


class TestServeFromS3:
    @pytest.fixture
    def served(self, bucket, settings) -> Bucket:
        report("--storage", "sitemaps", "--gzip")
        settings.SITEMAPS_PLUS = {
            **settings.SITEMAPS_PLUS,
            "SERVE_BUILT": "serve",
            "BUILD_GZIP": True,
        }
        return bucket

    def test_serves_the_objects(self, served):
        response, body = fetch("/sitemap-articles-2.xml")
        assert response.status_code == 200
        assert body == served.read("sitemap-articles-2.xml")
        assert response["Content-Type"] == "application/xml; charset=utf-8"
        again = Client().get(
            "/sitemap-articles-2.xml", HTTP_IF_MODIFIED_SINCE=response["Last-Modified"]
        )
        assert again.status_code == 304

    def test_gzip_copy_and_index(self, served):
        response, body = fetch("/sitemap.xml", HTTP_ACCEPT_ENCODING="gzip")
        assert response.status_code == 200
        assert response["Content-Encoding"] == "gzip"
        assert gzip.decompress(body) == served.read("sitemap.xml")

    def test_a_missing_object_is_404(self, served):
        assert Client().get("/sitemap-articles-9.xml").status_code == 404

    def test_redirect_to_the_bucket(self, served, settings):
        settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "SERVE_BUILT": "redirect"}
        response = Client().get("/sitemap-articles-3.xml")
        assert response.status_code == 302
        # The storage's own (signed) URL, answered by the S3 server itself.
        with urllib.request.urlopen(response["Location"], timeout=10) as answer:
            assert answer.read() == served.read("sitemap-articles-3.xml")
