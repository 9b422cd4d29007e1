#!/bin/sh
# cold.sh base|cur N: bench_core on the index after a cache flush (and two controls), 21 rounds
set -e
which=$1; n=$2
case $which in base) tree=/work/wt/base-c141bc9;; cur) tree=/work/wt/benchshrink;; esac
out=/work/wt/benchshrink/bench/results/issue23-shrink
db=/work/wt/benchshrink/bench/results/bench-100000.sqlite3
{ echo "tree $tree $(git -C $tree rev-parse --short HEAD)"; uptime; } > $out/cold-$which-$n.log
cd $tree && PYTHONPATH=$tree DATABASE_URL=sqlite:///$db /work/venv-shared/bin/python -m bench.bench_core \
  --db sqlite --rows 100000 --repeat 21 --no-memory --verify none \
  --only ours-index-cold ours-index contrib-generic-index \
  --json $out/cold-$which-$n.json >> $out/cold-$which-$n.log 2>&1
uptime >> $out/cold-$which-$n.log
