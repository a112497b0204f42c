"""coop's shared machinery: every primitive family is built on these modules.

Layering: ``coop._core`` < ``coop.ops`` < ``coop.thread`` < ``coop.warp`` <
``coop.block`` < ``coop.device``; a module imports only from its own layer or below
(``coop.block`` may use ``coop.warp``'s building blocks, as block scan uses warp scan,
and ``coop.device``'s kernels the block primitives), and the modules
here import one another without cycles (not even function-level imports):

- ``errors``: ``CoopError`` and the messages shared by compile-time, run-time and
  simulator checks.
- ``backend``: which CUDA the code runs against (Numba's compiler or its simulator;
  ``device``: is there a GPU), and ``device_function``, how building blocks are
  compiled (inlined) or simulated.
- ``compilers``: what coop needs of a compiler beyond its public API, one module per
  compiler (numba-cuda's: PTX without a GPU, static arrays, coop's simulator put into
  Numba's, coop.device's launcher); nothing else touches a compiler's private names.
- ``simulator``: the warp intrinsics and collective checks coop adds to Numba's
  simulator. ``config``, ``debug``: ``coop.config``; debug mode's run-time traps.
- ``values``: supported value types, their sizes in memory, conversions back to a
  value's type.
- ``constants``, ``call_site``: device functions specialised on constants (dead
  branches pruned); which arguments of a simulated call are compile-time constants.
- ``specialize``: the ``primitive`` decorator (one implementation per primitive,
  specialised from argument types) and ``Signature``, the compile-time argument checks.
- ``misuse``: link-time checks of array lengths (``size_check``).
- ``arithmetic``: float16-safe ``difference`` / ``less`` / ``unequal`` and ``coop.ops``'s arithmetic.
- ``shuffle``: warp shuffles of any supported value type. ``vector``: vector memory
  accesses (aligned 2- to 16-byte loads and stores of items).
- ``items``: tiles of tuples: an items array or a tuple of items arrays, read and
  written one (tuple) value at a time (``TileItems``), so one implementation serves both.
- ``scratch``: shared-memory scratch: layouts (``Region``, ``Struct``, ``Union``: named
  regions with byte offsets and a total size), the buffers (own or the caller's
  ``temp_storage``), typed ``store`` / ``load``, block rank and raking slots.
- ``algorithm``: ``Algorithm``, the record of one ``algorithm=`` variant (function,
  scratch layout, required constants) from which both a generator and its
  ``temp_storage_bytes`` derive.
- ``exchange``: moving items between threads through a buffer (offset functions,
  CUB's bank padding, warp time slicing): what block and warp exchanges are built on.
- ``tile``: tile loads and stores for warp and block: arrangements (blocked, striped,
  warp-striped), guarded spans, direct and vector accesses, ``TileAlgorithm`` and
  ``specialise_tile``.
- ``radix``: the ordered bits of radix keys (CUB's TwiddleIn/Out) and digit extraction.
- ``merge``: merge sorting of a group's tile (odd-even sort in registers, merge path,
  serial merge), what the block and warp merge sorts are built on.
- ``selection``: what the block and warp top-k share (the keys' classes during a
  radix select, the settling of ties).
- ``docs``: shared docstring paragraphs.
"""
