#!/bin/sh
# asgi.sh base|cur N: asgi_warm.py on one tree (same data, locmem cache)
set -e
which=$1; n=$2
case $which in base) tree=/work/wt/base-c141bc9;; cur) tree=/work/wt/benchshrink;; esac
out=/work/wt/benchshrink/bench/results/issue23-shrink
db=/work/wt/benchshrink/bench/results/bench-100000.sqlite3
{ echo "tree $tree $(git -C $tree rev-parse --short HEAD)"; uptime; } > $out/asgi-$which-$n.log
cd $tree && PYTHONPATH=$tree DATABASE_URL=sqlite:///$db BENCH_CACHE_URL=locmemcache:// BENCH_LIMIT=50000 \
  /work/venv-shared/bin/python $out/asgi_warm.py $out/asgi-$which-$n.json >> $out/asgi-$which-$n.log 2>&1
uptime >> $out/asgi-$which-$n.log
