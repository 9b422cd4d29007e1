"""Invalidation across processes: a save in one process is seen by another.

Two real processes share a file-based SQLite database and the cache: the one
of ``CACHE_URL`` when it is shared (Redis, Memcached), else Django's
file-based cache (local memory is per process by design).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from django.conf import settings

# A subprocess serves while another saves: slow (.ci/run, ./tests/run --all).
pytestmark = [pytest.mark.cache, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]

WORKER = textwrap.dedent(
    """
    import json, os, sys
    import django
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    django.setup()
    from django.conf import settings
    settings.SITEMAPS_PLUS = {"BASE_URL": "https://example.com", "CACHE": True}
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django_sitemaps_plus import register
    from tests.testapp.models import Article

    register(Article)
    mode = sys.argv[1]
    if mode == "migrate":
        call_command("migrate", verbosity=0)
    elif mode == "write":
        Article.objects.update_or_create(pk=1, defaults={"title": "t", "slug": sys.argv[2]})
    elif mode == "serve":
        client = Client()
        for line in sys.stdin:
            with CaptureQueriesContext(connection) as queries:
                response = client.get(line.strip())
                body = b"".join(response.streaming_content) if response.streaming else (
                    response.content
                )
            print(json.dumps({"status": response.status_code, "body": body.decode(),
                              "queries": len(queries)}), flush=True)
    """
)


def _cache_url(tmp_path: Path) -> str:
    backend = settings.CACHES["default"]["BACKEND"]
    if backend.endswith("LocMemCache"):
        return f"filecache://{tmp_path / 'cache'}"
    return os.environ["CACHE_URL"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")
def test_save_in_another_process_invalidates(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CACHE_URL": _cache_url(tmp_path),
        "PYTHONPATH": str(ROOT),
    }

    def run(*args: str) -> None:
        subprocess.run(
            [sys.executable, str(script), *args], env=env, cwd=ROOT, check=True, timeout=60
        )

    run("migrate")
    run("write", "first-slug")
    server = subprocess.Popen(
        [sys.executable, str(script), "serve"],
        env=env,
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None

    def get(path: str) -> dict[str, object]:
        server.stdin.write(path + "\n")
        server.stdin.flush()
        return json.loads(server.stdout.readline())

    try:
        cold = get("/sitemap-articles-1.xml")
        warm = get("/sitemap-articles-1.xml")
        assert cold["status"] == warm["status"] == 200
        assert "first-slug" in str(cold["body"])
        assert warm["queries"] == 0  # served from the shared cache
        run("write", "second-slug")  # another process saves: post_save → invalidate
        fresh = get("/sitemap-articles-1.xml")
        assert "second-slug" in str(fresh["body"])
        assert fresh["queries"] > 0
    finally:
        server.stdin.close()
        server.wait(timeout=30)
