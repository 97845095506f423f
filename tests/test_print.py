"""print() inside kernels: scalars and string constants through OpenCL printf, arrays refused."""

import subprocess
import sys
import textwrap

import dpnp
import pytest

import dpex_kernels as dk


def test_print_of_scalars_and_strings_prints_one_line_per_work_item():
    script = textwrap.dedent(
        """
        import dpnp, numpy as np
        import dpex_kernels as dk

        @dk.kernel
        def show(a, n, z):
            i = dk.get_global_id(0)
            print("item", i, "of", n, "is", a[i], z, i == 1, "100%")

        show[2](dpnp.asarray(np.array([1.5, -2.25], dtype=np.float32)), 2, 1 + 2j).wait()
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = sorted(done.stdout.splitlines())
    assert lines == [
        "item 0 of 2 is 1.5 (1+2j) False 100%",
        "item 1 of 2 is -2.25 (1+2j) True 100%",
    ]


def test_print_of_an_array_is_a_compile_error_naming_the_kernel():
    @dk.kernel
    def show_array(a):
        print(a)

    with pytest.raises(dk.KernelCompileError, match="show_array.*\n.*print"):
        show_array[1](dpnp.zeros(4))
