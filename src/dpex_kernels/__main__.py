"""python -m dpex_kernels: list SYCL devices, compile and run a check kernel on each, time it.

`python -m dpex_kernels aot build MODULE -o FILE` writes an ahead-of-time bundle.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def _describe(device) -> list[str]:
    return [
        f"{device.filter_string}  {device.name}",
        f"  type: {device.device_type.name}, backend: {device.backend.name}, "
        f"driver: {device.driver_version}",
        f"  compute units: {device.max_compute_units}, max work-group: "
        f"{device.max_work_group_size}, sub-group sizes: {list(device.sub_group_sizes)}",
        f"  fp64: {device.has_aspect_fp64}, fp16: {device.has_aspect_fp16}, local memory: "
        f"{device.local_mem_size // 1024} KiB",
    ]


def _self_check(device, dk, dpnp) -> bool:
    """Compile vecadd for `device`, run it, compare with NumPy, print attributes and timing."""
    arrty = dk.usm_array(dk.float32, 1, device=device)
    started = time.perf_counter()

    @dk.kernel(dk.void(arrty, arrty, arrty))
    def vecadd(a, b, c):
        i = dk.get_global_id(0)
        c[i] = a[i] + b[i]

    compile_seconds = time.perf_counter() - started
    n = 1 << 16
    host_a = np.arange(n, dtype=np.float32)
    host_b = np.full(n, 0.5, dtype=np.float32)
    a = dpnp.asarray(host_a, device=device)
    b = dpnp.asarray(host_b, device=device)
    c = dpnp.empty_like(a)
    vecadd[n](a, b, c).wait()
    ok = bool(np.array_equal(dpnp.asnumpy(c), host_a + host_b))
    launcher = vecadd[n]
    repeats = 1000
    started = time.perf_counter()
    for _ in range(repeats):
        event = launcher(a, b, c)
    event.wait()
    launch_us = (time.perf_counter() - started) / repeats * 1e6
    attrs = vecadd.definitions[vecadd.signatures[0]].attrs
    print(f"  self-check vecadd[{n}]: {'OK' if ok else 'WRONG RESULT'}")
    print(
        f"  eager compile + device build: {compile_seconds * 1e3:.0f} ms; "
        f"launch + run: {launch_us:.1f} us per call ({repeats} async launches)"
    )
    print(f"  kernel attributes: {attrs}")
    return ok


def _import_user_module(spec: str):
    """A module given by name (importable from the current folder) or by a .py file's path."""
    import importlib
    import importlib.util
    from pathlib import Path

    path = Path(spec)
    if path.suffix == ".py" and path.is_file():
        loaded = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(loaded)
        sys.modules[path.stem] = module
        loaded.loader.exec_module(module)
        return module
    sys.path.insert(0, str(Path.cwd()))
    return importlib.import_module(spec)


def _aot_build(module_spec: str, output: str) -> int:
    """python -m dpex_kernels aot build MODULE -o FILE."""
    import dpex_kernels as dk

    module = _import_user_module(module_spec)
    path = dk.aot.build(module, output)
    bundle = dk.aot.runtime.load(path)
    for name in bundle:
        print(f"{name}: {len(bundle[name].definitions)} signature(s)")
    print(f"wrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: the self-check by default, or `aot build MODULE -o FILE`."""
    parser = argparse.ArgumentParser(prog="python -m dpex_kernels", description=__doc__)
    parser.add_argument("--list", action="store_true", help="only list the devices")
    commands = parser.add_subparsers(dest="command")
    aot = commands.add_parser("aot", help="ahead-of-time bundles")
    aot_commands = aot.add_subparsers(dest="aot_command", required=True)
    build = aot_commands.add_parser("build", help="bundle the eager kernels of a module")
    build.add_argument("module", help="a module name, or the path of a .py file")
    build.add_argument("-o", "--output", required=True, help="the bundle file to write")
    options = parser.parse_args(argv)
    if options.command == "aot":
        return _aot_build(options.module, options.output)

    import dpctl

    import dpex_kernels as dk

    devices = dpctl.get_devices()
    if not devices:
        from dpex_kernels._runtime import no_device_message

        print(no_device_message("any selector"), file=sys.stderr)
        return 1
    import dpnp

    print(f"dpex_kernels {dk.__version__}: {len(devices)} SYCL device(s)")
    passed = True
    for device in devices:
        print("\n".join(_describe(device)))
        if options.list:
            continue
        try:
            passed &= _self_check(device, dk, dpnp)
        except Exception as exc:  # report every device, then fail
            print(f"  self-check FAILED: {type(exc).__name__}: {exc}")
            passed = False
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
