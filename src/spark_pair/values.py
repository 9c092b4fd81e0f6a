"""Small value classes written out, for the modules every `spark-pair run` loads.

A `@dataclass` writes and compiles its methods when its module is imported (about a
millisecond a class on a slow machine), and a one-shot run imports its event, operation and
parse classes on every call, before it can read its reply. These classes name their fields in
`__slots__` (in order, with annotations) and set them in their own `__init__`; the bases give
them what the dataclass did:

- `Value`: `==` by field values between instances of the same class, a repr naming the fields
  (but private ones),
  `__match_args__` in field order; not hashable (it may change; defining `__eq__` leaves
  `__hash__` None).
- `Frozen`: a Value that is hashable and cannot change once made: its `__init__` sets each
  field with `set_field`, and assigning or deleting one later raises
  dataclasses.FrozenInstanceError.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, ClassVar

set_field = object.__setattr__  # how a Frozen class's __init__ sets its fields


def _fields(cls: type) -> tuple[str, ...]:
    """The slots of `cls` and its bases, the bases' first."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        slots = klass.__dict__.get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else slots)
    return tuple(names)


def _frozen(message: str) -> Exception:
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(message)


class Value:
    """Equality, repr and match arguments from the fields in `__slots__`."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _values: ClassVar[attrgetter[Any]]  # the field values (the value itself for one field)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = _fields(cls)
        if names:
            cls.__match_args__ = names  # type: ignore[misc]  # (set once, per class)
            cls._values = attrgetter(*names)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(self._values(self) == self._values(other))
        return NotImplemented

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__
                          if not name.startswith("_"))  # a private field is not shown
        return f"{type(self).__qualname__}({inner})"


class Frozen(Value):
    """A Value that never changes once made (its `__init__` sets the fields with set_field)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values(self))

    def __setattr__(self, name: str, value: object) -> None:
        raise _frozen(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise _frozen(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:  # copy and pickle: made anew
        return type(self), tuple(getattr(self, name) for name in self.__match_args__)
