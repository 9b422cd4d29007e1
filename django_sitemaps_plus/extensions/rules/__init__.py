"""The rules of each extension, beside its writer: limits and checks, declared once.

``images``, ``news``, ``video`` and ``hreflang`` each declare what Google
allows (the limits the writer in ``django_sitemaps_plus.extensions`` sizes and
filters its output by) and the checks the validator runs on that extension's
elements, with the rule ids of ``django_sitemaps_plus.validation.rules``.
These modules import neither lxml nor Django: an element is anything with
lxml's element interface (``tag``, ``text``, ``sourceline``, ``get()``,
iteration), and findings go to anything with ``FileReport.add``.
"""
