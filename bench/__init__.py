"""Benchmarks of django-sitemaps-plus against django.contrib.sitemaps.

Run ``python -m bench.bench_core --db sqlite --rows 1000000`` (see
docs/benchmarks.md). Results land in ``bench/results/`` (not committed).
"""
