"""One record per algorithm variant: what a value of a primitive's ``algorithm=`` is.

An ``Algorithm`` holds the variant's device function, its scratch (a function of the
value type and the primitive's compile-time constants giving a layout of
``coop._core.scratch``, or None for none) and its compile-time requirements (the
parameters it cannot do without, each with the reason). The primitive's generator
allocates ``layout(...)`` and its host-side ``temp_storage_bytes`` reports
``temp_storage_bytes(...)`` of the same record, so the two cannot disagree. A family's
table (``ALGORITHMS``) maps the names ``algorithm=`` accepts to records: adding an entry
adds a variant.

For example block scan's raking algorithm is ``Algorithm(scan_raking,
scratch=raking_scratch)``, with ``raking_scratch(dtype, threads)`` returning its
``Struct`` of a grid, an aggregate and a prefix slot. What else sets variants apart is a
property of the record too (``constants`` bound into its function, named ``traits``), so
that a generator never tests an algorithm's name.
"""


class Algorithm:
    """One variant: ``function``, ``scratch(value_type, *constants) -> layout`` (None:
    no shared memory), ``requires`` (``{parameter: why}``, in the order they are
    checked: constants the variant needs, which the primitive may otherwise take as
    optional), ``constants`` (``{parameter: value}`` bound into ``function`` by the
    generator) and ``traits``: properties the family's generator reads as attributes
    (block reduce's ``one_warp_by_shuffles``), each record of a table giving the same ones."""

    def __init__(self, function=None, scratch=None, requires=None, constants=None, **traits):
        self.function = function
        self.scratch = scratch
        self.requires = dict(requires or {})
        self.constants = dict(constants or {})
        self.__dict__.update(traits)

    def check_requirements(self, sig, name, **given):
        """Raise ``sig``'s error for the first required parameter of ``given`` that is
        None (``name``: the algorithm's)."""
        for param, why in self.requires.items():
            if param in given and given[param] is None:
                raise sig.error(param, f"is required by algorithm {name!r}: {why}")

    def layout(self, value_type, *constants):
        """The variant's scratch layout for these constants, or None."""
        return None if self.scratch is None else self.scratch(value_type, *constants)

    def temp_storage_bytes(self, value_type, *constants):
        """Bytes a ``temp_storage=`` array needs (0 for a variant without scratch)."""
        layout = self.layout(value_type, *constants)
        return 0 if layout is None else layout.nbytes


def choose(sig, algorithm, table, param="algorithm"):
    """``(name, record)`` of the constant string ``algorithm`` in ``table``."""
    name = sig.choice(algorithm, param, tuple(table))
    return name, table[name]
