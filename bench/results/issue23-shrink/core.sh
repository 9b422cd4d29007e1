#!/bin/sh
# One bench_core run: core.sh base|cur N  (the same seeded SQLite file for both trees)
set -e
which=$1; n=$2
case $which in base) tree=/work/wt/base-c141bc9;; cur) tree=/work/wt/benchshrink;; esac
out=/work/wt/benchshrink/bench/results/issue23-shrink
db=/work/wt/benchshrink/bench/results/bench-100000.sqlite3
{ echo "tree $tree $(git -C $tree rev-parse --short HEAD)"; uptime; } > $out/core-$which-$n.log
cd $tree && PYTHONPATH=$tree DATABASE_URL=sqlite:///$db /work/venv-shared/bin/python -m bench.bench_core \
  --db sqlite --rows 100000 --repeat 7 --json $out/core-$which-$n.json >> $out/core-$which-$n.log 2>&1
cp $tree/bench/results/core-sqlite-100000.md $out/core-$which-$n.md
uptime >> $out/core-$which-$n.log
