"""A kernel calling device functions, mapped over partitions of an array on a Dask cluster.

The kernel is compiled once, here; Dask pickles it (with its device functions and compiled
SPIR-V) to each worker process, which builds it for its own device queue and launches without
compiling (its `stats` say so). The same code runs on a real cluster: start workers on each
machine (`dask worker SCHEDULER_ADDRESS`), and give each worker its own device
(ONEAPI_DEVICE_SELECTOR or a `device=` filter string per worker).
"""

import dpnp
import numpy as np
from distributed import Client, LocalCluster

import dpex_kernels as dk

vector = dk.usm_array(dk.float64, 1, device="opencl:cpu")


@dk.func
def smoothstep(x):
    t = min(max(x, 0.0), 1.0)
    return t * t * (3.0 - 2.0 * t)


@dk.func
def shaped(x, gain):
    return gain * smoothstep(x)


@dk.kernel(dk.void(vector, vector, dk.float64))
def transform(x, out, gain):
    i = dk.get_global_id(0)
    out[i] = shaped(x[i], gain)


def on_worker(kernel, part: np.ndarray, gain: float):
    """Runs in a worker process: the partition to its device, the kernel, the result back."""
    x = dpnp.asarray(part, device="opencl:cpu")
    out = dpnp.empty_like(x)
    kernel[x.shape[0]](x, out, gain)
    return dpnp.asnumpy(out), kernel.stats.compiles


def expected(data: np.ndarray, gain: float) -> np.ndarray:
    t = np.clip(data, 0.0, 1.0)
    return gain * t * t * (3.0 - 2.0 * t)


def main(parts: int = 4, size: int = 10_000, gain: float = 2.5) -> None:
    data = np.random.default_rng(0).uniform(-0.5, 1.5, parts * size)
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        kernel = client.scatter(transform, broadcast=True)  # pickled once per worker
        futures = [
            client.submit(on_worker, kernel, part, gain, pure=False)
            for part in np.array_split(data, parts)
        ]
        results = client.gather(futures)
    result = np.concatenate([r for r, _ in results])
    compiles = [c for _, c in results]
    np.testing.assert_allclose(result, expected(data, gain), rtol=1e-12)
    assert compiles == [0] * parts, compiles  # the workers never compiled
    print(f"{parts} partitions on 2 workers, no compile on the workers: {compiles}")


if __name__ == "__main__":
    main()
