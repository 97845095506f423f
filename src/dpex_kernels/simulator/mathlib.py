"""`math` in simulated kernels: results typed as the device types them (float32 stays float32).

Python's math returns Python floats; on the device math.sqrt of a float32 is a float32, of a
float64 or an int a float64, and math.floor an int64. A simulated kernel runs as a copy of its
function whose globals map `math` (and names imported from it) to these wrappers.
"""

from __future__ import annotations

import functools
import math
import types

import numpy as np

_FLOAT32 = (np.float32, np.float16)


def _device_typed(function):
    @functools.wraps(function)
    def call(*args):
        result = function(*args)
        if isinstance(result, bool) or not isinstance(result, (int, float)):
            return result
        if isinstance(result, int):
            return np.int64(result)
        narrow = any(isinstance(a, _FLOAT32) for a in args) and not any(
            isinstance(a, np.float64) for a in args
        )
        return np.float32(result) if narrow else np.float64(result)

    return call


def _build() -> types.ModuleType:
    module = types.ModuleType("math", "math with results typed as on a SYCL device")
    for name in dir(math):
        value = getattr(math, name)
        setattr(module, name, _device_typed(value) if callable(value) else value)
    return module


device_math = _build()
_REPLACED = {id(math): device_math}
_REPLACED.update(
    {id(getattr(math, n)): getattr(device_math, n) for n in dir(math) if callable(getattr(math, n))}
)


def simulated_function(function: types.FunctionType) -> types.FunctionType:
    """`function` running with device-typed math: a copy whose globals name the wrappers."""
    namespace = function.__globals__
    replaced = {k: _REPLACED[id(v)] for k, v in namespace.items() if id(v) in _REPLACED}
    if not replaced:
        return function
    copy = types.FunctionType(
        function.__code__,
        {**namespace, **replaced},
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    return copy
