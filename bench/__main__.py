"""``python -m bench ...`` is ``python -m bench.bench_core ...``."""

from bench.bench_core import main

if __name__ == "__main__":
    raise SystemExit(main())
