"""Block-level primitives (CUB's block/ layer). Reduce and scan arrive next."""

__all__ = []
