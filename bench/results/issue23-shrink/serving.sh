#!/bin/sh
# serving.sh base|cur N: serving_inproc.py on one tree (same data, locmem cache)
set -e
which=$1; n=$2
case $which in base) tree=/work/wt/base-c141bc9;; cur) tree=/work/wt/benchshrink;; esac
out=/work/wt/benchshrink/bench/results/issue23-shrink
db=/work/wt/benchshrink/bench/results/bench-100000.sqlite3
{ echo "tree $tree $(git -C $tree rev-parse --short HEAD)"; uptime; } > $out/serving-$which-$n.log
cd $tree && PYTHONPATH=$tree DATABASE_URL=sqlite:///$db BENCH_CACHE_URL=locmemcache:// BENCH_LIMIT=50000 \
  /work/venv-shared/bin/python $out/serving_inproc.py 15 $out/serving-$which-$n.json >> $out/serving-$which-$n.log 2>&1
uptime >> $out/serving-$which-$n.log
