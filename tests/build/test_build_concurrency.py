"""Builds under concurrency and faults: one build at a time, nothing stale left,
an index whose lastmods never lag the files (issue: reliability)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from django.core.files.storage import FileSystemStorage, InMemoryStorage
from django.core.management import CommandError, call_command

from django_sitemaps_plus import register
from django_sitemaps_plus.build import BuildRunning, build
from django_sitemaps_plus.build.lock import build_lock
from tests.testapp.models import Article
from tests.utils import articles, at, failing_file, locs

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]

HOLDER = textwrap.dedent(
    """
    import os, sys
    import django
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    django.setup()
    from django.core.files.storage import FileSystemStorage
    from django_sitemaps_plus.build.lock import build_lock

    with build_lock(FileSystemStorage(location=sys.argv[1]), ""):
        print("locked", flush=True)
        sys.stdin.read()  # held until the test closes stdin
    """
)


def start_holder(out: Path) -> subprocess.Popen[str]:
    """Another process that holds the build lock of ``out`` until its
    standard input is closed (or it is killed)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "built"


@pytest.fixture
def pages(registry) -> None:
    register(Article, limit=2, lastmod_fields=["updated_at"])
    for article in articles(5):  # pages 1, 2, 3
        Article.objects.filter(pk=article.pk).update(updated_at=at(1))


class TestOneBuildAtATime:
    @pytest.mark.slow
    def test_a_build_in_another_process_holds_the_directory(self, pages, out):
        out.mkdir()
        holder = start_holder(out)
        try:
            with pytest.raises(BuildRunning, match="Another build_sitemaps"):
                build(FileSystemStorage(location=str(out)))
            with pytest.raises(CommandError, match="Nothing was written") as refused:
                call_command("build_sitemaps", "--dir", str(out), "--quiet")
            assert refused.value.returncode == 3
            assert sorted(os.listdir(out)) == [".sitemaps-build.lock"]
        finally:
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=30)
        # Released when the holder ends (however it ends): the next build runs.
        assert "sitemap.xml" in build(FileSystemStorage(location=str(out))).written

    @pytest.mark.slow
    def test_a_killed_holder_frees_the_lock(self, pages, out):
        out.mkdir()
        holder = start_holder(out)
        holder.kill()
        holder.wait(timeout=30)
        assert "sitemap.xml" in build(FileSystemStorage(location=str(out))).written

    @pytest.mark.cache
    def test_other_storages_are_locked_in_the_cache(self, pages, settings):
        settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
        storage = InMemoryStorage()
        with build_lock(storage, ""), pytest.raises(BuildRunning, match="cache lock"):
            build(storage)
        assert "sitemap.xml" in build(storage).written
        # Released after the build: another one can run.
        assert build(storage).skipped


class TestLeftovers:
    def test_temporary_files_of_a_killed_build_are_removed(self, pages, out):
        out.mkdir()
        stale = out / f".sitemap-articles-1.xml.{'a' * 32}.tmp"
        stale.write_bytes(b"half a file")
        unrelated = out / ".keep.tmp"
        unrelated.write_bytes(b"not ours")
        build(FileSystemStorage(location=str(out)))
        assert not stale.exists()
        assert unrelated.exists()

    def test_force_removes_files_the_new_index_does_not_list(self, pages, out):
        storage = FileSystemStorage(location=str(out))
        build(storage)
        Article.objects.filter(pk__gte=3).delete()  # page 3 and 2 are gone
        (out / "sitemap-articles-9.xml").write_bytes(b"<urlset/>")  # no manifest names it
        result = build(storage, force=True)
        assert set(result.removed) >= {
            "sitemap-articles-2.xml",
            "sitemap-articles-3.xml",
            "sitemap-articles-9.xml",
        }
        listed = {url.rsplit("/", 1)[1] for url in locs((out / "sitemap.xml").read_bytes())}
        on_disk = {n for n in os.listdir(out) if n.startswith("sitemap-")}
        assert on_disk == listed == {"sitemap-articles-1.xml"}


class TestKilledBuild:
    def test_the_index_never_under_states_a_replaced_files_lastmod(self, pages, out, monkeypatch):
        storage = FileSystemStorage(location=str(out))
        build(storage)
        # Page 1 and page 3 change; the build dies while rendering page 3,
        # after page 1 was replaced, before the final index.
        Article.objects.filter(pk=1).update(updated_at=at(5), slug="changed")
        Article.objects.filter(pk=5).update(updated_at=at(6))
        failing_file(monkeypatch, 3, "killed mid-build")
        with pytest.raises(RuntimeError):
            build(storage)
        index = (out / "sitemap.xml").read_text()
        assert b"changed" in (out / "sitemap-articles-1.xml").read_bytes()
        # Page 1's new lastmod is in the index although the final index was never written.
        assert f"sitemap-articles-1.xml</loc><lastmod>{at(5):%Y-%m-%dT%H:%M:%SZ}" in index
        for name in ("sitemap-articles-1.xml", "sitemap-articles-2.xml", "sitemap-articles-3.xml"):
            assert (out / name).exists()
        monkeypatch.undo()
        result = build(storage)
        assert "sitemap-articles-3.xml" in result.written
        assert "sitemap.xml" in result.written
