"""Record only significant changes: ``ContentChangedField``.

Google trusts lastmod only when it is consistently accurate. ``auto_now``
stamps every save, including a view counter's; this field stamps the time
only when one of the fields it tracks (title, body, price...) changed, so it
makes an honest ``lastmod_fields`` entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core import checks
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models.signals import class_prepared, post_init, post_save
from django.utils import timezone
from django.utils.functional import cached_property

_SNAPSHOT = "_sitemaps_plus_snapshot"
#: Defaults that differ from DateTimeField's: never typed in, indexed for lastmod.
_DEFAULTS = {"null": True, "blank": True, "editable": False, "db_index": True}


class ContentChangedField(models.DateTimeField):  # type: ignore[type-arg]
    """A DateTimeField set to now when a tracked field's value changes.

    Set on create, and on every save where any of ``tracked_fields`` differs
    from the value loaded from the database. Saving with ``update_fields``
    that excludes all tracked fields never stamps it. ``QuerySet.update()``
    bypasses ``save()``, as it bypasses ``auto_now``: set it there yourself.
    """

    def __init__(self, *args: Any, tracked_fields: Sequence[str] = (), **kwargs: Any) -> None:
        self.tracked_fields = tuple(tracked_fields)
        for key, default in _DEFAULTS.items():
            kwargs.setdefault(key, default)
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> Any:
        name, path, args, kwargs = super().deconstruct()
        kwargs["tracked_fields"] = list(self.tracked_fields)
        for key, default in _DEFAULTS.items():
            value = getattr(self, key)
            if value == default:
                kwargs.pop(key, None)
            else:
                kwargs[key] = value
        return name, path, args, kwargs

    def contribute_to_class(  # type: ignore[override]
        self, cls: type[models.Model], name: str, **kwargs: Any
    ) -> None:
        super().contribute_to_class(cls, name, **kwargs)
        if not cls._meta.abstract:
            self._watch(cls)
            # Proxy models and multi-table children use this field object
            # without contribute_to_class, and their instances send signals
            # as themselves: watch each as it is defined (never before cls).
            class_prepared.connect(
                self._watch_subclass,
                weak=False,
                dispatch_uid=f"sitemaps_plus.{cls._meta.label}.{name}.subclasses",
            )

    def _watch(self, model: type[models.Model]) -> None:
        uid = f"sitemaps_plus.{model._meta.label}.{self.name}"
        post_init.connect(self._remember, sender=model, weak=False, dispatch_uid=uid)
        # After a save, the saved values are the new baseline.
        post_save.connect(self._remember, sender=model, weak=False, dispatch_uid=uid)

    def _watch_subclass(self, sender: type[models.Model], **kwargs: Any) -> None:
        if sender is not self.model and issubclass(sender, self.model):
            self._watch(sender)

    @cached_property
    def _tracked_attnames(self) -> list[str]:
        # Resolved once: the snapshot runs on every instance load.
        return [self.model._meta.get_field(name).attname for name in self.tracked_fields]  # type: ignore[union-attr]

    def _remember(self, sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
        # Snapshot only values actually loaded (deferred fields are unknown).
        loaded = instance.__dict__
        instance.__dict__[_SNAPSHOT + self.name] = {
            attname: loaded[attname] for attname in self._tracked_attnames if attname in loaded
        }

    def _changed(self, instance: models.Model) -> bool:
        snapshot: dict[str, Any] = instance.__dict__.get(_SNAPSHOT + self.name, {})
        for attname in self._tracked_attnames:
            if attname not in instance.__dict__:
                continue
            if attname not in snapshot or snapshot[attname] != instance.__dict__[attname]:
                return True
        return False

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        if add or model_instance._state.adding or self._changed(model_instance):
            value = timezone.now()
            setattr(model_instance, self.attname, value)
            return value
        return super().pre_save(model_instance, add)

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        errors: list[checks.CheckMessage] = [*super().check(**kwargs)]
        if not self.tracked_fields:
            errors.append(
                checks.Error(
                    "ContentChangedField needs tracked_fields: the fields whose change is a "
                    "content change.",
                    obj=self,
                    id="sitemaps_plus.E010",
                )
            )
        for name in self.tracked_fields:
            try:
                self.model._meta.get_field(name)
            except FieldDoesNotExist:
                errors.append(
                    checks.Error(
                        f"ContentChangedField tracks {name!r}, which is not a field of "
                        f"{self.model._meta.label}.",
                        obj=self,
                        id="sitemaps_plus.E010",
                    )
                )
        return errors
