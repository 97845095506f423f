"""The one way the direct front end says no."""


class Unsupported(Exception):
    """The direct front end does not compile this function exactly as Numba would; Numba's own
    front end compiles it instead (and reports any error in it)."""
