"""coop's settings, public as ``coop.config``.

``coop.config.debug`` (default: the environment variable ``COOP_DEBUG`` set to anything
but ``0``): compiled kernels check at run time what compile-time checks cannot see, and
trap with a message (printed by each failing thread that runs before the kernel ends):

- a block primitive's ``threads=`` against the launch's block size;
- array lengths that are not compile-time constants (an items ``output`` shorter than
  the input, a ``temp_storage`` array smaller than the primitive needs, ...).

Set it before the first kernel using coop compiles: a primitive specialised for some
argument types is reused by every later kernel with those types. Off, it adds nothing
to the code (``tests/test_codegen.py`` checks the PTX). The simulator makes these checks,
and more, whatever the setting.
"""

import os
import warnings

__all__ = ["config"]


class Config:
    """coop's settings (see the module docstring)."""

    def __init__(self):
        self._debug = os.environ.get("COOP_DEBUG", "0") not in ("", "0")
        self.specialised = False  # set once a primitive has been specialised while compiling

    @property
    def debug(self):
        """Run-time checks in compiled kernels (see ``coop._core.config``)."""
        return self._debug

    @debug.setter
    def debug(self, on):
        on = bool(on)
        if on != self._debug and self.specialised:
            warnings.warn(
                "coop.config.debug changed after kernels using coop were compiled: primitives "
                "already specialised for some argument types keep the previous setting. Set it "
                "(or COOP_DEBUG=1) before the first kernel compiles.",
                stacklevel=2,
            )
        self._debug = on

    def __repr__(self):
        return f"coop.config(debug={self._debug})"


config = Config()
