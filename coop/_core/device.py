"""Is there a GPU to run on? Answered without importing Numba.

Whether Numba runs kernels on a GPU or on its CPU simulator is fixed when ``numba.cuda``
is first imported (by ``NUMBA_ENABLE_CUDASIM``), so the question has to be answered
before that. :func:`gpu_available` asks the CUDA driver directly through ``ctypes``;
``python -m coop`` and the test suite use it to fall back to the simulator on machines
without a GPU.
"""

import ctypes
import sys

__all__ = ["gpu_available"]

_CUDA_SUCCESS = 0


def _load_driver():
    """The CUDA driver library, or None if it cannot be loaded."""
    try:
        if sys.platform == "win32":
            return ctypes.WinDLL("nvcuda.dll")
        return ctypes.CDLL("libcuda.so.1")
    except (OSError, AttributeError):
        return None


def gpu_available():
    """True if the CUDA driver loads, initialises and reports at least one device.

    Pure ``ctypes``: loads ``libcuda.so.1`` (``nvcuda.dll`` on Windows) and calls
    ``cuInit(0)`` and ``cuDeviceGetCount``. Any failure (no driver, no device, a driver
    that fails to initialise, ``CUDA_VISIBLE_DEVICES`` hiding every device) means no GPU.
    It does not check that the driver is new enough for the CUDA toolkit Numba will
    use; that shows up when the first kernel is launched.
    """
    driver = _load_driver()
    if driver is None:
        return False
    try:
        if driver.cuInit(ctypes.c_uint(0)) != _CUDA_SUCCESS:
            return False
        count = ctypes.c_int(0)
        if driver.cuDeviceGetCount(ctypes.byref(count)) != _CUDA_SUCCESS:
            return False
        return count.value > 0
    except (AttributeError, OSError):
        return False
