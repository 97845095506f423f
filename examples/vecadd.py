"""Eager vecadd: declare the signature, launch asynchronously, read the result with dpnp."""

import dpnp
import numpy as np

import dpex_kernels as dk

arrty = dk.usm_array(dk.float32, 1, layout="C", usm_type="device", device="opencl:cpu")


@dk.kernel(dk.void(arrty, arrty, arrty))
def vecadd(a, b, c):
    i = dk.get_global_id(0)
    c[i] = a[i] + b[i]


def main() -> None:
    n = 1 << 20
    a = dpnp.arange(n, dtype="f4", device="opencl:cpu")
    b = dpnp.ones_like(a)
    c = dpnp.empty_like(a)
    event = vecadd[dk.Range(n)](a, b, c)  # returns at once
    print("launched:", event)
    np.testing.assert_array_equal(dpnp.asnumpy(c), np.arange(n, dtype="f4") + 1)
    attrs = vecadd.definitions[vecadd.signatures[0]].attrs
    print("preferred work-group size multiple:", attrs.preferred_work_group_size_multiple)


if __name__ == "__main__":
    main()
