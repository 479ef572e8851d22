"""Writes menu.c (read from the file named on the command line) to standard output without the
one `if` statement of `menu_select` that swaps a polling pick for a deeper state (the block
under "Use a physical idle state, not busy polling" in v6.6 .. v6.12, whose condition tests
CPUIDLE_FLAG_POLLING on the pick so far). That is the only change of the unmerged patch
"cpuidle: menu: Prefer polling state for short idle durations" (A. Devarajan, v1 2024-08-09,
v2 2025-03-17). Compiled so, menu.c gives the fidelity set's decisions (seq-NN.fidelity.jsonl);
see ../README.md. Written for torpor's tests; no kernel text."""

import sys

with open(sys.argv[1]) as f:
    lines = f.read().split("\n")
start = next(
    i
    for i, line in enumerate(lines)
    if line.lstrip().startswith("if ((drv->states[idx].flags & CPUIDLE_FLAG_POLLING)")
)
depth, end = 0, None
for j in range(start, len(lines)):
    depth += lines[j].count("{") - lines[j].count("}")
    if depth == 0 and "}" in lines[j]:
        end = j
        break
if end is None:
    sys.exit("drop_poll_swap.py: the block's closing brace was not found")
sys.stdout.write("\n".join(lines[:start] + lines[end + 1 :]))
