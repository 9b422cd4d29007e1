"""How files reach a client: cached once per change and answered from the cache.

Version and block tokens say what changed (``versions``); a file's entry
(``entries``) is rendered into the cache under one lock (``locks``) and
answered from it (``cache``: lookups, ``serve``, stale-while-refresh), with
gzip and conditional GET (``responses``); every cache call goes through one
circuit breaker (``quiet``); a static build's files are served from the build
storage (``storage``). The views themselves are ``django_sitemaps_plus.views``.
docs/caching.md, docs/architecture.md.
"""
