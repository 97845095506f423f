"""Benchmark suite of dpex_kernels: launch overhead, compile time and bandwidth against peers."""
