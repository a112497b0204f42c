"""Release and acquire accesses of global memory: how one block hands values to another
within a kernel (the status flags of a decoupled look-back, coop.device's single-pass
algorithms).

- ``store_release(flags, i, value)``: ``flags[i] = value`` (a uint32 array), as PTX
  ``st.release.gpu``: every memory access the thread made before it is visible to any
  thread that sees ``value`` through ``load_acquire``.
- ``load_acquire(flags, i)``: ``flags[i]`` as PTX ``ld.acquire.gpu``: the thread's later
  accesses see everything the releasing thread wrote before its release, plain loads
  included (an acquire invalidates what the SM's L1 holds, so no stale line is read).

- ``store_relaxed_pair(words, i, status, value)`` / ``load_relaxed_pair(words, i, like)
  -> (status, value)``: a uint32 status and a value of at most 32 bits (of ``like``'s
  type) packed into one 64-bit word of ``words`` (a uint64 array: status in the low
  half), written and read whole with PTX ``st/ld.relaxed.gpu.u64``. The word is written
  and read in one piece, so a reader that sees a status sees the value stored with it: no
  fence, one load (CUB's ScanTileState for 4-byte values). Relaxed ``.gpu`` accesses
  are served by L2, never by a stale L1 line.

numba-cuda has neither (its atomics are relaxed, and it has no volatile loads), hence
inline PTX (``coop._core.compilers.numba_cuda_intrinsics``). Under the
simulator, Python's lock on the interpreter makes every access sequentially consistent:
plain indexing.

The ordering argument each user of these makes: a producer writes its values with plain
stores, then its flag with ``store_release``; a consumer spins on ``load_acquire`` of the
flag, and only after seeing it set reads the values with plain loads. Release/acquire on
the same flag at ``.gpu`` scope orders the producer's value stores before the consumer's
value loads (PTX ISA, memory consistency model: release and acquire patterns).
"""

from coop._core.backend import SIMULATOR

__all__ = ["load_acquire", "store_release", "load_relaxed_pair", "store_relaxed_pair", "packs"]


def packs(value_dtype):
    """Whether ``store_relaxed_pair`` packs values of ``value_dtype`` (a NumPy dtype)."""
    import numpy as np

    dtype = np.dtype(value_dtype)
    return dtype.kind in "iuf" and dtype.itemsize <= 4 and dtype != np.float16


if SIMULATOR:

    def load_acquire(flags, index):
        return flags[index]

    def store_release(flags, index, value):
        flags[index] = value

    def _bits32(value):
        import numpy as np

        raw = np.array([value]).astype(type(value)).view(np.uint8)
        return int.from_bytes(raw.tobytes().ljust(4, b"\0"), "little")

    def store_relaxed_pair(words, index, status, value):
        words[index] = (_bits32(value) << 32) | int(status)

    def load_relaxed_pair(words, index, like):
        import numpy as np

        word = int(words[index])
        kind = type(like)
        size = np.dtype(kind).itemsize
        raw = (word >> 32).to_bytes(4, "little")[:size]
        return np.uint32(word & 0xFFFFFFFF), np.frombuffer(raw, dtype=kind)[0]

else:
    from coop._core.compilers import numba_cuda_intrinsics as compiled

    load_acquire, store_release = compiled.load_acquire, compiled.store_release
    load_relaxed_pair, store_relaxed_pair = compiled.load_relaxed_pair, compiled.store_relaxed_pair
