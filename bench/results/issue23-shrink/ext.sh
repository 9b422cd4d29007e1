#!/bin/sh
# ext.sh base|cur N: bench_extensions (10,000 rows x 5 languages, one SQLite file for both trees)
set -e
which=$1; n=$2
case $which in base) tree=/work/wt/base-c141bc9;; cur) tree=/work/wt/benchshrink;; esac
out=/work/wt/benchshrink/bench/results/issue23-shrink
ln -sfn /work/wt/benchshrink/bench/results/extensions-10000.sqlite3 /work/wt/base-c141bc9/bench/results/extensions-10000.sqlite3
{ echo "tree $tree $(git -C $tree rev-parse --short HEAD)"; uptime; } > $out/ext-$which-$n.log
cd $tree && PYTHONPATH=$tree /work/venv-shared/bin/python -m bench.bench_extensions --rows 10000 --repeat 5 >> $out/ext-$which-$n.log 2>&1
cp $tree/bench/results/extensions.json $out/ext-$which-$n.json
uptime >> $out/ext-$which-$n.log
