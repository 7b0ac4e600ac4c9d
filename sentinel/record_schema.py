"""Pydantic schemas for :class:`sentinel.record.Record` classes: the one boundary where records meet pydantic.

A record is validated as a pydantic model built from its annotations and defaults, then turned
into the record itself: error locations and messages are pydantic's own (``jail.banned_imports:
Input should be a valid list``), and unknown keys are rejected when the record says so.

The dependency runs one way: this module knows :mod:`sentinel.record`, never the reverse. Importing it
teaches every Record class to pydantic (``__get_pydantic_core_schema__``); code that validates records
asks :func:`adapter` for a TypeAdapter, which guarantees that.
"""

from __future__ import annotations

import sys
import typing
from functools import lru_cache

from pydantic import ConfigDict, Field, TypeAdapter, create_model
from pydantic_core import core_schema

from sentinel.record import Record, factory


def core_schema_for(cls: type[Record], handler) -> core_schema.CoreSchema:
    module = sys.modules.get(cls.__module__)
    hints = typing.get_type_hints(cls, globalns=vars(module) if module else None)
    fields = {}
    for name in cls._fields:
        if name not in cls._defaults:
            fields[name] = (hints[name], ...)
            continue
        default = cls._defaults[name]
        if type(default) is factory:
            fields[name] = (hints[name], Field(default_factory=default.make))
        else:
            fields[name] = (hints[name], default)
    model = create_model(cls.__name__, __config__=ConfigDict(
        extra="forbid" if cls._forbid_extra else "ignore", protected_namespaces=()), **fields)

    def to_record(value):
        return cls(**{name: getattr(value, name) for name in cls._fields})

    return core_schema.no_info_after_validator_function(to_record, handler.generate_schema(model))


def _pydantic_hook(cls, source: object, handler) -> core_schema.CoreSchema:
    return core_schema_for(cls, handler)


Record.__get_pydantic_core_schema__ = classmethod(_pydantic_hook)


@lru_cache(maxsize=64)
def adapter(tp) -> TypeAdapter:
    """A pydantic TypeAdapter for a record class (or any type built from records)."""
    return TypeAdapter(tp)
