"""dk.private: per-work-item private memory."""

from .memory import private_array

array = private_array
