"""k-means (Lloyd's algorithm) on the device, step for step as scikit-learn's KMeans(lloyd).

Each iteration runs three kernels and a little host arithmetic on n_clusters x n_features:

1. `assign`: one work-item per sample finds its nearest centre by ||c||^2 - 2 x.c (the
   distance scikit-learn minimises; ties go to the lower index; the norms travel as one more
   column of the centres) and stamps `changed` when a label changed;
2. `partial_sums`: each of PARTS work-groups adds up its contiguous share of the samples per
   cluster (feature sums and the count, in one row per cluster), one work-item per column of
   the samples padded with a column of ones (the count) to a multiple of 16 columns, so that
   a sample is one vector across the work-group;
3. `sum_parts`: adds up the PARTS partial sums.

The host then does what scikit-learn does with the sums: empty clusters are relocated to the
samples farthest from their centres (the same NumPy code, so the same samples), centres are
averaged and the centre shift is checked against the tolerance. Like KMeans.fit, the data are
centred on their mean first, tol is relative to the data's variance, and a run that stops on
tol rather than on unchanged labels ends with one more assignment.

Input is validated as KMeans validates it (scikit-learn's check_array, the same messages),
before any kernel runs.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import dpnp
import numpy as np
from sklearn.utils import check_array

import dpex_kernels as dk

#: Work-groups of `partial_sums`, each summing a contiguous share of the samples.
PARTS = 64
WORK_GROUP = 128
#: The column counts of the padded samples are multiples of it (a vector of float32).
LANES = 16


def padded_width(n_features: int) -> int:
    """Columns of the padded samples: the features, the column of ones, zeros."""
    return -(-(n_features + 1) // LANES) * LANES


@functools.cache
def kernels(n_features: int, dtype):
    """(assign, partial_sums, sum_parts) for data of `n_features` features of `dtype`.

    The feature count is a compile-time constant, so each sample lives in registers and the
    loops over features unroll.
    """

    # fastmath: the distances may use FMAs and any order of the sum over features (as BLAS
    # does for scikit-learn); the data are finite (validated) and the first centre's distance
    # seeds the minimum, so no infinity or NaN is ever needed.
    @dk.kernel(fastmath=True)
    def assign(xt, centres, labels, changed, stamp):
        i = dk.get_global_id(0)
        inside = i < xt.shape[1]
        row = dk.private.array(n_features, dtype)
        for f in range(n_features):  # xt is x transposed: neighbours read neighbours
            row[f] = xt[f, i] if inside else dtype(0)
        best = 0
        best_distance = dtype(0)
        for j in range(centres.shape[0]):
            dot = dtype(0)
            for f in range(n_features):
                dot += row[f] * centres[j, f]
            distance = centres[j, n_features] - (dot + dot)  # ||c||^2 - 2 x.c, exactly
            if j == 0 or distance < best_distance:
                best_distance = distance
                best = j
        if inside:
            if labels[i] != best:
                changed[0] = stamp  # every writer stores the same value
            labels[i] = best

    @dk.kernel
    def partial_sums(padded, labels, parts):
        column = dk.get_local_id(0)  # neighbours add up neighbouring columns: one vector
        part = dk.get_group_id(0)
        n = labels.shape[0]
        share = (n + PARTS - 1) // PARTS
        for j in range(parts.shape[1]):
            parts[part, j, column] = 0
        for i in range(part * share, min(n, part * share + share)):
            parts[part, labels[i], column] += padded[i, column]

    @dk.kernel
    def sum_parts(parts, sums):
        m = dk.get_global_id(0)
        j = m // (n_features + 1)
        f = m % (n_features + 1)
        total = dtype(0)
        for part in range(PARTS):
            total += parts[part, j, f]
        sums[j, f] = total

    return assign, partial_sums, sum_parts


@dataclass
class KMeansState:
    """The device arrays and host buffers one run works on.

    What goes between host and device each iteration (the centres in, the sums and the changed
    stamp out) lives in shared USM, which the host reads and writes through NumPy views of the
    same memory once the kernels using it are done: no copy, allocation or array wrapping in
    the loop.
    """

    x_host: np.ndarray  # the centred samples
    padded: dpnp.ndarray  # x_host padded by a column of ones and zeros, for partial_sums
    xt: dpnp.ndarray  # x_host transposed, for assign
    centres: np.ndarray  # the current centres (host), centred
    labels: dpnp.ndarray
    changed: dpnp.ndarray  # the stamp of the last assignment that changed a label
    packed: dpnp.ndarray  # the centres with their squared norms as one more column
    parts: dpnp.ndarray
    sums: dpnp.ndarray
    packed_host: np.ndarray  # NumPy views of packed, sums and changed
    sums_host: np.ndarray
    changed_host: np.ndarray
    kernels: tuple  # (assign, partial_sums, sum_parts) for these data
    stamp: int = 0  # assignments so far
    assigned: object = None  # the event of the last assignment

    @classmethod
    def start(cls, x_host: np.ndarray, centres: np.ndarray, queue=None) -> KMeansState:
        """Copy the samples to the device and allocate the work arrays."""
        n, features = x_host.shape
        k = centres.shape[0]
        dtype = x_host.dtype
        padded_host = np.zeros((n, padded_width(features)), dtype)
        padded_host[:, :features] = x_host
        padded_host[:, features] = 1
        on = {"sycl_queue": queue} if queue is not None else {}
        padded = dpnp.asarray(padded_host, **on)
        on = {"sycl_queue": padded.sycl_queue}
        shared = {**on, "usm_type": "shared"}
        changed = dpnp.zeros(1, dtype="i4", **shared)
        packed = dpnp.empty((k, features + 1), dtype=dtype, **shared)
        sums = dpnp.empty((k, features + 1), dtype=dtype, **shared)
        return cls(
            x_host=x_host,
            padded=padded,
            xt=dpnp.asarray(np.ascontiguousarray(x_host.T), **on),
            centres=centres,
            labels=dpnp.full(n, -1, dtype="i4", **on),
            changed=changed,
            packed=packed,
            parts=dpnp.empty((PARTS, k, padded_width(features)), dtype=dtype, **on),
            sums=sums,
            packed_host=_host_view(packed),
            sums_host=_host_view(sums),
            changed_host=_host_view(changed),
            kernels=kernels(features, dk.typeof(padded).dtype),
        )

    def assign(self) -> None:
        """Label each sample with its nearest centre (submitted, not waited for)."""
        assign, _, _ = self.kernels
        self.stamp += 1
        if self.assigned is not None:
            self.assigned.wait()  # it reads the old centres
        self.packed_host[:, :-1] = self.centres
        # The squared norms as scikit-learn's row_norms computes them.
        np.einsum("ij,ij->i", self.centres, self.centres, out=self.packed_host[:, -1])
        padded = -(-self.x_host.shape[0] // WORK_GROUP) * WORK_GROUP
        self.assigned = assign[dk.NdRange(padded, WORK_GROUP)](
            self.xt, self.packed, self.labels, self.changed, self.stamp
        )

    def labels_changed(self) -> bool:
        """Whether the last assignment changed any label."""
        self.assigned.wait()
        return int(self.changed_host[0]) == self.stamp

    def update(self) -> tuple[np.ndarray, np.ndarray]:
        """New centres from the current labels; (new centres, shift of each centre)."""
        _, partial_sums, sum_parts = self.kernels
        width = self.padded.shape[1]
        partial_sums[dk.NdRange(PARTS * width, width)](self.padded, self.labels, self.parts)
        sum_parts[self.sums.size](self.parts, self.sums).wait()
        new, weights = self.sums_host[:, :-1].copy(), self.sums_host[:, -1].copy()
        if (weights == 0).any():
            _relocate_empty_clusters(
                self.x_host, self.centres, new, weights, dpnp.asnumpy(self.labels)
            )
        # As scikit-learn's _average_centers: each centre times 1 / its weight, that factor
        # computed in double and rounded to the data type.
        full = weights > 0
        new[full] *= (1.0 / weights[full].astype(np.float64)).astype(new.dtype)[:, None]
        shift = np.sqrt(((new - self.centres) ** 2).sum(axis=1))
        return new, shift


def _host_view(a: dpnp.ndarray) -> np.ndarray:
    """A NumPy array on the memory of `a`, a C-contiguous dpnp array in shared USM."""
    memory = a.get_array().usm_data  # dpctl's MemoryUSMShared exports it as a buffer
    return np.frombuffer(memory, dtype=a.dtype, count=a.size).reshape(a.shape)


def _relocate_empty_clusters(x, old, new, weights, labels) -> None:
    """scikit-learn's _relocate_empty_clusters_dense with unit weights, on the host."""
    empty = np.flatnonzero(weights == 0)
    distances = ((x - old[labels]) ** 2).sum(axis=1)
    far = np.argpartition(distances, -len(empty))[: -len(empty) - 1 : -1]
    if np.max(distances) == 0:
        return  # more clusters than distinct samples: nothing to relocate to
    for new_id, far_id in zip(empty, far):
        old_id = labels[far_id]
        new[old_id] -= x[far_id]
        new[new_id] = x[far_id]
        weights[new_id] = 1
        weights[old_id] -= 1


def validate(x, centres) -> tuple[np.ndarray, np.ndarray]:
    """(samples, centres) as KMeans(init=centres).fit(x) takes them, or its ValueError."""
    x = check_array(
        x, dtype=[np.float64, np.float32], order="C", estimator="KMeans", input_name="X"
    )
    if x.shape[0] < len(centres):
        raise ValueError(f"n_samples={x.shape[0]} should be >= n_clusters={len(centres)}.")
    centres = check_array(centres, dtype=x.dtype, copy=True, order="C")
    if centres.shape[1] != x.shape[1]:
        raise ValueError(
            f"The shape of the initial centers {centres.shape} does not match the number "
            f"of features of the data {x.shape[1]}."
        )
    return x, centres


def kmeans(x, centres, max_iter: int = 300, tol: float = 1e-4, queue=None):
    """(centres, labels, inertia, n_iter) of KMeans(algorithm="lloyd", init=centres, n_init=1).

    `x` (n_samples, n_features) and `centres` (n_clusters, n_features) are host arrays;
    float32 data stay float32, anything else becomes float64, as in scikit-learn.
    """
    x, centres = validate(x, centres)
    tolerance = np.mean(np.var(x, axis=0)) * tol if tol else 0
    mean = x.mean(axis=0)
    state = KMeansState.start(x - mean, centres - mean, queue)
    strict = False
    iteration = 0
    for iteration in range(max_iter):  # noqa: B007  (n_iter is the last one + 1)
        state.assign()
        new, shift = state.update()
        state.centres = new
        if not state.labels_changed():
            strict = True
            break
        if (shift**2).sum() <= tolerance:
            break
    if not strict:
        state.assign()  # the labels of the final centres
    labels = dpnp.asnumpy(state.labels)
    inertia = ((state.x_host - state.centres[labels]) ** 2).sum(dtype=np.float64)
    return state.centres + mean, labels, x.dtype.type(inertia), iteration + 1


def main(n: int = 200_000, features: int = 14, clusters: int = 32) -> None:
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(0)
    x = rng.random((n, features), dtype=np.float32)
    init = x[rng.choice(n, clusters, replace=False)]
    kmeans(x[:1000], init, max_iter=2)  # compiles
    started = time.perf_counter()
    centres, labels, inertia, n_iter = kmeans(x, init, max_iter=20)
    mine = time.perf_counter() - started
    started = time.perf_counter()
    ref = KMeans(clusters, init=init, n_init=1, max_iter=20, algorithm="lloyd").fit(x)
    theirs = time.perf_counter() - started
    assert n_iter == ref.n_iter_, (n_iter, ref.n_iter_)
    np.testing.assert_allclose(inertia, ref.inertia_, rtol=1e-5)
    print(
        f"k-means {n} x {features} float32, {clusters} clusters: {n_iter} iterations, "
        f"inertia {inertia:.6g} (scikit-learn {ref.inertia_:.6g}); "
        f"{mine:.2f} s here, {theirs:.2f} s scikit-learn"
    )


if __name__ == "__main__":
    main()
