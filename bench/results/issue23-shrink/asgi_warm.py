"""Issue 23 shrink rerun: ASGI first byte of a warm file under a real server.

As bench_asgi.case (a fresh uvicorn, bench.serving.asgi, one unmeasured
request that stores the file, then N measured requests on new connections),
plus the server process's CPU time over the measured requests
(/proc/<pid>/stat utime + stime), which other jobs on the machine disturb
less than wall time. PYTHONPATH at the tree measured; local-memory cache
(one server process, so the unmeasured request warms it).
"""

from __future__ import annotations

import http.client
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.serving.settings")
from bench.bench_asgi import _get
from bench.bench_serving import PAGE, ROOT, free_port

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def run(gzip: bool, runs: int) -> dict[str, object]:
    port = free_port()
    env = {**os.environ, "SERVING_CACHE": "1", "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "bench.serving.asgi:application",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                http.client.HTTPConnection("127.0.0.1", port, timeout=1).connect()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        headers = {"Accept-Encoding": "gzip"} if gzip else {}
        _get(port, PAGE, headers)
        _get(port, PAGE, headers)
        before = cpu_s(server.pid)
        results = [_get(port, PAGE, headers) for _ in range(runs)]
        cpu = cpu_s(server.pid) - before
    finally:
        server.terminate()
        _, log = server.communicate(timeout=30)
    return {
        "ttfb_ms": round(statistics.median(r[0] for r in results) * 1000, 3),
        "total_ms": round(statistics.median(r[1] for r in results) * 1000, 3),
        "server_cpu_ms_per_request": round(cpu / runs * 1000, 3),
        "bytes": results[-1][2],
        "runs": runs,
        "sync_iterator_warning": "must consume synchronous iterators" in log,
    }


report = {
    "root": str(ROOT),
    "warm_gzip": run(True, 300),
    "warm_identity": run(False, 100),
    "load_end": os.getloadavg(),
}
print(json.dumps(report, indent=1))
with open(sys.argv[1], "w") as fh:
    json.dump(report, fh, indent=1)
