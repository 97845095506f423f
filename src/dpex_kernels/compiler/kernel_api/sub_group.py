"""dk.sub_group: sub-group queries and collectives."""

from . import sub_groups

get_local_id = sub_groups.sub_group_get_local_id
get_size = sub_groups.sub_group_get_size
reduce_add = sub_groups.sub_group_reduce_add
shuffle = sub_groups.sub_group_shuffle
broadcast = sub_groups.sub_group_broadcast
barrier = sub_groups.sub_group_barrier
