"""python -m dpex_kernels: list the SYCL devices, compile and run a check kernel on each.

The exit status is the default device's result: the device programs get unless they name
another. Any other device that fails is reported with why (the runtime's build log, where
OpenCL gives one) and what to do, since another OpenCL platform (PoCL) is common and harmless.
"""

from __future__ import annotations

import sys
import time

import numpy as np

TROUBLESHOOTING = "docs/troubleshooting.md, 'Another OpenCL platform is installed'"


def describe(device, is_default: bool) -> list[str]:
    """The lines that show one device."""
    mark = "  (default device)" if is_default else ""
    return [
        f"{device.filter_string}  {device.name}{mark}",
        f"  type: {device.device_type.name}, backend: {device.backend.name}, "
        f"driver: {device.driver_version}",
        f"  compute units: {device.max_compute_units}, max work-group: "
        f"{device.max_work_group_size}, sub-group sizes: {list(device.sub_group_sizes)}",
        f"  fp64: {device.has_aspect_fp64}, fp16: {device.has_aspect_fp16}, local memory: "
        f"{device.local_mem_size // 1024} KiB",
    ]


def check_device(device) -> bool:
    """Compile vecadd for `device`, run it, compare with NumPy, print attributes and timing."""
    import dpnp

    import dpex_kernels as dk

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


def _advice(device, default) -> str:
    """What to do about a device that failed the self-check."""
    if default is not None and device != default:
        return (
            f"  what to do: nothing if you do not need this device: programs get the default "
            f"device ({default.filter_string}) unless they name another. Where one names a "
            f"device by type ('opencl:cpu'), name the index instead ('{default.filter_string}'), "
            f"or hide this device's OpenCL platform with OCL_ICD_VENDORS ({TROUBLESHOOTING})."
        )
    return (
        "  what to do: kernels cannot run on the default device. If another device passed, "
        "hide this device's OpenCL platform with OCL_ICD_VENDORS or pick a device with "
        f"ONEAPI_DEVICE_SELECTOR ({TROUBLESHOOTING}); otherwise report this output."
    )


def _checked(device, default) -> bool:
    """Run the check on one device; a failure is reported with its reason and the advice."""
    try:
        return check_device(device)
    except Exception as exc:  # report every device, then decide from the default one
        first, *rest = (str(exc) or "(no message)").splitlines()
        print(f"  self-check FAILED: {type(exc).__name__}: {first}")
        for line in rest:
            print(f"    {line}")
        print(_advice(device, default))
        return False


def _default_device():
    """dpctl's default device, or None where its selector finds none."""
    import dpctl

    try:
        return dpctl.select_default_device()
    except Exception:
        return None


def run(list_only: bool) -> int:
    """The self-check (or, with `list_only`, the device list); 0 when the default device passes."""
    import dpctl

    import dpex_kernels as dk

    devices = dpctl.get_devices()
    if not devices:
        from .._runtime import no_device_message

        print(no_device_message("any selector"), file=sys.stderr)
        return 1
    default = _default_device()
    print(f"dpex_kernels {dk.__version__}: {len(devices)} SYCL device(s)")
    passed = {}
    for device in devices:
        is_default = default is not None and device == default
        print("\n".join(describe(device, is_default)))
        if not list_only:
            passed[device.filter_string] = _checked(device, default)
    if list_only:
        return 0
    if default is None:
        print("no default device: dpctl.select_default_device() finds none")
        return 1
    failed = [name for name, ok in passed.items() if not ok]
    if default.filter_string in failed:
        print(f"self-check FAILED on the default device {default.filter_string} (see above)")
        return 1
    if failed:
        print(
            f"self-check passed on the default device {default.filter_string}; it failed on "
            f"{', '.join(failed)} (see above), which programs get only by asking for it"
        )
    else:
        print(f"self-check passed on every device; the default one is {default.filter_string}")
    return 0
