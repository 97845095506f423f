"""The PNG plot: launch-time ratios per case, and bandwidth ratios against working-set size."""

from __future__ import annotations

from pathlib import Path

from .cases.work_group import GROUP as WORK_GROUP
from .cases.work_group import plot_panel
from .compare import BANDWIDTH_GROUPS, CACHE_FACTOR, DEVICE_GROUP, LAUNCH_TARGETS
from .results import DPNP, NDPEX, OCL, SOM, Comparison


def _launch_panel(ax, comparisons: list[Comparison]) -> None:
    shown = [
        c
        for c in comparisons
        # the tables show these (the old ordering's ratios reach hundreds)
        if c.group == "launch" and c.ratio is not None and c.subject not in (NDPEX, SOM)
    ]
    labels = [f"{c.case.strip()}  {c.subject}" for c in shown]
    colours = [
        "tab:red" if c.status == "MISSED" else "tab:blue" if c.target else "tab:gray" for c in shown
    ]
    ax.barh(range(len(shown)), [c.ratio for c in shown], color=colours)
    ax.set_yticks(range(len(shown)), labels, fontsize=7)
    ax.invert_yaxis()
    for target in LAUNCH_TARGETS.values():
        ax.axvline(float(target.split()[1]), color="k", linestyle="--", linewidth=0.8)
    ax.set_xlabel("time per launch / raw submit_async (lower is better)")
    ax.set_title("launch overhead (grey: information only)")
    if not shown:
        ax.text(0.5, 0.5, "no launch ratios measured", ha="center", transform=ax.transAxes)


def _bandwidth_panel(ax, comparisons: list[Comparison], cache_bytes: int, reference: str) -> None:
    series: dict[str, list[tuple[int, float]]] = {}
    for c in comparisons:
        if c.ratio is None or c.reference != reference:
            continue
        if c.group in BANDWIDTH_GROUPS:
            key = f"{c.group} {c.params.get('dtype')} ({c.subject})"
        elif c.group == DEVICE_GROUP:  # dashed: device (kernel) time, not wall clock
            ragged = " ragged" if c.params.get("ragged") else ""  # a point of its own
            key = f"{c.params.get('kernel')} {c.params.get('dtype')}{ragged} (device time)"
        else:
            continue
        series.setdefault(key, []).append((c.params["bytes"], c.ratio))
    for key, points in series.items():
        points.sort()
        style = "--" if key.endswith("(device time)") else "-"
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        ax.plot(xs, ys, marker="o", linestyle=style, label=key)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.axhline(0.95, color="k", linestyle="--", linewidth=0.8)
    ax.axvline(CACHE_FACTOR * cache_bytes, color="gray", linestyle=":", linewidth=0.8)
    ax.set_xlabel("working set (bytes); right of the dotted line: past the caches")
    ax.set_ylabel(f"GB/s ratio to {reference} (higher is better)")
    title = f"bandwidth vs {reference} (black dashed: target 0.95"
    if any(key.endswith("(device time)") for key in series):
        title += "; dashed curves: kernel time on the device, the rest wall clock"
    ax.set_title(title + ")")
    if series:
        ax.legend(fontsize=7, ncol=2)
    else:
        ax.text(0.5, 0.5, "no bandwidth ratios measured", ha="center", transform=ax.transAxes)


def write_plot(path: Path, comparisons: list[Comparison], cache_bytes: int, title: str) -> str:
    """Write the PNG; returns "" or why it could not be written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        return f"matplotlib not importable ({exc}); pip install matplotlib"
    if comparisons and all(c.group == WORK_GROUP for c in comparisons):  # --only work-group
        fig, ax = plt.subplots(figsize=(11, 6), layout="constrained")
        plot_panel(ax, comparisons)
        fig.suptitle(title)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        return ""
    fig, axes = plt.subplots(
        4, 1, figsize=(11, 21), layout="constrained", height_ratios=(3, 2, 2, 2)
    )
    _launch_panel(axes[0], comparisons)
    _bandwidth_panel(axes[1], comparisons, cache_bytes, OCL)
    _bandwidth_panel(axes[2], comparisons, cache_bytes, DPNP)
    plot_panel(axes[3], comparisons)  # the work-group group's ratios
    fig.suptitle(title)
    fig.savefig(path, dpi=90)  # keeps the PNG well under 300 KB
    plt.close(fig)
    return ""
