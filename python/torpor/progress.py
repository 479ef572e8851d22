"""Progress of a long run on the terminal.

The core calls :meth:`RunProgress.update` about ten times a second while a run goes. Nothing
is shown for the first second (most runs end sooner) nor when stderr is not a terminal (logs
stay clean); after that a bar shows the variant and the simulated time reached.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from torpor.printable import printable

#: How long a run goes before its progress is shown, in seconds.
SHOW_AFTER_S = 1.0


class RunProgress:
    """A context manager whose ``update`` is the core's progress callback."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, markup=False, highlight=False)
        self.shown = self.console.is_terminal
        self.started = time.monotonic()
        self.bar: Progress | None = None
        self.task = TaskID(0)

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.bar is not None:
            self.bar.stop()

    def update(
        self, variant: int, variants: int, name: str, now_s: float, until_s: float | None
    ) -> None:
        """Variant ``variant`` (0-based) of ``variants`` has simulated ``now_s`` of
        ``until_s`` seconds (``None``: it runs until its trace ends)."""
        if not self.shown or time.monotonic() - self.started < SHOW_AFTER_S:
            return
        if self.bar is None:
            self.bar = Progress(
                TextColumn("{task.fields[label]}", markup=False),
                BarColumn(),
                TextColumn("{task.fields[sim]}", markup=False),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self.task = self.bar.add_task("run", total=1.0, label="", sim="")
            self.bar.start()
        done = (variant + (now_s / until_s if until_s else 0.0)) / max(variants, 1)
        label = f"variant {variant + 1}/{variants} {printable(name)}"
        sim = f"{now_s:,.1f} s simulated" + (f" of {until_s:,.1f}" if until_s else "")
        self.bar.update(self.task, completed=min(done, 1.0), label=label, sim=sim)
