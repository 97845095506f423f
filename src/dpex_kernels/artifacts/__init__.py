"""What a compile hands to everyone else, numba-free: options, target, artifact, file format.

The compiler makes KernelArtifacts; the device build, the dispatcher, the disk cache and AOT
bundles read them. Nothing here imports the compiler, so an AOT bundle loads
without Numba.
"""
