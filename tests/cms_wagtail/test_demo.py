"""The Wagtail demo (``./example_project/run wagtail``): seeds, validates, lists what it should.

Its settings module cannot share a process with the tests', so each step runs
in a subprocess, on a SQLite file of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "example_project"

PROBE = """
import json, re
import django
django.setup()
from django.test import Client

def body(response):
    return b"".join(response.streaming_content) if response.streaming else response.content

client = Client(HTTP_HOST="127.0.0.1:8000")
index = body(client.get("/sitemap.xml")).decode()
locations = []
for url in re.findall(r"<loc>([^<]+)</loc>", index):
    locations += re.findall(r"<loc>([^<]+)</loc>", body(client.get(url.removeprefix("http://127.0.0.1:8000"))).decode())
print(json.dumps(locations))
"""


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "wagtail_demo.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
        "PYTHONPATH": str(EXAMPLE),
    }
    env.pop("CACHE_URL", None)
    return subprocess.run(
        [sys.executable, *args], cwd=EXAMPLE, env=env, capture_output=True, text=True, timeout=300
    )


def test_demo_seeds_and_validates_with_every_rule_shown(tmp_path: Path) -> None:
    for step in (["migrate", "--noinput", "-v0"], ["seed_wagtail_demo"]):
        done = _run(tmp_path, "manage.py", *step)
        assert done.returncode == 0, done.stderr
    validated = _run(tmp_path, "manage.py", "validate_sitemaps")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert validated.stdout.strip().endswith("0 errors, 0 warnings, 0 info")
    probe = _run(tmp_path, "-c", PROBE)
    assert probe.returncode == 0, probe.stderr
    paths = {url.removeprefix("http://127.0.0.1:8000") for url in json.loads(probe.stdout)}
    assert {"/", "/fr/", "/about/", "/fr/a-propos/", "/blog/article-3/"} <= paths
    # The private section and its child, the draft and the hidden page are not listed.
    for path in ("/members/", "/members/news/", "/coming-soon/", "/thanks/"):
        assert path not in paths
