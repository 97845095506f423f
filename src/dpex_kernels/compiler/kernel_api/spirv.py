"""SPIR-V and OpenCL numbers the kernel API lowers to: a leaf module that imports nothing."""

#: SPIR-V address spaces as LLVM numbers them for the spirv64 target.
PRIVATE, GLOBAL, CONSTANT, LOCAL, GENERIC = 0, 1, 2, 3, 4

#: barrier() fence flags, OpenCL's values (or-able).
LOCAL_MEM_FENCE = 1
GLOBAL_MEM_FENCE = 2

#: The memory scope the SPIR-V back end gives LLVM's "monotonic" atomicrmw (relaxed: no
#: memory semantics bits).
SCOPE_CROSS_DEVICE = 0

#: Itanium type codes of the scalar types OpenCL built-ins are overloaded on.
TYPE_CODES = {
    "int32": "i",
    "uint32": "j",
    "int64": "l",
    "uint64": "m",
    "float32": "f",
    "float64": "d",
}
