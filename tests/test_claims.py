"""The APST reproduction's Python side: verdict counts, the assumptions it varies and the
divergences rendered from the core's figures (the claim rules are tested in the core:
`experiments::apst`)."""

from __future__ import annotations

from torpor.experiments import apst


def test_claims_have_three_outcomes_counted_apart():
    claims = [{"ok": True}, {"ok": True}, {"ok": False}, {"ok": None}]
    assert apst.verdict_counts(claims) == {"hold": 2, "fail": 1, "not checkable": 1}
    assert apst.verdict_text(claims) == "2 hold, 1 fail, 1 not checkable"


def _figures(sn530: tuple[float, float, str], pm991: tuple[float, str], w7: dict | None):
    """The core's figures as ``judge_apst`` returns them: the SN530's smallest and largest
    saving and where the largest stands, the PM991's worst change and where it stands, the
    760p's workflow 7; every drive without IDLP."""
    return {
        "drives_without_idlp": list(apst.DRIVES.values()),
        "seed_sn530_saving": 0.62,
        "sn530_smallest_saving": sn530[0],
        "sn530_largest_saving": sn530[1],
        "sn530_against_seed": sn530[2],
        "seed_pm991_increase": 0.18,
        "pm991_worst": {"workflow": 3, "value": pm991[0]},
        "pm991_against_seed": pm991[1],
        "intel_w7": w7,
    }


def test_divergences_render_the_core_s_figures():
    from torpor.report import markdown

    w7 = {
        "mean_ms": 8.0,
        "seed_ms": 53.0,
        "first_target_ps": 3,
        "exit_latency_ms": 8.0,
        "declared_too_short": True,
    }
    text = " ".join(markdown.divergences(_figures((0.5, 0.75, "above"), (0.4, "above"), w7)))
    assert "None of the 5 drives reports idle power" in text
    assert 'are 50%-75%: they exceed the seed\'s "up to 62%"' in text
    assert 'workflow 3 with an increase of +40.0%: it exceeds the seed\'s "up to 18%"' in text
    assert "8.00 ms mean here against the seed's ~53 ms" in text
    assert "exit latency of PS3, its first target, is 8 ms" in text
    assert "cannot come from the declared latencies" in text
    figures = _figures((0.5, 0.5, "below"), (-0.01, "below"), w7 | {"declared_too_short": False})
    figures["drives_without_idlp"] = ["Kioxia BG4"]
    text = " ".join(markdown.divergences(figures))
    assert text.startswith("Kioxia BG4 reports idle power")
    assert "they fall short of the seed's" in text
    assert "no increase of -1.0%: it falls short of the seed's" in text
    assert "which can account for the seed's figure" in text
    text = " ".join(markdown.divergences(_figures((0.6, 0.63, "matches"), (0.18, "matches"), None)))
    assert "they match the seed's" in text and "it matches the seed's" in text
    assert "Intel 760p" not in text


def test_the_assumptions_varied_are_the_idle_ranges_and_the_transition_share():
    ranges = {
        "idle": {"wdc-pc-sn530-256gb": {"low_mw": 350.0, "high_mw": 1050.0}},
        "active": {"kioxia-bg4-kbg40zns256g": {"low_mw": 2160.0, "high_mw": 3600.0}},
    }
    ends = apst.assumption_ends(ranges)
    assert list(ends.values()) == [
        {"ps0_idle_mw": {"wdc-pc-sn530-256gb": 350.0}},
        {"ps0_idle_mw": {"wdc-pc-sn530-256gb": 1050.0}},
        {"ps0_active_mw": {"kioxia-bg4-kbg40zns256g": 2160.0}},
        {"ps0_active_mw": {"kioxia-bg4-kbg40zns256g": 3600.0}},
        {"transition_share": 0.0},
        {"transition_share": 1.0},
    ]
    assert list(ends)[1] == "PS0 idle power at the high end of its range (WD SN530 350-1050 mW)"


def test_malformed_or_incomplete_inputs_are_a_value_error():
    import pytest

    from torpor import native

    # Not the inputs' shape (no "ends", no "tables"): serde's error, as ValueError.
    with pytest.raises(ValueError, match="missing field"):
        native.judge_apst({"runs": []})
    # The right shape without the runs a rule reads: the core's typed error, not a panic.
    with pytest.raises(ValueError, match="no row for run of geekbench under menu"):
        native.judge_teo(
            {
                "runs": [],
                "revert": [],
                "vsync_us": 16667,
                "duration_s": 20,
            }
        )
