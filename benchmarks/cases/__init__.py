"""Benchmark cases: launch overhead, rejection, compile time, bandwidth."""
