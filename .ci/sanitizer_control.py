"""A control for .ci/gpu: compute-sanitizer must see into pytest-xdist's worker
processes. Run under racecheck (or memcheck) with ``-n 1``: the sanitizer must report
errors here, or a clean report of the real tests proves nothing."""

import numpy as np
from numba import cuda


def test_racy_and_out_of_bounds():
    @cuda.jit
    def racy(out):
        shared = cuda.shared.array(64, np.int32)
        shared[cuda.threadIdx.x] = cuda.threadIdx.x
        out[cuda.threadIdx.x] = shared[63 - cuda.threadIdx.x]  # no barrier: a race
        if cuda.threadIdx.x == 0:
            out[out.size + 100000] = 1  # unchecked write past the end: memcheck

    racy[1, 64](cuda.device_array(64, np.int32))
    cuda.synchronize()
