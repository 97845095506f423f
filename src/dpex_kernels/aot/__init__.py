"""Ahead-of-time bundles: aot.build (needs the compiler) and aot.runtime.load (dpctl only)."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
