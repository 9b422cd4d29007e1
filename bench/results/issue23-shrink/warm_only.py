"""Warm gzip requests only, on a cache another process filled
(BENCH_CACHE_URL=filecache://...): no render in this process, so both trees
read the very same stored entry with the same allocator history. With a
locmem cache the first request renders in-process; TRIM=1 then calls
malloc_trim(0) before measuring.
CPU time per request, median of 15 rounds of 100; a 304 likewise."""

from __future__ import annotations

import gc
import json
import os
import statistics
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.serving.settings")
os.environ.setdefault("SERVING_CACHE", "1")
import django

django.setup()
from django.test import Client  # noqa: E402

from bench.bench_serving import PAGE  # noqa: E402

client = Client(HTTP_HOST="127.0.0.1")
first = client.get(PAGE, HTTP_ACCEPT_ENCODING="gzip")
assert first.status_code == 200 and first.get("X-Cache", "") != "MISS"
etag = client.get(PAGE)["ETag"]
# TRIM=1: freed heap handed back, the render's allocator history out of the way.
if os.environ.get("TRIM") == "1":
    import ctypes

    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)


def warm() -> None:
    r = client.get(PAGE, HTTP_ACCEPT_ENCODING="gzip")
    assert r.status_code == 200
    b"".join(r.streaming_content) if r.streaming else r.content


def nm() -> None:
    assert client.get(PAGE, HTTP_IF_NONE_MATCH=etag).status_code == 304


out = {}
for name, f in (("warm_gzip", warm), ("not_modified", nm)):
    for _ in range(20):
        f()
    times = []
    for _ in range(15):
        gc.collect()
        t = time.process_time()
        for _ in range(100):
            f()
        times.append((time.process_time() - t) / 100 * 1000)
    out[name] = round(statistics.median(times), 4)
print(json.dumps(out))
