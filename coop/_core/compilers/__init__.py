"""What coop needs of a compiler beyond its public API, one module per compiler.

Nothing outside this package uses a compiler's private names (tests/test_compiler_adapter.py
enforces it), so an upgrade of a compiler, or a second compiler, is a change here:

- ``numba_cuda``: numba-cuda (the compiler of coop's kernels): the releases coop supports
  (``import coop`` warns for any other), PTX compilation without a GPU (the codegen
  checks), 32-bit shared-memory addresses, static arrays made by intrinsics (scratch
  buffers, registers).
- ``numba_cuda_simulator``: coop's simulator (``coop._core.simulator``: warp
  intrinsics, barriers, collectives checked) put into numba-cuda's CUDA simulator, and
  what coop reads of a running simulated kernel.
- ``numba_cuda_launch``: coop.device's launcher (kernel parameters packed once per
  kernel and argument types, ``cuLaunchKernel`` called directly).
"""
