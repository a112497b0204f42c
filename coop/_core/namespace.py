"""What a public namespace of coop shows: its ``__all__``, and no module that can be
mistaken for a primitive.

``public_namespace(__name__)``, at the end of a namespace package's ``__init__`` (or of a
namespace module such as ``coop.block.exchange``):

- ``dir()`` lists the names of ``__all__``: tab completion shows the primitives, not the
  helpers and modules the namespace imports;
- each submodule that ``__all__`` does not export (``coop.block.radix``,
  ``coop.device.histogram``: files of coop's source, whose docstrings ``help()`` still
  shows) raises, when called like a function, a ``TypeError`` naming the primitives to
  call instead, where Python would say "'module' object is not callable" (the module's
  class becomes a subclass of ``ModuleType`` with ``__call__``, as Python's data model
  allows for customising a module).

``namespaces()`` lists the namespaces a user reaches from ``coop`` (what the docs tests
and the primitive registry's checks walk). ``registered_names(__name__, "exchange")``
is a namespace package's ``__all__``: its primitives as ``@primitive`` registered them,
and the sub-namespaces named.
"""

import sys
import types

__all__ = ["public_namespace", "namespaces", "registered_names"]


class _SourceModule(types.ModuleType):
    """A module of coop's source under a namespace: calling it says what to call."""

    def __call__(self, *args, **kwargs):
        namespace, public = self._coop_namespace
        offered = [f"{namespace}.{name}" for name in getattr(self, "__all__", ()) if name in public]
        instead = f": call {', '.join(offered)}" if offered else ""
        raise TypeError(f"{self.__name__} is a module of coop's source, not a function{instead}")


def public_namespace(module_name):
    module = sys.modules[module_name]
    public = frozenset(module.__all__)
    for name, value in list(vars(module).items()):
        if (type(value) is types.ModuleType and value.__name__ == f"{module_name}.{name}"
                and name not in public and not name.startswith("_")):
            value._coop_namespace = (module_name, public)
            value.__class__ = _SourceModule

    def __dir__():
        return sorted(public)

    module.__dir__ = __dir__


def namespaces(module_name="coop"):
    """The names of the namespaces reachable from ``module_name`` through ``__all__``:
    ``coop.block``, then ``coop.block.exchange`` (each before its own)."""
    module = sys.modules[module_name]
    found = []
    for name in module.__all__:
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            found += [value.__name__, *namespaces(value.__name__)]
    return found


def registered_names(module_name, *sub_namespaces):
    """The names of the primitives registered as ``module_name.<name>``, and
    ``sub_namespaces``, sorted: a namespace package's ``__all__``."""
    from coop._core.specialize import PRIMITIVES

    own = [qualname.rsplit(".", 1)[1] for qualname in PRIMITIVES if qualname.rsplit(".", 1)[0] == module_name]
    return sorted([*own, *sub_namespaces])
