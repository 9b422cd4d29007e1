"""Which rows go in which file, and how they become bytes.

A section's rows are cut into key blocks whose figures SQL reads (``blocks``)
and the cache keeps (``kept_figures``); blocks are sized by a bound from SQL
(``bounds``) or by rendering them off the request path (``measuring``) and
packed into files (``pagination``, ``layout``), kept under ``fingerprints``.
A file's rows are read in batches (``reads``) with their lastmod computed in
SQL (``lastmod``), located (``location``), rendered (``render``) and written
(``xml``). docs/architecture.md.
"""
