"""Progress where a person waits: a tqdm bar on a terminal, plain lines in logs and pipes."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

#: The longest text a bar shows beside itself: the bar stays on one terminal line.
MAX_TEXT = 48


def is_terminal(stream: TextIO) -> bool:
    """Whether a person watches `stream`: a TTY with a width (a pty without one shows no bar)."""
    try:
        return stream.isatty() and os.get_terminal_size(stream.fileno()).columns > 0
    except (AttributeError, ValueError, OSError):  # no file descriptor
        return False


def _shorten(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


class Progress:
    """How far a long command is: `show` what runs now, `advance` when an item is done.

    On a terminal (stderr a TTY with a width) a tqdm bar redraws one line; elsewhere (CI logs,
    pipes, files) each `show` is a line with the seconds since the start: a log stays readable.
    """

    def __init__(
        self,
        description: str,
        total: int | None = None,
        unit: str = " items",
        stream: TextIO | None = None,
        started: float | None = None,
    ):
        """`started`: the time.perf_counter() from which plain lines count (default: now)."""
        self._stream = stream if stream is not None else sys.stderr
        self._description = description
        self._started = time.perf_counter() if started is None else started
        self._bar = None
        if is_terminal(self._stream):
            from tqdm import tqdm

            self._bar = tqdm(
                total=total, desc=description, unit=unit, file=self._stream, dynamic_ncols=True
            )
        else:
            self._line(description)

    def _line(self, text: str) -> None:
        elapsed = time.perf_counter() - self._started
        print(f"[{elapsed:6.1f} s] {text}", file=self._stream, flush=True)

    def show(self, text: str) -> None:
        """Say what runs now."""
        if self._bar is not None:
            self._bar.set_postfix_str(_shorten(text))
        else:
            self._line(f"{self._description}: {text}")

    def advance(self, count: int = 1) -> None:
        """`count` more items are done."""
        if self._bar is not None:
            self._bar.update(count)

    def close(self) -> None:
        """End the bar (a terminal's line stays, showing the total)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
