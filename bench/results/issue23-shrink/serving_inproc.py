"""Issue 23 shrink rerun: the serving figures in one process, CPU time.

Run with PYTHONPATH at the tree measured (baseline or current), the same
seeded SQLite file (DATABASE_URL) and a local-memory cache
(BENCH_CACHE_URL=locmemcache://): bench.serving.settings otherwise.

Measures, interleaved over --rounds rounds (process CPU time, median):
a cold gzip file (invalidate, request, body read), a warm gzip file, a warm
file without gzip, a 304 on If-None-Match; then bench_serving.cold_memory
(the tracemalloc peak of a cold file, least of 3). Prints and writes JSON.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import statistics
import sys
import time
import zlib

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.serving.settings")
os.environ.setdefault("SERVING_CACHE", "1")

import django

django.setup()

from django.test import Client  # noqa: E402

import django_sitemaps_plus  # noqa: E402
from bench.bench_serving import PAGE, cold_memory  # noqa: E402
from django_sitemaps_plus.serving.versions import invalidate  # noqa: E402

rounds = int(sys.argv[1])
out = sys.argv[2]
client = Client(HTTP_HOST="127.0.0.1")


def read(response) -> bytes:  # type: ignore[no-untyped-def]
    if response.streaming:
        return b"".join(response.streaming_content)
    return bytes(response.content)


def cold_gzip() -> None:
    invalidate("articles")
    r = client.get(PAGE, HTTP_ACCEPT_ENCODING="gzip")
    assert r.status_code == 200
    read(r)


def warm_gzip() -> None:
    r = client.get(PAGE, HTTP_ACCEPT_ENCODING="gzip")
    assert r.status_code == 200
    read(r)


def warm_identity() -> None:
    r = client.get(PAGE)
    assert r.status_code == 200
    read(r)


first = client.get(PAGE, HTTP_ACCEPT_ENCODING="gzip")
gz = read(first)
etag = ""


def not_modified() -> None:
    r = client.get(PAGE, HTTP_IF_NONE_MATCH=etag)
    assert r.status_code == 304, r.status_code


cases = {
    "cold_gzip": cold_gzip,
    "warm_gzip": warm_gzip,
    "warm_identity": warm_identity,
    "not_modified": not_modified,
}
inner = {"cold_gzip": 1, "warm_gzip": 20, "warm_identity": 3, "not_modified": 200}
for key, f in cases.items():
    if key != "not_modified":
        f()
warm_gzip()  # stored again after the cold run
# The plain response's ETag, as bench_serving's 304 run sends it.
plain_response = client.get(PAGE)
etag = plain_response["ETag"]
read(plain_response)
cpu: dict[str, list[float]] = {k: [] for k in cases}
for _ in range(rounds):
    for key, f in cases.items():
        if key != "cold_gzip":
            warm_gzip()
        gc.collect()
        started = time.process_time()
        for _ in range(inner[key]):
            f()
        cpu[key].append((time.process_time() - started) / inner[key])
plain = read(client.get(PAGE))
result = {
    "package": django_sitemaps_plus.__file__,
    "rounds": rounds,
    "inner": inner,
    "cpu_ms": {k: [round(v * 1000, 4) for v in vs] for k, vs in cpu.items()},
    "cpu_median_ms": {k: round(statistics.median(vs) * 1000, 4) for k, vs in cpu.items()},
    "body_sha256": hashlib.sha256(plain).hexdigest(),
    "gzip_body_sha256_decompressed": hashlib.sha256(zlib.decompress(gz, 31)).hexdigest(),
    "bytes": len(plain),
    "gzip_bytes": len(gz),
    "cold_memory_peak": cold_memory(3),
    "load_end": os.getloadavg(),
}
print(json.dumps(result, indent=1))
with open(out, "w") as fh:
    json.dump(result, fh, indent=1)
