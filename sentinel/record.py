"""Typed value classes declared like dataclasses, without generating code at import.

``@dataclass`` writes and compiles ``__init__``/``__repr__``/``__eq__`` source for every class
when its module is imported: about 1 ms a class here, and the hook path declares some 35 of
them (models, config, rules...) — a third of a 100 ms budget before any work is done. A
:class:`Record` is declared the same way (annotated fields, defaults as class attributes,
``factory(list)`` for mutable defaults) and shares one generic ``__init__``, ``__repr__`` and
``__eq__``. Pydantic validates records at the boundaries (config files, JSON reports) through
:func:`sentinel.record_schema.adapter`, which is imported only there; this module does not know pydantic.

    class Hunk(Record):
        start: int
        header: str = ""
        lines: list[str] = factory(list)

Every annotation is a field; fields without a default come first, as with dataclasses.
``class Rule(Record, frozen=True)`` makes instances immutable and hashable;
``forbid_extra=True`` makes pydantic reject unknown keys.
"""

from __future__ import annotations


class factory:  # noqa: N801 - reads like dataclasses.field(default_factory=...)
    """A default made fresh for every instance (``factory(list)``, ``factory(SomeRecord)``)."""

    __slots__ = ("make",)

    def __init__(self, make: object):
        self.make = make


class Record:
    _fields: tuple[str, ...] = ()
    _defaults: dict[str, object] = {}
    _frozen = False
    _forbid_extra = False

    def __init_subclass__(cls, frozen: bool | None = None, forbid_extra: bool | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__annotations__", {})
        fields = list(cls._fields) + [name for name in own if name not in cls._fields]
        defaults = dict(cls._defaults)
        for name in own:
            if name in cls.__dict__:
                defaults[name] = cls.__dict__[name]
        seen_default = False
        for name in fields:
            if name in defaults:
                seen_default = True
            elif seen_default:
                raise TypeError(f"{cls.__name__}: field {name!r} without a default follows fields with defaults")
        cls._fields = tuple(fields)
        cls._defaults = defaults
        if frozen is not None:
            cls._frozen = frozen
        if forbid_extra is not None:
            cls._forbid_extra = forbid_extra
        if cls._frozen:
            cls.__setattr__ = _refuse_set
            cls.__delattr__ = _refuse_delete
        else:
            cls.__hash__ = None  # mutable and compared by value, like a dataclass with eq=True

    def __init__(self, *args: object, **kwargs: object):
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}() takes {len(fields)} positional arguments, got {len(args)}")
        values = self.__dict__
        for name, value in zip(fields, args):
            values[name] = value
        defaults = self._defaults
        for name in fields[len(args):]:
            if name in kwargs:
                values[name] = kwargs.pop(name)
            elif name in defaults:
                default = defaults[name]
                values[name] = default.make() if type(default) is factory else default
            else:
                raise TypeError(f"{type(self).__name__}() missing required argument: {name!r}")
        if kwargs:
            name = next(iter(kwargs))
            problem = "got multiple values for argument" if name in fields else "got an unexpected keyword argument"
            raise TypeError(f"{type(self).__name__}() {problem} {name!r}")

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._fields)

    def __hash__(self) -> int:
        return hash((self.__class__, *(getattr(self, n) for n in self._fields)))



def _refuse_set(self: Record, name: str, value: object) -> None:
    raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is frozen")


def _refuse_delete(self: Record, name: str) -> None:
    raise AttributeError(f"cannot delete field {name!r}: {type(self).__name__} is frozen")
