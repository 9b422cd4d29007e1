"""Language versions: one ``<url>`` per language, each listing every version (docs/hreflang.md).

Every entry of an item carries ``xhtml:link rel="alternate"`` for *all* its
versions, itself included, plus ``x-default``: the same set in each entry,
so they are reciprocal by construction (rule book §4). A version's location
is the section's with that language active (what ``i18n_patterns`` needs).
A file lists only the ``<loc>`` entries on its own host, while linking every
version (``hosts=``). An item with L versions gives up to L entries, so
``urls_per_item`` is L and files are sized from the entries' bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import urlsplit

from django.apps import apps
from django.conf import settings
from django.core.checks import CheckMessage
from django.db import models

from django_sitemaps_plus import protocol
from django_sitemaps_plus.engine import xml
from django_sitemaps_plus.engine.location import absolute_location, to_uri
from django_sitemaps_plus.extensions.base import (
    URI_PATH_RE,
    Extension,
    ascii_host,
    by_item,
    item_rows,
    method_values,
    section_error,
)
from django_sitemaps_plus.extensions.rules import hreflang as rules

if TYPE_CHECKING:
    from django_sitemaps_plus.sections import Section
    from django_sitemaps_plus.sites import SiteContext

X_DEFAULT = rules.X_DEFAULT
#: The prefix ``alternate_link`` writes, declared on the root of a file that
#: holds alternates (with ``protocol.XHTML_NS``).
XHTML_PREFIX: Final = "xhtml"


def alternate_link(hreflang: str, href: str) -> str:
    """One ``xhtml:link rel="alternate"``: the markup of every alternate this
    app writes (``Hreflang``, the CMS sections' ``PageAlternates``, a contrib
    sitemap's ``alternates``). ``hreflang`` and ``href`` are escaped already."""
    return f'<xhtml:link rel="alternate" hreflang="{hreflang}" href="{href}"/>'


#: The bytes of an alternate besides its hreflang and href.
LINK_TAGS_BYTES: Final = len(alternate_link("", ""))


def hreflang_code(language: str) -> str:
    """A Django language code as a BCP 47 hreflang value.
    ``"pt-br"`` → ``"pt-BR"``, ``"zh-hans"`` → ``"zh-Hans"``, ``"sr-latn"`` →
    ``"sr-Latn"``; hreflang is case-insensitive, this is the customary form.
    """
    parts = language.replace("_", "-").split("-")
    out = [parts[0].lower()]
    for part in parts[1:]:
        if len(part) == 4:
            out.append(part.title())
        elif len(part) == 2:
            out.append(part.upper())
        else:
            out.append(part)
    return "-".join(out)


class Hreflang(Extension):
    """``xhtml:link`` alternates: one ``<url>`` per language version.
    :param languages: Django language codes; default: ``settings.LANGUAGES``.
    :param x_default: ``True`` (the default): ``x-default`` names the version
        in ``settings.LANGUAGE_CODE``; a language code names that version;
        ``False`` writes no ``x-default``.
    :param hosts: language → base URL (``"https://example.de"``) for versions
        on other hosts; languages not named are on the host of the file.
    :param codes: language → hreflang value where ``hreflang_code`` is not
        the one you want (``{"en": "en-GB"}``).
    """

    prefix: ClassVar[str] = XHTML_PREFIX
    namespace: ClassVar[str] = protocol.XHTML_NS
    gives_versions: ClassVar[bool] = True

    def __init__(
        self,
        languages: Sequence[str] | None = None,
        *,
        x_default: bool | str = True,
        hosts: Mapping[str, str] | None = None,
        codes: Mapping[str, str] | None = None,
    ) -> None:
        self.languages = None if languages is None else list(languages)
        self.x_default = x_default
        # Internationalised hosts in their IDNA form, as the site's own base
        # URL is: an href must be a URI, and the host compares with the site's.
        self.hosts = {
            lang: ascii_host(base.rstrip("/")) or base.rstrip("/")
            for lang, base in (hosts or {}).items()
        }
        self.codes = dict(codes or {})

    # Configuration ------------------------------------------------------------

    def get_languages(self) -> list[str]:
        if self.languages is not None:
            return list(self.languages)
        return [code for code, _ in settings.LANGUAGES]

    def get_code(self, language: str) -> str:
        return self.codes.get(language) or hreflang_code(language)

    def default_language(self) -> str | None:
        """The language whose version ``x-default`` names, or None."""
        if self.x_default is False:
            return None
        languages = self.get_languages()
        if isinstance(self.x_default, str):
            return self.x_default
        for candidate in (settings.LANGUAGE_CODE, settings.LANGUAGE_CODE.split("-")[0]):
            if candidate in languages:
                return candidate
        return languages[0] if languages else None

    # Sizing -----------------------------------------------------------------------

    def urls_per_item(self, section: Section) -> int:
        return max(1, len(self.get_languages()))

    def max_bytes(self, section: Section) -> int:
        languages = self.get_languages()
        links = len(languages) + (1 if self.default_language() else 0)
        longest_code = max([len(self.get_code(lang)) for lang in languages] + [len(X_DEFAULT)])
        return links * (LINK_TAGS_BYTES + longest_code + section.loc_budget())

    # Which languages each item exists in ------------------------------------------

    def fetch(self, section: Section, items: Sequence[Any]) -> Sequence[Any]:
        """The languages each item exists in (None: all), one query per batch at most.

        The section's ``item_languages(item)`` hook wins when defined (it
        gets model instances: on the fast path loaded in one query); a
        django-parler model's languages are those of its translation rows, a
        django-modeltranslation model's those whose column of its first
        translated field is filled.
        """
        plan = self._plan()
        if getattr(section, "item_languages", None) is not None:
            available = method_values(section, items, "item_languages", (), _as_set)
        else:
            model = getattr(section, "model", None)
            translated = _modeltranslation_fields(model) if model is not None else []
            if model is not None and _is_parler_model(model):
                available = _parler_languages(section, model, items)
            elif model is not None and translated:
                available = _modeltranslation_languages(
                    section, items, translated[0], [lang for lang, _ in plan[0]]
                )
            else:
                available = [None] * len(items)
        return [(languages, plan) for languages in available]

    def _plan(self) -> tuple[list[tuple[str, str]], str | None]:
        """(language, escaped hreflang) pairs and the x-default language, read once per batch."""
        languages = [(lang, xml.escape(self.get_code(lang))) for lang in self.get_languages()]
        return languages, self.default_language()

    # Entries ---------------------------------------------------------------------

    def versions(
        self,
        section: Section,
        item: Any,
        data: Any,
        site: SiteContext,
        locate: Callable[[str], str | None],
    ) -> Sequence[tuple[str, str]]:
        available: Collection[str] | None = data[0]
        languages, default = data[1]
        max_length = section.get_max_loc_length()
        urls: list[tuple[str, str, bool]] = []  # (code, url, on this file's site)
        default_url = None
        for language, code in languages:
            if available is not None and language not in available:
                continue
            location = locate(language)
            if location is None:
                section.drop_item(item, f"has none in {language!r} (it does not reverse)")
                continue
            url, local, why = self._absolute(location, language, site)
            if url is not None and len(url) > max_length:
                url, why = None, f"is longer than {max_length:,} characters"
            if url is None:
                section.drop_item(item, f"in {language!r} {why}")
                continue
            urls.append((code, url, local))
            if language == default:
                default_url = url
        if not urls:
            return ()
        escape = xml.escape
        links = [alternate_link(code, escape(url)) for code, url, _ in urls]
        if default_url is not None:
            links.append(alternate_link(X_DEFAULT, escape(default_url)))
        children = "".join(links)
        return [(url, children) for _, url, local in urls if local]

    def _absolute(
        self, location: str, language: str, site: SiteContext
    ) -> tuple[str | None, bool, str | None]:
        """(absolute URL or None, whether it is on ``site``, why not)."""
        host = self.hosts.get(language)
        if host is None and location.startswith("/") and not location.startswith("//"):
            if URI_PATH_RE.fullmatch(location):
                # Already a URI path (the fast path's spliced paths are): on
                # the site's own base URL, which the settings check vets.
                return site.base_url + location, True, None
            url, why = absolute_location(location, site)
            return url, True, why
        ascii_location = ascii_host(location)
        if ascii_location is None:
            return None, False, f"has a host that is not a valid domain name ({location!r})"
        try:
            uri = to_uri(ascii_location)
        except ValueError as exc:
            return None, False, f"{exc} ({location!r})"
        if uri.startswith("/") and not uri.startswith("//"):
            uri = (host or site.base_url) + uri
        problem = protocol.loc_problem(uri)
        if problem:
            return None, False, f"is {problem}"
        parts = urlsplit(uri)
        local = parts.scheme == site.scheme and parts.netloc.lower() == site.netloc
        return uri, local, None

    # System checks -----------------------------------------------------------------

    def check(self, section: Section) -> list[CheckMessage]:
        errors: list[CheckMessage] = []
        languages = self.get_languages()
        if not languages:
            hint = "Set LANGUAGES, or pass Hreflang(languages=[...])."
            errors.append(
                section_error(section, "Hreflang has no languages.", "sitemaps_plus.E101", hint)
            )
        for language in languages:
            code = self.get_code(language)
            if not rules.VALUE_RE.fullmatch(code):
                errors.append(
                    section_error(
                        section,
                        f"{code!r} (for {language!r}) is not an hreflang value.",
                        "sitemaps_plus.E101",
                        "An ISO 639-1 language, optionally with a script and/or a "
                        "region ('en', 'zh-Hant', 'en-GB'); map it with codes={...}.",
                    )
                )
        if isinstance(self.x_default, str) and self.x_default not in languages:
            message = f"x_default {self.x_default!r} is not one of the languages {languages}."
            errors.append(section_error(section, message, "sitemaps_plus.E102"))
        for language, base in self.hosts.items():
            parts = urlsplit(base)
            if (
                parts.scheme not in ("http", "https")
                or not parts.netloc
                or not base.isascii()
                or parts.path
                or language not in languages
            ):
                errors.append(
                    section_error(
                        section,
                        f"hosts[{language!r}] = {base!r} must be the scheme and "
                        "host of one of the section's languages.",
                        "sitemaps_plus.E103",
                        "e.g. hosts={'de': 'https://example.de'}",
                    )
                )
        model = getattr(section, "model", None)
        translated = _modeltranslation_fields(model) if model is not None else []
        for kwarg, field in (getattr(section, "url_kwargs", None) or {}).items():
            if getattr(section, "url_name", None) and field in translated:
                errors.append(
                    section_error(
                        section,
                        f"url_kwargs[{kwarg!r}] = {field!r} is translated by "
                        "django-modeltranslation; on the url_name fast path every language "
                        "would get the active language's value.",
                        "sitemaps_plus.W102",
                        "Leave url_name unset (locations then come from "
                        "get_absolute_url() per language), or map a column that is the "
                        "same in every language.",
                        warning=True,
                    )
                )
        if not settings.USE_I18N:
            message = (
                "Hreflang is used with USE_I18N = False, so every language version gets the "
                "same location."
            )
            errors.append(section_error(section, message, "sitemaps_plus.W101", warning=True))
        return errors


def _as_set(languages: Iterable[str] | None) -> frozenset[str] | None:
    return None if languages is None else frozenset(languages)


def _is_parler_model(model: type[models.Model]) -> bool:
    if not apps.is_installed("parler"):
        return False
    from parler.models import TranslatableModelMixin

    return issubclass(model, TranslatableModelMixin)


def _modeltranslation_fields(model: type[models.Model]) -> list[str]:
    """The fields django-modeltranslation translates for ``model``, in order (none: [])."""
    if not apps.is_installed("modeltranslation"):
        return []
    from modeltranslation.translator import NotRegistered, translator

    try:
        return list(translator.get_options_for_model(model).get_field_names())
    except NotRegistered:
        return []


def _modeltranslation_languages(
    section: Section, items: Sequence[Any], field: str, languages: list[str]
) -> list[frozenset[str] | None]:
    """Languages whose column of ``field`` (the first translated field) is
    filled (``title_de`` for German): read from instances, or one query per batch."""
    from modeltranslation.utils import build_localized_fieldname

    columns = [build_localized_fieldname(field, language) for language in languages]
    return [
        frozenset(
            lang
            for lang, value in zip(languages, rows[0] if rows else ())
            if value not in (None, "")
        )
        for rows in item_rows(section, items, columns)
    ]


def _parler_languages(
    section: Section, model: type[models.Model], items: Sequence[Any]
) -> list[frozenset[str] | None]:
    """Languages of django-parler translation rows: one query for the batch.
    For model instances (the slow path, where ``location()`` reads translated
    fields) the translations are prefetched, which parler then uses for every
    language, so building the versions costs no further query.
    """
    meta = model._parler_meta  # type: ignore[attr-defined]
    if items and isinstance(items[0], models.Model):
        models.prefetch_related_objects(list(items), meta.root_rel_name)
        return [
            frozenset(t.language_code for t in getattr(item, meta.root_rel_name).all())
            for item in items
        ]
    rows = (
        meta.root_model._default_manager.filter(master_id__in=[section.item_pk(i) for i in items])
        .order_by()
        .values_list("master_id", "language_code")
    )
    return [frozenset(lang for (lang,) in langs) for langs in by_item(section, items, rows)]
