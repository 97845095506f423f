"""Terminal tables and notes that fit WIDTH columns: every table of the report is made here.

A table wider than that is split into blocks of columns, one under the other, each with the
case column again; a case name longer than MAX_LABEL is shortened, and notes wrap. Nothing is
lost: the --json output holds every figure and name in full.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

WIDTH = 100
MAX_LABEL = 48
GAP = "  "


def shorten(text: str, width: int) -> str:
    """`text`, cut to `width` characters with an ellipsis where it is longer."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _blocks(widths: list[int], room: int) -> list[list[int]]:
    """Column indices in order, in as few runs as fit `room` characters each (at least one)."""
    blocks: list[list[int]] = [[]]
    used = 0
    for index, width in enumerate(widths):
        if blocks[-1] and used + len(GAP) + width > room:
            blocks.append([])
            used = 0
        blocks[-1].append(index)
        used += len(GAP) + width
    return blocks


def table(
    title: str,
    headers: Sequence[str],
    rows: Sequence[tuple[str, Sequence[str]]],
    left: Sequence[int] = (),
    width: int = WIDTH,
) -> list[str]:
    """The lines of a table: `title` over the case column, then one column per header,
    right-aligned but for the indices in `left`; `rows` are (case, cells)."""
    label_width = min(max([len(title)] + [len(label) for label, _ in rows]), MAX_LABEL)
    room = width - label_width
    widths = [
        min(max([len(h)] + [len(cells[i]) for _, cells in rows]), room - len(GAP))
        for i, h in enumerate(headers)
    ]

    def cell(text: str, index: int) -> str:
        text = shorten(text, widths[index])
        return GAP + (text.ljust if index in left else text.rjust)(widths[index])

    lines: list[str] = []
    for number, block in enumerate(_blocks(widths, room)):
        name = f"{title}, continued" if number else title
        head = (name if len(name) <= label_width else title).ljust(label_width)
        head += "".join(cell(headers[i], i) for i in block)
        lines += ([""] if number else []) + [head.rstrip(), "-" * len(head)]
        for label, cells in rows:
            line = shorten(label, label_width).ljust(label_width)
            lines.append((line + "".join(cell(cells[i], i) for i in block)).rstrip())
    return lines


def notes(texts: Sequence[str], width: int = WIDTH) -> list[str]:
    """Each note wrapped to `width`: indented two spaces, its continuation lines four."""
    lines = []
    for text in texts:
        lines += textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="    ")
    return lines


def prose(texts: Sequence[str], width: int = WIDTH) -> list[str]:
    """Paragraphs of the report's head, wrapped to `width`, continuation lines indented."""
    lines = []
    for text in texts:
        lines += textwrap.wrap(text, width, subsequent_indent="  ") or [""]
    return lines
