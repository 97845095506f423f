"""Standalone worker run with a numba-dpex venv's python (opt-in: --numba-dpex VENV).

It imports only numba_dpex, dpctl, dpnp and NumPy, times launch overhead (3 arguments) and
vecadd bandwidth the way the main suite does, and prints a JSON list of rows. It supports the
numba-dpex >= 0.23 API (call_kernel / call_kernel_async, kernels take an Item) and the older
one (kernel[Range](...) with get_global_id).
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import dpnp
import numba_dpex as dpex

NEW_API = hasattr(dpex, "call_kernel")

if NEW_API:

    @dpex.kernel
    def vecadd(item, a, b, c):
        i = item.get_id(0)
        c[i] = a[i] + b[i]

    def launch_sync(n, *args):
        dpex.call_kernel(vecadd, dpex.Range(n), *args)

    def launch_async(n, *args):
        return dpex.call_kernel_async(vecadd, dpex.Range(n), (), *args)

else:

    @dpex.kernel
    def vecadd(a, b, c):
        i = dpex.get_global_id(0)
        c[i] = a[i] + b[i]

    def launch_sync(n, *args):
        vecadd[dpex.Range(n)](*args)

    launch_async = None


def _row(group, case, unit, samples, scale, **params):
    med = statistics.median(samples)
    return {
        "group": group,
        "case": case,
        "impl": "numba-dpex",
        "unit": unit,
        "value": scale(med),
        "spread": (max(samples) - min(samples)) / med,
        "samples_s": samples,
        "params": params,
        "note": "",
    }


def _time(fn, repeat, per=1):
    fn()
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) / per)
    return out


def launch_rows(launches, repeat):
    """Per-launch µs, 1 and 64 work-items, sync (and async where the API has it)."""
    rows = []
    arrays = [dpnp.ones(64, dtype="f4", device="opencl:cpu") for _ in range(3)]
    queue = arrays[0].sycl_queue
    for items in (1, 64):
        modes = {"sync": lambda n=items: launch_sync(n, *arrays)}
        if launch_async is not None:
            modes["async"] = lambda n=items: launch_async(n, *arrays)
        for mode, launch in modes.items():

            def loop(count=launches, launch=launch):
                for _ in range(count):
                    launch()
                queue.wait()

            case = f"{items:>2} wi {mode:<5}  3 args"
            rows.append(
                _row(
                    "launch",
                    case,
                    "us",
                    _time(loop, repeat, launches),
                    lambda s: s * 1e6,
                    items=items,
                    mode=mode,
                    nargs=3,
                )
            )
    return rows


def vecadd_rows(exponents, dtypes, repeat):
    """vecadd GB/s at each size."""
    rows = []
    for dtype in dtypes:
        for e in exponents:
            n = 2**e
            a = dpnp.ones(n, dtype=dtype, device="opencl:cpu")
            b, c = dpnp.ones_like(a), dpnp.empty_like(a)
            nbytes = 3 * n * a.itemsize
            samples = _time(lambda n=n, a=a, b=b, c=c: launch_sync(n, a, b, c), repeat)
            rows.append(
                _row(
                    "vecadd",
                    f"vecadd {dtype} 2^{e}",
                    "GB/s",
                    samples,
                    lambda s, nb=nbytes: nb / s / 1e9,
                    dtype=dtype,
                    size=n,
                    bytes=nbytes,
                )
            )
    return rows


def main() -> None:
    """argv[1]: JSON {launches, repeat, exponents, dtypes}."""
    cfg = json.loads(sys.argv[1])
    rows = launch_rows(cfg["launches"], cfg["repeat"])
    rows += vecadd_rows(cfg["exponents"], cfg["dtypes"], cfg["repeat"])
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
