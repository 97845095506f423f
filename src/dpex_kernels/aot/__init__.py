"""Ahead-of-time bundles: aot.build (needs the compiler) and aot.runtime.load (dpctl only)."""

from .._lazy import lazy_attributes

__getattr__, __dir__ = lazy_attributes(__name__, {"build": ".bundle"})
