"""One MPI rank per device: each rank receives the kernel by pickle and launches on its part.

Run with `mpiexec -n 2 python -m examples.mpi_ranks` (mpi4py and an MPI:
`pip install -e '.[mpi]'` in a clone). Rank 0 compiles the kernel and broadcasts it; every rank
picks a device by its rank (here all ranks share the one CPU device), launches on its own
slice, and the ranks combine their sums with an allreduce. Checked against NumPy.
"""

import dpctl
import dpnp
import numpy as np
from mpi4py import MPI

import dpex_kernels as dk

vector = dk.usm_array(dk.float64, 1, device="opencl:cpu")


@dk.func
def square(x):
    return x * x


def squares(x, out):
    i = dk.get_global_id(0)
    out[i] = square(x[i])


def main(n: int = 100_000) -> None:
    comm = MPI.COMM_WORLD
    # Only rank 0 compiles (the other ranks never decorate): the kernel reaches them by pickle.
    kernel = dk.kernel(dk.void(vector, vector))(squares) if comm.rank == 0 else None
    kernel = comm.bcast(kernel, root=0)
    devices = dpctl.get_devices()
    queue = dpctl.SyclQueue(devices[comm.rank % len(devices)])
    data = np.linspace(0.0, 1.0, n)
    mine = np.array_split(data, comm.size)[comm.rank]
    x = dpnp.asarray(mine, sycl_queue=queue)
    out = dpnp.empty_like(x)
    kernel[x.shape[0]](x, out)
    total = comm.allreduce(float(dpnp.sum(out)))
    compiles = comm.allreduce(kernel.stats.compiles if comm.rank else 0)
    assert np.isclose(total, float(np.sum(data**2)), rtol=1e-12), total
    assert compiles == 0, compiles  # no rank but the first compiled
    if comm.rank == 0:
        print(f"{comm.size} ranks: sum of squares {total:.6f}, no compile on ranks > 0")


if __name__ == "__main__":
    main()
