"""Settings and WSGI entry point of the serving benchmark (``bench/bench_serving.py``)."""
