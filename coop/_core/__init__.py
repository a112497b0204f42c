"""coop's shared machinery: every primitive family is built on these modules.

- ``backend``: which CUDA the code runs against (Numba's compiler or its simulator).
- ``simulator``: the warp intrinsics coop adds to Numba's CUDA simulator.
- ``specialize``: the ``primitive`` decorator (one implementation per primitive,
  specialised from argument types) and the compile-time argument checks.
- ``values``: supported dtypes, conversions back to a value's type.
- ``shuffle``: warp shuffles of any supported value type.
- ``vector``: vector memory accesses (aligned 2- to 16-byte loads and stores of items).
- ``radix``: the ordered bits of radix keys (CUB's TwiddleIn/Out) and digit extraction.
"""
