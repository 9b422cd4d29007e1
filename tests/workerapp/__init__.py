"""The sections a real task worker builds (tests/build/test_build_worker.py): an
app of its own, so only the worker's settings (tests/worker_settings.py)
register them, through autodiscovery as a site would."""
