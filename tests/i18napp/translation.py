"""django-modeltranslation registration: title_en, title_de, ... columns."""

from __future__ import annotations

from modeltranslation.translator import TranslationOptions, register

from tests.i18napp.models import Guide


@register(Guide)
class GuideTranslationOptions(TranslationOptions):
    fields = ("title", "slug")
