from . import runtime as runtime
from .bundle import build as build
