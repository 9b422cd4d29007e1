"""Running an example demo (``./example_project/run <demo>``) in subprocesses.

A demo's settings module cannot share a process with the tests', so each step
runs in a subprocess, on a SQLite file of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "example_project"

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


def run(settings: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": settings,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
        "PYTHONPATH": str(EXAMPLE),
    }
    env.pop("CACHE_URL", None)
    return subprocess.run(
        [sys.executable, *args], cwd=EXAMPLE, env=env, capture_output=True, text=True, timeout=300
    )


def listed_paths(settings: str, tmp_path: Path, base: str = "http://127.0.0.1:8000") -> set[str]:
    """The paths of every URL the demo's sitemap lists."""
    probe = run(settings, tmp_path, "-c", PROBE)
    assert probe.returncode == 0, probe.stderr
    return {url.removeprefix(base) for url in json.loads(probe.stdout)}
