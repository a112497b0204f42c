# Make both compilers use CUDA 13.0's libNVVM (as on the GPU machine), not the venv's 13.5 wheel.
import ctypes, os
NVVM = "/usr/local/cuda-13.0/lib/libnvvm.so.4"
ctypes.CDLL(NVVM, mode=os.RTLD_GLOBAL)
def patch_mlir():
    import numba_cuda_mlir.numba_cuda.cudadrv.libs as L
    orig = L.get_cudalib
    L.get_cudalib = lambda lib, static=False: NVVM if lib == "nvvm" else orig(lib, static)
