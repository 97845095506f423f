"""Standalone worker run with a numba-dpex venv's python (opt-in: --numba-dpex VENV).

It imports only numba_dpex, dpctl, dpnp and NumPy (never the benchmarks package), and prints one
JSON object on its last line. argv[1] is a JSON object whose "task" is

- "first": in this fresh interpreter, time `import numba_dpex, dpctl, dpnp` plus the first queue,
  then the first call of a vecadd kernel (numba-dpex compiles at the first call: typing,
  lowering, SPIR-V, the dpjit launcher and the program build, plus one 64-item launch);
- "main": launch overhead (vecadd, 3 arrays, 1 and 64 work-items, async and sync) against a raw
  dpctl floor *in this venv* (an OpenCL C vecadd built by dpctl, launched with `submit_async`),
  the first call of a new kernel function once the compiler is warm, and vecadd bandwidth;
  with the >= 0.23 API also async launches from a loop in a `@dpjit` function.

Supports the numba-dpex >= 0.23 API (call_kernel / call_kernel_async, kernels take an Item) and
the older one (kernel[Range](...) with get_global_id; no async launch there).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import types

IMPL, RAW_IMPL = "numba-dpex", "raw (numba-dpex venv)"
DPJIT_IMPL = "numba-dpex dpjit loop"  # call_kernel_async from a loop in a @dpjit function
DEVICE = "opencl:cpu"
ARRAY_LEN = 64
RAW_SOURCE = """
__kernel void vecadd(__global const {t}* a, __global const {t}* b, __global {t}* c) {{
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}}
"""


def _api():
    """(kernel function, launch_sync(n, *args), launch_async(n, *args) or None) of this version."""
    import numba_dpex as dpex

    if hasattr(dpex, "call_kernel"):

        def vecadd(item, a, b, c):
            i = item.get_id(0)
            c[i] = a[i] + b[i]

        def launch_sync(kernel, n, *args):
            dpex.call_kernel(kernel, dpex.Range(n), *args)

        def launch_async(kernel, n, *args):
            return dpex.call_kernel_async(kernel, dpex.Range(n), (), *args)

        return vecadd, launch_sync, launch_async

    def vecadd(a, b, c):  # numba-dpex < 0.23
        i = dpex.get_global_id(0)
        c[i] = a[i] + b[i]

    def launch_sync(kernel, n, *args):
        kernel[dpex.Range(n)](*args)

    return vecadd, launch_sync, None


def new_kernel(pyfunc):
    """A new @numba_dpex.kernel of a new function object: nothing compiled before is reused."""
    import numba_dpex as dpex

    fresh = types.FunctionType(
        pyfunc.__code__, pyfunc.__globals__, pyfunc.__name__, None, pyfunc.__closure__
    )
    return dpex.kernel(fresh)


def versions() -> dict:
    """Versions of what this venv runs, and its OpenCL CPU driver."""
    from importlib import metadata

    import dpnp

    out = {}
    for name in ("numba-dpex", "numba", "llvmlite", "dpctl", "dpnp", "numpy", "intel-opencl-rt"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    out["driver"] = dpnp.empty(1, device=DEVICE).sycl_device.driver_version
    out["python"] = sys.version.split()[0]
    return out


def summarise(samples: list[float]) -> tuple[float, float]:
    """(median, interquartile range / median), as the main suite reports them."""
    med = statistics.median(samples)
    if len(samples) >= 2:
        q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    else:
        q1 = q3 = med
    return med, (q3 - q1) / med if med > 0 else 0.0


def row(group, case, impl, unit, samples, value, spread, note="", **params) -> dict:
    """One row in the main suite's Row layout."""
    return {
        "group": group,
        "case": case,
        "impl": impl,
        "unit": unit,
        "value": value,
        "spread": spread,
        "samples_s": samples,
        "params": params,
        "note": note,
    }


def time_row(group, case, impl, samples, scale, unit, **params) -> dict:
    """A row of median time (seconds scaled to `unit`)."""
    med, spread = summarise(samples)
    return row(group, case, impl, unit, samples, med * scale, spread, **params)


def first(_cfg: dict) -> dict:
    """Import time and first-call time in this fresh interpreter."""
    started = time.perf_counter()
    import dpctl  # noqa: F401
    import dpnp
    import numba_dpex  # noqa: F401

    _queue = dpnp.empty(1, device=DEVICE).sycl_queue
    imported = time.perf_counter()
    pyfunc, launch_sync, _ = _api()
    arrays = [dpnp.ones(ARRAY_LEN, dtype="f4", device=DEVICE) for _ in range(3)]
    begun = time.perf_counter()
    launch_sync(new_kernel(pyfunc), ARRAY_LEN, *arrays)
    done = time.perf_counter()
    return {"import_s": imported - started, "first_call_s": done - begun}


def _interleave(loops: dict, rounds: int, per: int) -> dict:
    """name -> samples (s per unit of work), each loop timed once per round, in turn."""
    samples: dict = {name: [] for name in loops}
    for _ in range(rounds):
        for name, loop in loops.items():
            t0 = time.perf_counter()
            loop()
            samples[name].append((time.perf_counter() - t0) / per)
    return samples


def launch_rows(cfg: dict) -> list[dict]:
    """Per-launch µs: numba-dpex and this venv's raw dpctl floor, interleaved per round."""
    import dpctl.program
    import dpnp
    import numba_dpex as dpex

    pyfunc, launch_sync, launch_async = _api()
    kernel = dpex.kernel(pyfunc)
    arrays = [dpnp.ones(ARRAY_LEN, dtype="f4", device=DEVICE) for _ in range(3)]
    queue = arrays[0].sycl_queue
    program = dpctl.program.create_program_from_source(queue, RAW_SOURCE.format(t="float"))
    raw_kernel = program.get_sycl_kernel("vecadd")
    flat = [a.get_array().usm_data for a in arrays]
    submit = queue.submit_async if hasattr(queue, "submit_async") else queue.submit
    rows = []
    for items in (1, ARRAY_LEN):
        gsize = [items]
        impls = {
            "async": {RAW_IMPL: lambda g=gsize: submit(raw_kernel, flat, g)},
            "sync": {
                RAW_IMPL: lambda g=gsize: submit(raw_kernel, flat, g).wait(),
                IMPL: lambda n=items: launch_sync(kernel, n, *arrays),
            },
        }
        if launch_async is not None:
            impls["async"][IMPL] = lambda n=items: launch_async(kernel, n, *arrays)
        for mode in ("async", "sync"):
            count = cfg["launches"] if mode == "async" else cfg["sync_launches"]
            loops = {}
            for impl, launch in impls[mode].items():

                def loop(count=count, launch=launch):
                    for _ in range(count):
                        launch()
                    queue.wait()

                for _ in range(max(count // 10, 10)):  # warm-up (the first call compiles)
                    launch()
                queue.wait()
                loops[impl] = loop
            if mode == "async" and launch_async is not None:
                dpjit_loop = _dpjit_loop(kernel, items)
                dpjit_loop(*arrays, 2)  # compiles
                queue.wait()
                loops[DPJIT_IMPL] = lambda n=count, f=dpjit_loop: (f(*arrays, n), queue.wait())
            samples = _interleave(loops, cfg["repeat"], count)
            case = f"{items:>2} wi {mode:<5}  3 args"
            for impl in loops:
                params = {"items": items, "mode": mode, "nargs": 3, "launches": count}
                rows.append(time_row("launch", case, impl, samples[impl], 1e6, "us", **params))
    return rows


def _dpjit_loop(kernel, items: int):
    """A @dpjit function making n async launches of `kernel` (numba-dpex >= 0.23)."""
    import numba_dpex as dpex

    @dpex.dpjit
    def loop(a, b, c, n):
        for _ in range(n):
            dpex.call_kernel_async(kernel, dpex.Range(items), (), a, b, c)
        return n

    return loop


def compile_rows(cfg: dict) -> list[dict]:
    """First call of a new kernel function (compile + one launch), the compiler being warm."""
    import dpnp

    pyfunc, launch_sync, _ = _api()
    arrays = [dpnp.ones(ARRAY_LEN, dtype="f4", device=DEVICE) for _ in range(3)]
    launch_sync(new_kernel(pyfunc), ARRAY_LEN, *arrays)  # warm the compiler up
    samples = []
    for _ in range(cfg["compile_repeat"]):
        kernel = new_kernel(pyfunc)
        t0 = time.perf_counter()
        launch_sync(kernel, ARRAY_LEN, *arrays)
        samples.append(time.perf_counter() - t0)
    return [time_row("compile", "warm compile vecadd", IMPL + " (first call)", samples, 1e3, "ms")]


def vecadd_rows(cfg: dict) -> list[dict]:
    """vecadd GB/s at each size and dtype, launch + wait, checked against NumPy."""
    import dpnp
    import numba_dpex as dpex
    import numpy as np

    pyfunc, launch_sync, _ = _api()
    kernel = dpex.kernel(pyfunc)
    rows = []
    for dtype in cfg["dtypes"]:
        for e in cfg["exponents"]:
            n = 2**e
            rng = np.random.default_rng(n)
            ha, hb = rng.random(n).astype(dtype), rng.random(n).astype(dtype)
            a, b = dpnp.asarray(ha, device=DEVICE), dpnp.asarray(hb, device=DEVICE)
            c = dpnp.zeros_like(a)
            nbytes = 3 * n * a.itemsize

            def run(n=n, a=a, b=b, c=c):
                launch_sync(kernel, n, a, b, c)

            for _ in range(cfg["warmup"]):
                run()
            right = np.allclose(dpnp.asnumpy(c), ha + hb)
            samples, spent = [], 0.0
            while len(samples) < cfg["bandwidth_repeat"] or spent < cfg["min_time"]:
                t0 = time.perf_counter()
                run()
                samples.append(time.perf_counter() - t0)
                spent += samples[-1]
            med, spread = summarise(samples)
            note = "" if right else "WRONG result"
            case = f"vecadd {dtype} 2^{e}"
            params = {"dtype": dtype, "size": n, "bytes": nbytes}
            value = nbytes / med / 1e9
            rows.append(row("vecadd", case, IMPL, "GB/s", samples, value, spread, note, **params))
    return rows


def main() -> None:
    """argv[1]: JSON settings with "task" = "first" or "main"; prints one JSON object."""
    cfg = json.loads(sys.argv[1])
    if cfg.get("task") == "first":
        print(json.dumps(first(cfg)))
        return
    rows = launch_rows(cfg) + compile_rows(cfg) + vecadd_rows(cfg)
    print(json.dumps({"rows": rows, "versions": versions()}))


if __name__ == "__main__":
    main()
