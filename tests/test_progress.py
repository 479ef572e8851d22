"""The progress bar of a long run: hidden for the first second and off a terminal; then the
fraction of the whole run done, counting finished variants."""

from __future__ import annotations

from io import StringIO

from rich.console import Console

from torpor.progress import SHOW_AFTER_S, RunProgress


def terminal() -> Console:
    return Console(file=StringIO(), force_terminal=True, width=120)


def test_nothing_is_shown_in_the_first_second() -> None:
    with RunProgress(terminal()) as p:
        p.update(0, 1, "base", 1.0, 2.0)
        assert p.bar is None


def test_nothing_is_shown_off_a_terminal() -> None:
    with RunProgress(Console(file=StringIO(), force_terminal=False)) as p:
        p.started -= 2 * SHOW_AFTER_S
        p.update(0, 1, "base", 1.0, 2.0)
        assert p.bar is None


def test_after_a_second_the_bar_counts_finished_variants_and_simulated_time() -> None:
    with RunProgress(terminal()) as p:
        p.started -= 2 * SHOW_AFTER_S
        # Second of four variants, 3 s of 12 simulated: (1 + 3/12) / 4 = 0.3125 of the run.
        p.update(1, 4, "[/oops]", 3.0, 12.0)
        assert p.bar is not None
        task = p.bar.tasks[0]
        assert task.completed == 0.3125
        assert task.fields["label"] == "variant 2/4 [/oops]"
        assert task.fields["sim"] == "3.0 s simulated of 12.0"
        # A variant that runs until its trace ends adds nothing until it is over.
        p.update(3, 4, "replay", 40.0, None)
        assert p.bar.tasks[0].completed == 0.75
