"""What coop needs of a compiler beyond its public API, one module per compiler.

Nothing outside this package uses a compiler's private names or generates code below the
compiler's own lowering (tests/test_compiler_adapter.py enforces both), so an upgrade of
a compiler, or a second compiler, is a change here:

- ``numba_cuda``: numba-cuda (the compiler of coop's kernels): the releases coop supports
  (``import coop`` warns for any other), registering primitives (overloads) and building
  blocks, PTX compilation without a GPU (the codegen checks), 32-bit shared-memory
  addresses, static arrays made by intrinsics (scratch buffers, registers).
- ``numba_cuda_intrinsics``: every intrinsic coop's compiled code is built on (shuffles
  of any type, redux, ballot steps, scratch slots, vector and acquire/release accesses,
  static arrays, bit twiddles, unrolled loops, size and launch checks), in LLVM IR and
  inline PTX. The simulator's version of each is beside the code that uses it.
- ``numba_cuda_simulator``: coop's simulator (``coop._core.simulator``: warp
  intrinsics, barriers, collectives checked) put into numba-cuda's CUDA simulator, and
  what coop reads of a running simulated kernel.
- ``numba_cuda_launch``: coop.device's launcher (kernel parameters packed once per
  kernel and argument types, ``cuLaunchKernel`` called directly).
- ``numba_cuda_mlir``: coop's primitives in numba-cuda-mlir kernels (experimental): the
  same generators, fed numba-cuda's types; their implementations rebuilt with
  numba-cuda-mlir's ``cuda``; under the simulator, ``numba_cuda_mlir.cuda`` made the
  simulator's; ``numba_cuda_mlir_intrinsics``: each intrinsic made again from its recipe
  for numba-cuda-mlir (its public API, inline PTX, MLIR).
"""
