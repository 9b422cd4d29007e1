"""Profile a warm gzip request (serving_inproc.py's warm_gzip) in one tree:
cProfile call counts/tottime over N requests, and pyinstrument's tree."""

from __future__ import annotations

import cProfile
import os
import pstats
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.serving.settings")
os.environ.setdefault("SERVING_CACHE", "1")
import django

django.setup()
from django.test import Client  # noqa: E402

from bench.bench_serving import PAGE  # noqa: E402

n = int(sys.argv[1])
client = Client(HTTP_HOST="127.0.0.1")


def warm() -> None:
    r = client.get(PAGE, HTTP_ACCEPT_ENCODING="gzip")
    assert r.status_code == 200
    b"".join(r.streaming_content) if r.streaming else r.content


for _ in range(50):
    warm()
profile = cProfile.Profile()
profile.enable()
for _ in range(n):
    warm()
profile.disable()
stats = pstats.Stats(profile)
stats.sort_stats("tottime").print_stats(35)
if len(sys.argv) > 2:
    from pyinstrument import Profiler

    p = Profiler(interval=0.0001)
    with p:
        for _ in range(n):
            warm()
    print(p.output_text(unicode=True, color=False, show_all=False))
