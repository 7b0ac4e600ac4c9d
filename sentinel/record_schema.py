"""Pydantic schemas for :class:`sentinel.record.Record` classes (imported only where pydantic is).

A record is validated as a pydantic model built from its annotations and defaults, then turned
into the record itself: error locations and messages are pydantic's own (``jail.banned_imports:
Input should be a valid list``), and unknown keys are rejected when the record says so.
"""

from __future__ import annotations

import sys
import typing

from pydantic import ConfigDict, Field, create_model
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
