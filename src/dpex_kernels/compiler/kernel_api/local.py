"""dk.local: work-group local memory."""

from .memory import local_array

array = local_array
