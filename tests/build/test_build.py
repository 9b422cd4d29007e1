"""Static builds: atomic, incremental, to any storage; serving built files; --from-urls."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
from pathlib import Path

import pytest
from django.core.files.storage import FileSystemStorage, InMemoryStorage
from django.core.management import CommandError, call_command
from django.test import Client

from django_sitemaps_plus import register
from django_sitemaps_plus.build import BuildFailed, build, generate_from_urls
from django_sitemaps_plus.build.files import MANIFEST_NAME
from django_sitemaps_plus.build.lock import LOCK_NAME
from django_sitemaps_plus.build.plan import PLAN_DIR
from django_sitemaps_plus.sections import ModelSection
from django_sitemaps_plus.signals import sitemaps_built
from tests.serving.test_cache import received
from tests.testapp.models import Article
from tests.utils import articles, assert_schema_valid, failing_page, fetch, locs

pytestmark = pytest.mark.django_db


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "built"


@pytest.fixture
def site_with_pages(registry):
    register(Article, limit=2)
    articles(5)  # pages 1, 2, 3


def read(path: Path) -> bytes:
    return path.read_bytes()


class TestBuild:
    def test_writes_every_file_as_the_views_serve_it(self, site_with_pages, out):
        result = build(FileSystemStorage(location=str(out)))
        names = sorted(n for n in os.listdir(out) if n != LOCK_NAME)
        assert names == [
            "sitemap-articles-1.xml",
            "sitemap-articles-2.xml",
            "sitemap-articles-3.xml",
            "sitemap.xml",
            MANIFEST_NAME,
        ]
        assert result.urls == 5
        assert len(result.written) == 4 and result.skipped == [] and result.removed == []
        for name in names[:-1]:
            _, served = fetch("/" + name)
            assert read(out / name) == served
            assert_schema_valid(served)
        assert locs(read(out / "sitemap.xml")) == [
            f"https://example.com/sitemap-articles-{n}.xml" for n in (1, 2, 3)
        ]

    def test_incremental_rewrites_only_changed_page_and_index(self, site_with_pages, out, settings):
        storage = FileSystemStorage(location=str(out))
        build(storage)
        again = build(storage)
        assert again.written == [] and len(again.skipped) == 4
        article = Article.objects.get(pk=3)
        article.slug = "changed"
        article.save()
        after = build(storage)
        # The page's content changed; no lastmod field, so the index did not.
        assert after.written == ["sitemap-articles-2.xml"]
        assert b"changed" in read(out / "sitemap-articles-2.xml")

    def test_changed_lastmod_rewrites_page_and_index(self, registry, out):
        import datetime as dt

        register(Article, limit=2, lastmod_fields=["updated_at"])
        articles(5)
        storage = FileSystemStorage(location=str(out))
        build(storage)
        Article.objects.filter(pk=5).update(
            updated_at=dt.datetime(2024, 1, 2, tzinfo=dt.timezone.utc)
        )
        result = build(storage)
        assert result.written == ["sitemap-articles-3.xml", "sitemap.xml"]
        assert len(result.skipped) == 2

    def test_removed_pages_are_deleted_after_the_index(self, site_with_pages, out):
        storage = FileSystemStorage(location=str(out))
        build(storage, gzip=True)
        Article.objects.filter(pk=5).delete()
        result = build(storage, gzip=True)
        assert result.removed == ["sitemap-articles-3.xml"]
        assert not (out / "sitemap-articles-3.xml").exists()
        assert not (out / "sitemap-articles-3.xml.gz").exists()
        assert len(locs(read(out / "sitemap.xml"))) == 2

    def test_built_signal_is_sent_once_the_files_are_written(self, site_with_pages, out):
        storage = FileSystemStorage(location=str(out))
        on_storage: list[bool] = []

        def receiver(result, **kwargs: object) -> None:
            on_storage.append(all(storage.exists(name) for name in result.written))

        sitemaps_built.connect(receiver, weak=False)
        with received(sitemaps_built) as sent:
            try:
                result = build(storage)
            finally:
                sitemaps_built.disconnect(receiver)
        assert len(sent) == 1 and sent[0]["result"] is result
        assert on_storage == [True] and len(result.written) == 4

    def test_gzip_copies(self, site_with_pages, out):
        build(FileSystemStorage(location=str(out)), gzip=True)
        for name in ("sitemap.xml", "sitemap-articles-1.xml"):
            assert gzip.decompress(read(out / f"{name}.gz")) == read(out / name)

    def test_gzip_switched_off_leaves_no_gz_copies(self, site_with_pages, out):
        storage = FileSystemStorage(location=str(out))
        build(storage, gzip=True)
        Article.objects.filter(pk=3).update(slug="changed")
        result = build(storage, gzip=False)
        assert result.written == ["sitemap-articles-2.xml"]
        assert b"changed" in read(out / "sitemap-articles-2.xml")
        # A server preferring .gz (nginx gzip_static) would send the old content.
        assert not [name for name in os.listdir(out) if name.endswith(".gz")]

    def test_gz_copies_are_the_bytes_the_cache_stores(self, site_with_pages, out):
        from django_sitemaps_plus.serving.responses import gzip_chunks

        build(FileSystemStorage(location=str(out)), gzip=True)
        plain = read(out / "sitemap-articles-1.xml")
        assert read(out / "sitemap-articles-1.xml.gz") == b"".join(gzip_chunks([plain]))
        manifest = json.loads(read(out / MANIFEST_NAME))["files"]["sitemap-articles-1.xml"]
        assert (manifest["sha256"], manifest["bytes"]) == (
            hashlib.sha256(plain).hexdigest(),
            len(plain),
        )

    def test_missing_gz_copy_is_written_again(self, site_with_pages, out):
        storage = FileSystemStorage(location=str(out))
        build(storage, gzip=True)
        (out / "sitemap-articles-2.xml.gz").unlink()
        result = build(storage, gzip=True)
        assert result.written == ["sitemap-articles-2.xml"]
        plain = read(out / "sitemap-articles-2.xml")
        assert gzip.decompress(read(out / "sitemap-articles-2.xml.gz")) == plain

    def test_unchanged_files_are_not_compressed(self, site_with_pages, out, monkeypatch):
        import zlib

        storage = FileSystemStorage(location=str(out))
        build(storage, gzip=True)
        compressors: list[object] = []
        compressobj = zlib.compressobj

        def counting(*args: object, **kwargs: object) -> object:
            compressors.append(args)
            return compressobj(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(zlib, "compressobj", counting)
        assert len(build(storage, gzip=True).skipped) == 4
        assert compressors == []
        Article.objects.filter(pk=3).update(slug="changed")
        assert build(storage, gzip=True).written == ["sitemap-articles-2.xml"]
        assert len(compressors) == 1

    def test_too_many_files_for_one_index_fail_before_rendering(
        self, site_with_pages, out, monkeypatch
    ):
        from django_sitemaps_plus import protocol

        monkeypatch.setattr(protocol, "MAX_SITEMAPS_PER_INDEX", 2)
        rendered: list[int] = []
        original = ModelSection.page_entries

        def counting(self, number, site, info=None):
            rendered.append(number)
            return original(self, number, site, info)

        monkeypatch.setattr(ModelSection, "page_entries", counting)
        with pytest.raises(ValueError, match="would list 3 files"):
            build(FileSystemStorage(location=str(out)))
        assert rendered == []
        assert not out.exists() or os.listdir(out) in ([], [LOCK_NAME])

    def test_failed_build_leaves_previous_set_intact(self, site_with_pages, out, monkeypatch):
        storage = FileSystemStorage(location=str(out))
        build(storage)
        before = {name: read(out / name) for name in os.listdir(out)}
        Article.objects.filter(pk__in=[1, 3]).update(slug="new")
        failing_page(monkeypatch, 2)
        with pytest.raises(BuildFailed) as failed:
            build(storage)
        assert failed.value.files == ["sitemap-articles-2.xml", "sitemap-articles-3.xml"]
        # The plan stays for the next build to resume.
        assert (out / PLAN_DIR / "plan.json").exists()
        after = {name: read(out / name) for name in os.listdir(out) if name != PLAN_DIR}
        # Page 1 was replaced whole; the index and manifest are the old ones and
        # name only complete files; no temporary file is left behind.
        assert after.keys() == before.keys()
        assert after["sitemap.xml"] == before["sitemap.xml"]
        assert after[MANIFEST_NAME] == before[MANIFEST_NAME]
        assert b"new" in after["sitemap-articles-1.xml"]
        for name in locs(after["sitemap.xml"]):
            assert_schema_valid(after[name.rsplit("/", 1)[1]])
        monkeypatch.undo()
        result = build(storage)
        # Only what is missing is built: page 1's job finished before the failure.
        assert result.resumed == ["sitemap-articles-1.xml"]
        assert result.written == ["sitemap-articles-2.xml"]
        # The slugs moved no lastmod: the index (and page 3) are what is stored.
        assert result.skipped == ["sitemap-articles-3.xml", "sitemap.xml"]
        assert not (out / PLAN_DIR).exists()
        assert b"new" in read(out / "sitemap-articles-2.xml")

    def test_second_storage_alias(self, site_with_pages, settings):
        settings.STORAGES = {
            **settings.STORAGES,
            "sitemaps": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
        }
        from django.core.files.storage import storages

        call_command("build_sitemaps", "--storage", "sitemaps", "--quiet")
        storage = storages["sitemaps"]
        assert isinstance(storage, InMemoryStorage)
        with storage.open("sitemap.xml") as handle:
            assert len(locs(handle.read())) == 3
        # Again: unchanged files are not rewritten; changed ones are replaced in place.
        Article.objects.filter(pk=1).update(slug="in-memory")
        call_command("build_sitemaps", "--storage", "sitemaps", "--quiet")
        with storage.open("sitemap-articles-1.xml") as handle:
            assert b"in-memory" in handle.read()
        assert sorted(storage.listdir("")[1]) == sorted(
            ["sitemap.xml", MANIFEST_NAME] + [f"sitemap-articles-{n}.xml" for n in (1, 2, 3)]
        )

    def test_prefix_and_text_files(self, site_with_pages, out, settings):
        settings.SITEMAPS_PLUS = {**settings.SITEMAPS_PLUS, "BUILD_PREFIX": "maps"}
        build(FileSystemStorage(location=str(out)), text=True)
        assert (out / "maps" / "sitemap-articles-1.txt").read_text() == (
            "https://example.com/articles/article-0/\nhttps://example.com/articles/article-1/\n"
        )


class TestCommand:
    def test_reports_written_skipped_removed(self, site_with_pages, out):
        stdout = io.StringIO()
        call_command("build_sitemaps", "--dir", str(out), stdout=stdout)
        assert "4 files (5 URLs): 4 written, 0 unchanged, 0 removed" in stdout.getvalue()
        stdout = io.StringIO()
        call_command("build_sitemaps", "--dir", str(out), "-v", "2", stdout=stdout)
        assert "skipped  sitemap.xml" in stdout.getvalue()
        assert "0 written, 4 unchanged" in stdout.getvalue()

    def test_quiet_and_json(self, site_with_pages, out):
        stdout = io.StringIO()
        call_command("build_sitemaps", "--dir", str(out), "--quiet", stdout=stdout)
        assert stdout.getvalue() == ""
        stdout = io.StringIO()
        call_command("build_sitemaps", "--dir", str(out), "--format", "json", stdout=stdout)
        report = json.loads(stdout.getvalue())
        assert report["files"] == 4 and report["written"] == []
        assert set(report) == {
            "written", "skipped", "resumed", "removed", "files", "urls", "seconds"
        }  # fmt: skip
        assert report["urls"] == 5 and round(report["seconds"], 3) == report["seconds"]

    def test_bad_usage_exits_2(self, site_with_pages, settings):
        settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com"}
        with pytest.raises(CommandError) as no_target:
            call_command("build_sitemaps")
        assert no_target.value.returncode == 2
        with pytest.raises(CommandError) as bad_alias:
            call_command("build_sitemaps", "--storage", "nosuch")
        assert bad_alias.value.returncode == 2

    def test_no_host_is_usage_error_unless_base_url(self, site_with_pages, out, settings):
        settings.SITEMAPS_PLUS = {}
        settings.INSTALLED_APPS = [
            a for a in settings.INSTALLED_APPS if a != "django.contrib.sites"
        ]
        with pytest.raises(CommandError) as error:
            call_command("build_sitemaps", "--dir", str(out))
        assert error.value.returncode == 2
        call_command("build_sitemaps", "--dir", str(out), "--base-url", "https://b.example/")
        assert "https://b.example/sitemap-articles-1.xml" in (out / "sitemap.xml").read_text()

    def test_exit_codes_from_the_shell(self, site_with_pages, out):
        """Through call_command's parser: --format xml without --from-urls is usage."""
        with pytest.raises(CommandError) as error:
            call_command("build_sitemaps", "--dir", str(out), "--format", "xml")
        assert error.value.returncode == 2


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Progress shows from the first file, a line for each (no waiting in tests)."""
    from django_sitemaps_plus.management import progress

    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)


class TestProgress:
    def test_piped_a_line_per_file_with_files_written_and_urls(self, site_with_pages, out, at_once):
        stdout, stderr = io.StringIO(), io.StringIO()
        call_command("build_sitemaps", "--dir", str(out), stdout=stdout, stderr=stderr)
        lines = [line.rsplit(", ", 1)[0] for line in stderr.getvalue().splitlines()]
        assert lines == [
            "build_sitemaps: 1/4 files, 1 written, 2 URLs",
            "build_sitemaps: 2/4 files, 2 written, 4 URLs",
            "build_sitemaps: 3/4 files, 3 written, 5 URLs",
            "build_sitemaps: 4/4 files, 4 written, 5 URLs",
        ]
        assert "4 files (5 URLs): 4 written" in stdout.getvalue()  # the report is unchanged
        stderr = io.StringIO()
        call_command("build_sitemaps", "--dir", str(out), stdout=stdout, stderr=stderr)
        assert (
            stderr.getvalue()
            .splitlines()[-1]
            .startswith("build_sitemaps: 4/4 files, 0 written, 5 URLs, ")
        )

    def test_piped_at_most_a_line_per_interval_and_the_last(
        self, site_with_pages, out, at_once, monkeypatch
    ):
        from django_sitemaps_plus.management import progress

        monkeypatch.setattr(progress, "INTERVAL", 3600.0)
        stderr = io.StringIO()
        call_command("build_sitemaps", "--dir", str(out), stdout=io.StringIO(), stderr=stderr)
        lines = stderr.getvalue().splitlines()
        assert [line.split(" files")[0] for line in lines] == [
            "build_sitemaps: 1/4",
            "build_sitemaps: 4/4",
        ]

    def test_a_bar_redrawn_on_a_terminal(self, site_with_pages, out, at_once):
        stderr = Terminal()
        call_command("build_sitemaps", "--dir", str(out), stdout=io.StringIO(), stderr=stderr)
        drawn = stderr.getvalue()
        assert drawn.count("\r[") == 4 and drawn.endswith("\n") and drawn.count("\n") == 1
        assert f"\r[{'#' * 30}] 4/4 files, 4 written, 5 URLs" in drawn
        assert "\x1b[" not in drawn  # not in the error style

    def test_nothing_for_a_quick_run_or_when_quiet(self, site_with_pages, out, monkeypatch):
        from django_sitemaps_plus.management import progress

        monkeypatch.setattr(progress, "DELAY", 3600.0)
        for stderr in (io.StringIO(), Terminal()):
            call_command("build_sitemaps", "--dir", str(out), stdout=io.StringIO(), stderr=stderr)
            assert stderr.getvalue() == ""
        monkeypatch.setattr(progress, "DELAY", 0.0)
        for quiet in (["--quiet"], ["-v", "0"]):
            stderr = io.StringIO()
            call_command(
                "build_sitemaps", "--dir", str(out), *quiet, stdout=io.StringIO(), stderr=stderr
            )
            assert stderr.getvalue() == ""


class TestFromUrlsOptions:
    """Options of --from-urls without it: a usage error naming what they need,
    even where no storage is configured (that error would hide this one)."""

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (["--format", "xml"], "--format xml needs --from-urls FILE"),
            (["--format", "txt"], "--format txt needs --from-urls FILE"),
            (["--lastmod", "2024-05-01"], "--lastmod needs --from-urls FILE"),
            (["--url-prefix", "/maps/"], "--url-prefix needs --from-urls FILE"),
        ],
    )
    def test_usage_error_names_the_option_needed(self, settings, args, message):
        settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com"}  # no BUILD_DIR
        with pytest.raises(CommandError, match=message) as error:
            call_command("build_sitemaps", *args)
        assert error.value.returncode == 2


class TestServeBuilt:
    @pytest.fixture
    def built(self, site_with_pages, out, settings):
        build(FileSystemStorage(location=str(out)), gzip=True)
        settings.SITEMAPS_PLUS = {
            "BASE_URL": "https://example.com",
            "SERVE_BUILT": "serve",
            "BUILD_DIR": str(out),
            "BUILD_GZIP": True,
        }
        return out

    def test_serves_built_files_without_queries(self, built, django_assert_num_queries):
        with django_assert_num_queries(0):
            response, body = fetch("/sitemap-articles-1.xml")
        assert response.status_code == 200
        assert body == read(built / "sitemap-articles-1.xml")
        assert response["Content-Type"] == "application/xml; charset=utf-8"
        assert "Last-Modified" in response

    def test_gzip_conditional_and_missing(self, built):
        response, body = fetch("/sitemap.xml", HTTP_ACCEPT_ENCODING="gzip")
        assert response["Content-Encoding"] == "gzip"
        assert gzip.decompress(body) == read(built / "sitemap.xml")
        again = Client().get("/sitemap.xml", HTTP_IF_MODIFIED_SINCE=response["Last-Modified"])
        assert again.status_code == 304
        assert Client().get("/sitemap-articles-9.xml").status_code == 404

    def test_redirect_mode(self, built, settings):
        settings.STORAGES = {
            **settings.STORAGES,
            "cdn": {
                "BACKEND": "django.core.files.storage.FileSystemStorage",
                "OPTIONS": {"location": str(built), "base_url": "https://cdn.example.com/maps/"},
            },
        }
        settings.SITEMAPS_PLUS = {
            "BASE_URL": "https://example.com",
            "SERVE_BUILT": "redirect",
            "BUILD_STORAGE": "cdn",
        }
        response = Client().get("/sitemap-articles-2.xml")
        assert response.status_code == 302
        assert response["Location"] == "https://cdn.example.com/maps/sitemap-articles-2.xml"


class TestFromUrls:
    def test_small_list_gives_one_file_and_robots_line(self, tmp_path):
        listing = tmp_path / "urls.txt"
        listing.write_text(
            "https://example.org/\n\n# a comment\nhttps://example.org/a?x=1&y=2\n"
            "https://example.org/über\n"
        )
        out = tmp_path / "out"
        stdout, stderr = io.StringIO(), io.StringIO()
        call_command(
            "build_sitemaps",
            "--from-urls",
            str(listing),
            "--dir",
            str(out),
            "--lastmod",
            "2024-05-01",
            stdout=stdout,
            stderr=stderr,
        )
        body = (out / "sitemap.xml").read_bytes()
        assert_schema_valid(body)
        assert locs(body) == [
            "https://example.org/",
            "https://example.org/a?x=1&y=2",
            "https://example.org/%C3%BCber",
        ]
        assert body.count(b"<lastmod>2024-05-01</lastmod>") == 3
        assert "Sitemap: https://example.org/sitemap.xml" in stdout.getvalue()
        assert "really changed" in stderr.getvalue()

    def test_over_the_limit_gives_files_and_an_index(self, tmp_path):
        storage = FileSystemStorage(location=str(tmp_path))
        urls = [f"https://example.org/p/{n}" for n in range(5)]
        generated = generate_from_urls(urls, storage, limit=2, url_prefix="/maps")
        assert generated.files == ["sitemap-1.xml", "sitemap-2.xml", "sitemap-3.xml", "sitemap.xml"]
        assert locs((tmp_path / "sitemap.xml").read_bytes()) == [
            f"https://example.org/maps/sitemap-{n}.xml" for n in (1, 2, 3)
        ]
        assert generated.robots_lines == ["Sitemap: https://example.org/maps/sitemap.xml"]
        assert locs((tmp_path / "sitemap-3.xml").read_bytes()) == ["https://example.org/p/4"]

    def test_text_format_over_the_limit_lists_each_file_in_robots(self, tmp_path):
        storage = FileSystemStorage(location=str(tmp_path))
        generated = generate_from_urls(
            [f"https://example.org/{n}" for n in range(3)], storage, fmt="txt", limit=2
        )
        assert generated.files == ["sitemap-1.txt", "sitemap-2.txt"]
        assert (tmp_path / "sitemap-2.txt").read_text() == "https://example.org/2\n"
        assert len(generated.robots_lines) == 2

    def test_rejected_lines_exit_1_and_bad_lastmod_exits_2(self, tmp_path):
        listing = tmp_path / "urls.txt"
        listing.write_text(
            "https://example.org/\n/relative\nhttps://other.org/\nhttps://example.org/\n"
        )
        stderr = io.StringIO()
        with pytest.raises(CommandError) as error:
            call_command(
                "build_sitemaps",
                "--from-urls",
                str(listing),
                "--dir",
                str(tmp_path / "o"),
                stderr=stderr,
                stdout=io.StringIO(),
            )
        assert error.value.returncode == 1
        assert "line 2" in stderr.getvalue() and "line 3" in stderr.getvalue()
        assert "duplicate" in stderr.getvalue()
        assert locs((tmp_path / "o" / "sitemap.xml").read_bytes()) == ["https://example.org/"]
        with pytest.raises(CommandError) as bad:
            call_command(
                "build_sitemaps",
                "--from-urls",
                str(listing),
                "--dir",
                str(tmp_path / "o"),
                "--lastmod",
                "yesterday",
            )
        assert bad.value.returncode == 2
