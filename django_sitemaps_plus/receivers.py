"""Model signal receivers: invalidate cached sitemaps, queue IndexNow URLs.

Connected once in ``AppConfig.ready()`` (``connect()``), for every model; a
save of a model no registered section depends on costs one dictionary lookup.
What a section depends on (its model, the models its queryset joins, those
along its ``lastmod_fields`` and ``url_kwargs`` paths, ``invalidated_by``) and
what a change bumps (the section's own token; of a model section's files,
only the blocks of the rows the change touches): docs/caching.md and
docs/architecture.md ("A save").

Model changes invalidate twice: at once, so later reads in the same
transaction see the change, and again after the transaction commits
(``transaction.on_commit``), so a file another process rendered from the
pre-commit data in between is not kept (the after-commit one once per
transaction and section). ``sitemaps_invalidated`` is sent by the
after-commit one only (at once in autocommit mode). Nothing here ever raises
into a save.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any, cast

from django.core.signals import setting_changed
from django.db import models, router, transaction
from django.db.models.constants import LOOKUP_SEP
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save

from django_sitemaps_plus import indexnow, registry
from django_sitemaps_plus.conf import conf
from django_sitemaps_plus.contrib.django_sitemaps import ContribSection
from django_sitemaps_plus.sections import ModelSection
from django_sitemaps_plus.serving import quiet
from django_sitemaps_plus.serving.versions import block_tokens, bump_tokens, files_token, invalidate
from django_sitemaps_plus.signals import sitemaps_invalidated
from django_sitemaps_plus.sites import call_with_site

logger = logging.getLogger("django_sitemaps_plus")

_PENDING_ATTR = "_sitemaps_plus_pending"
#: On an instance between pre_save and post_save: section → the keys its
#: row held before the save (``ModelSection.changed_keys`` of the stored row).
_BEFORE_ATTR = "_sitemaps_plus_before"
#: Registry stamp, model → sections, and the (model, section) pairs whose
#: change may touch any row (``invalidated_by``, a model the queryset joins).
_deps_cache: (
    tuple[tuple[int, ...], dict[type[models.Model], set[str]], set[tuple[type[models.Model], str]]]
    | None
) = None
#: Sections whose models could not be found the last time (their items()
#: failed): any save invalidates them until a lookup succeeds.
_unresolved: set[str] = set()
#: Sections whose failed lookup was already logged as a warning.
_warned: set[str] = set()


def _models_on_path(model: type[models.Model], path: str) -> list[type[models.Model]]:
    """The models a lastmod path crosses after ``model``, through tables included."""
    found: list[type[models.Model]] = []
    current = model
    for part in path.split(LOOKUP_SEP):
        try:
            field: Any = current._meta.get_field(part)
        except Exception:
            return found
        if not field.is_relation:
            break
        if field.many_to_many:
            through = getattr(field.remote_field, "through", None) or getattr(
                field, "through", None
            )
            if isinstance(through, type):
                found.append(through)
        related = field.related_model
        if not isinstance(related, type):
            break
        found.append(related)
        current = related
    return found


def _queryset_models(queryset: Any) -> list[type[models.Model]]:
    """The model of a queryset and of every table its filters join."""
    if not isinstance(queryset, models.QuerySet):
        return []
    from django.apps import apps

    by_table = {m._meta.db_table: m for m in apps.get_models(include_auto_created=True)}
    found: list[type[models.Model]] = [queryset.model]
    for join in queryset.query.alias_map.values():
        model = by_table.get(getattr(join, "table_name", ""))
        if model is not None:
            found.append(model)
    return found


def _section_models(section: Any) -> tuple[list[type[models.Model]], bool]:
    """Every model whose change may change ``section``'s files, and whether
    that answer is complete (False when ``items()`` could not be evaluated)."""
    # Any section may name more models itself.
    found: list[type[models.Model]] = list(getattr(section, "invalidated_by", ()))
    if isinstance(section, ModelSection):
        model = section.get_model()
        found.append(model)
        found.extend(_queryset_models(section.site_queryset(None)))
        paths = [*section.lastmod_fields, *section.url_kwargs.values()]
        found.extend(m for p in paths if LOOKUP_SEP in p for m in _models_on_path(model, p))
    else:
        # A plain section or a contrib sitemap whose items() is a queryset
        # (GenericSitemap): its model and joins; a list of model instances:
        # their models. Anything else needs ``invalidated_by``,
        # ``invalidate()`` or the maximum age.
        try:
            items = section.sitemap.items() if isinstance(section, ContribSection) else None
            if items is None:
                items = call_with_site(section.items, None)
            if isinstance(items, models.QuerySet):
                found.extend(_queryset_models(items))
            else:
                # A list of objects: their models (a list of URL names or
                # paths depends on none; invalidated_by names more).
                found.extend({type(item) for item in items if isinstance(item, models.Model)})
        except Exception:
            name = section.get_name()
            # Tables not migrated yet, a database hiccup: retried on the next
            # save; warned once per section, not on every save meanwhile.
            log = logger.debug if name in _warned else logger.warning
            _warned.add(name)
            log(
                "Cannot tell which models sitemap section %r depends on yet; every save "
                "invalidates it until its items() can be evaluated.",
                name,
                exc_info=True,
            )
            return found, False
    return found, True


def _concrete(model: type[models.Model]) -> type[models.Model]:
    return model._meta.concrete_model or model


def _dependencies() -> tuple[
    dict[type[models.Model], set[str]], set[tuple[type[models.Model], str]]
]:
    global _deps_cache

    sections = list(registry.site)
    stamp = tuple(id(s) for s in sections)
    if _deps_cache is not None and _deps_cache[0] == stamp:
        return _deps_cache[1], _deps_cache[2]
    deps: dict[type[models.Model], set[str]] = {}
    wide: set[tuple[type[models.Model], str]] = set()
    unresolved: set[str] = set()
    for section in sections:
        name = section.get_name()
        found, complete = _section_models(section)
        if not complete:
            unresolved.add(name)
        for target in found:
            deps.setdefault(_concrete(target), set()).add(name)
        if isinstance(section, ModelSection):
            # Models other than its own whose change may touch any of its
            # rows: named in ``invalidated_by``, or joined by its queryset
            # (a category hiding its articles).
            own = _concrete(section.get_model())
            joined = _queryset_models(section.site_queryset(None))
            others = {_concrete(m) for m in [*getattr(section, "invalidated_by", ()), *joined]}
            wide.update((model, name) for model in others - {own})
    _unresolved.clear()
    _unresolved.update(unresolved)
    # An incomplete answer is never kept: the next save asks again.
    if not unresolved:
        _deps_cache = (stamp, deps, wide)
        _warned.clear()
    return deps, wide


def dependencies() -> dict[type[models.Model], set[str]]:
    """Model → names of the registered sections whose files it changes."""
    return _dependencies()[0]


def sections_for(model: type[models.Model]) -> set[str]:
    found = dependencies().get(model._meta.concrete_model or model, set())
    return found | _unresolved if _unresolved else found


def _tokens(names: Iterable[str], keys_of: Callable[[Any], set[Any] | None]) -> set[str]:
    """Each section's own token (its index), and of a model section whose
    files are keyed by blocks the tokens of the blocks of the keys
    ``keys_of(section)`` gives, or of all its files (``cache.files_token``)
    when it gives None."""
    tokens = set(names)
    for name in names:
        section = registry.site.get(name)
        keyed = isinstance(section, ModelSection) and section.files_keyed_by_blocks()
        keys = keys_of(section) if keyed else None
        if keys is None or not all(isinstance(key, int) for key in keys):
            tokens.add(files_token(name))
        else:
            tokens |= block_tokens(name, cast(ModelSection, section).block_width(), keys)
    return tokens


def changed_tokens(
    names: Iterable[str],
    model: type[models.Model],
    instance: Any,
    before: dict[str, set[int] | None] | None = None,
) -> set[str]:
    """The version tokens a save or delete of ``instance`` (a ``model``)
    bumps (``_tokens``): the blocks of the rows it changes
    (``ModelSection.changed_keys``) and, ``before``, of those the stored
    row counted for."""

    def keys_of(section: Any) -> set[int] | None:
        name = section.get_name()
        keys = _changed_keys(section, name, model, instance)
        if keys is None or before is None or name not in before:
            return keys
        prior = before[name]
        return None if prior is None else keys | prior

    return _tokens(names, keys_of)


def _changed_keys(
    section: Any, name: str, model: type[models.Model], instance: Any
) -> set[int] | None:
    if not isinstance(section, ModelSection) or not section.files_keyed_by_blocks():
        return None
    if (_concrete(model), name) in _dependencies()[1]:
        return None
    return section.changed_keys(model, instance)


class _Pending:
    """What a transaction invalidated: bumped again, and announced, once it commits."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.tokens: set[str] = set()

    def __call__(self) -> None:
        bump_tokens(self.tokens)
        sitemaps_invalidated.send(sender=None, sections=sorted(self.names))


def invalidate_after_commit(
    names: Iterable[str], using: str | None = None, tokens: Iterable[str] | None = None
) -> None:
    """Invalidate ``names`` now and again when the current transaction commits.
    ``tokens``: the version tokens to bump (``changed_tokens``); by default
    the sections' and all their files'. ``sitemaps_invalidated`` is sent
    once per transaction, after the commit, for every section it changed
    (at once in autocommit mode).
    """
    names = set(names)
    if not names or not conf.CACHE:
        return
    bumped = set(tokens) if tokens is not None else {*names, *map(files_token, names)}
    connection = transaction.get_connection(using)
    if not connection.in_atomic_block:
        bump_tokens(bumped)
        sitemaps_invalidated.send(sender=None, sections=sorted(names))
        return
    pending: _Pending | None = getattr(connection, _PENDING_ATTR, None)
    # One flush per transaction; a savepoint rolled back drops it with its callbacks.
    if pending is None or not any(entry[1] is pending for entry in connection.run_on_commit):
        pending = _Pending()
        setattr(connection, _PENDING_ATTR, pending)
        transaction.on_commit(pending, using=using)
    pending.names.update(names)
    pending.tokens.update(bumped)
    bump_tokens(bumped)  # no signal yet: the transaction may still roll back


def _changed(sender: type[models.Model], instance: Any, deleted: bool, **kwargs: Any) -> None:
    try:
        names = sections_for(sender)
        if not names:
            return
        using = kwargs.pop("using", None) or router.db_for_write(sender)
        before = instance.__dict__.pop(_BEFORE_ATTR, None)
        invalidate_after_commit(names, using, changed_tokens(names, sender, instance, before))
        if conf.INDEXNOW_KEY:
            indexnow.object_changed(sender, instance, deleted=deleted, using=using, **kwargs)
    except Exception:
        # A sitemap problem must never break a save.
        logger.exception("django-sitemaps-plus: change of %r not handled", instance)


def _remember_before(sender: type[models.Model], instance: Any, using: str | None) -> None:
    """Before a save of a row on a model section's lastmod path (a comment),
    the keys of the rows it counted for as stored (the article a moved
    comment leaves): its post_save bumps their blocks too. One query by
    primary key, only for such rows."""
    if instance.pk is None:
        return

    names = [
        name
        for name in sections_for(sender)
        if isinstance(section := registry.site.get(name), ModelSection)
        and not issubclass(sender, section.get_model())
        and _changed_keys(section, name, sender, instance) is not None
    ]
    if not names:
        return
    stored = sender._base_manager.using(using).filter(pk=instance.pk).first()
    instance.__dict__[_BEFORE_ATTR] = {
        name: set()
        if stored is None
        else _changed_keys(registry.site.get(name), name, sender, stored)
        for name in names
    }


def on_pre_save(sender: type[models.Model], instance: Any, **kwargs: Any) -> None:
    if conf.CACHE:
        try:
            _remember_before(sender, instance, kwargs.get("using"))
        except Exception:
            logger.exception("django-sitemaps-plus: pre_save of %r not handled", instance)
    if not conf.INDEXNOW_KEY:
        return
    try:
        if sections_for(sender):
            indexnow.remember_lastmod(sender, instance)
    except Exception:
        logger.exception("django-sitemaps-plus: pre_save of %r not handled", instance)


def on_post_save(sender: type[models.Model], instance: Any, **kwargs: Any) -> None:
    _changed(sender, instance, deleted=False, **kwargs)


def on_post_delete(sender: type[models.Model], instance: Any, **kwargs: Any) -> None:
    _changed(sender, instance, deleted=True, **kwargs)


def on_m2m_changed(sender: type[models.Model], instance: Any, action: str, **kwargs: Any) -> None:
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    try:
        names = sections_for(sender) | sections_for(type(instance))
        if names:
            tokens = _m2m_tokens(names, instance, kwargs.get("model"), kwargs.get("pk_set"))
            invalidate_after_commit(names, kwargs.get("using"), tokens)
    except Exception:
        logger.exception("django-sitemaps-plus: m2m change of %r not handled", instance)


def _m2m_tokens(names: set[str], instance: Any, model: Any, pk_set: Any) -> set[str]:
    """A many-to-many change touches the section's rows on either side of
    it: ``instance``, or the rows ``pk_set`` names (``_tokens``)."""

    def keys_of(section: Any) -> set[Any] | None:
        own = section.get_model()
        if isinstance(instance, own):
            return {instance.pk}
        if isinstance(model, type) and issubclass(model, own) and pk_set:
            return set(pk_set)
        return None

    return _tokens(names, keys_of)


def on_setting_changed(setting: str, **kwargs: Any) -> None:
    # override_settings in tests: files rendered under other settings are stale.
    global _deps_cache
    _deps_cache = None
    if setting in ("CACHES", "SITEMAPS_PLUS"):
        quiet.reset()  # another cache, or another breaker window
    if setting != "CACHES" and conf.CACHE:
        invalidate()


def connect() -> None:
    """Connect the receivers (called from ``AppConfig.ready()``)."""
    pre_save.connect(on_pre_save, dispatch_uid="sitemaps_plus.pre_save")
    post_save.connect(on_post_save, dispatch_uid="sitemaps_plus.post_save")
    post_delete.connect(on_post_delete, dispatch_uid="sitemaps_plus.post_delete")
    m2m_changed.connect(on_m2m_changed, dispatch_uid="sitemaps_plus.m2m_changed")
    setting_changed.connect(on_setting_changed, dispatch_uid="sitemaps_plus.setting_changed")
