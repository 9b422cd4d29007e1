#!/bin/sh
# focus.sh base|cur N: bench_core on the pages only, 21 rounds (no memory runs, no verify)
set -e
which=$1; n=$2
case $which in base) tree=/work/wt/base-c141bc9;; cur) tree=/work/wt/benchshrink;; esac
out=/work/wt/benchshrink/bench/results/issue23-shrink
db=/work/wt/benchshrink/bench/results/bench-100000.sqlite3
{ echo "tree $tree $(git -C $tree rev-parse --short HEAD)"; uptime; } > $out/focus-$which-$n.log
cd $tree && PYTHONPATH=$tree DATABASE_URL=sqlite:///$db /work/venv-shared/bin/python -m bench.bench_core \
  --db sqlite --rows 100000 --repeat 21 --no-memory --verify none \
  --only naive-floor ours-page ours-page-comments ours-page-last ours-index ours-index-comments contrib-generic-index \
  --json $out/focus-$which-$n.json >> $out/focus-$which-$n.log 2>&1
uptime >> $out/focus-$which-$n.log
