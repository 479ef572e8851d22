"""The reports' outcome sentences follow the numbers they state: each is built here from a
made-up result where the number differs from the real run's, and the sentence must change
with it (no prose fixed in advance can contradict a result)."""

from __future__ import annotations

from typing import Any

import pytest

from torpor import native
from torpor.experiments import teo
from torpor.report import markdown


def _case_rows(on_us: float, off_us: float, assumption: str | None = None) -> list[dict]:
    """Case 1's mean clat with the boost (as the patch) and without, and case 2 at 100 MB/s
    both ways, as results.json's ``variants``/``sensitivity`` rows."""
    extra = {} if assumption is None else {"assumption": assumption}
    return [
        {"case": case, "variant": variant, "clat_avg_us": clat, "clat_device_avg_us": clat}
        | {"bw_mbs": 100.0, "low_clock_pct": 0.0, **extra}
        for case, variant, clat in (
            (1, "boost-on", on_us),
            (1, "boost-off", off_us),
            (2, "boost-on", 100.0),
            (2, "boost-off", 100.0),
        )
    ]


def _devfreq_figures(on_us: float, off_us: float) -> dict[str, Any]:
    """The core's figures for made-up runs: case 1 at `on_us` vs `off_us`, the HS-G4 run at
    90 vs 100 us."""
    variants = _case_rows(on_us, off_us)
    runs = [
        {"boost": r["variant"] == "boost-on"} | {k: v for k, v in r.items() if k != "variant"}
        for r in variants
    ]
    return native.judge_devfreq(
        {
            "runs": runs,
            "variants": variants,
            "sensitivity": _case_rows(90.0, 100.0, "min level keeps HS-G4"),
            "assumptions": [{"name": "min level keeps HS-G4", "cases": [1, 2]}],
        }
    )["figures"]


def test_case1_s_gain_is_compared_with_the_seed_s_from_the_run():
    # The seed: avg clat 550 vs 635 us, 13.4 % lower (by hand: 85 / 635). The core words the
    # comparison (its own tests hold the bounds); the sentence follows the run's gain.
    text = markdown._case1_divergence(_devfreq_figures(500.0, 1000.0))
    # 50 % lower: more than twice the seed's.
    assert "(50.0 %) is far above the seed's host-side 13.4 %" in text
    # The sensitivity run's gain is its own: 10 %.
    assert "it is 10.0 % (sensitivity table)" in text
    text = markdown._case1_divergence(_devfreq_figures(800.0, 1000.0))
    assert "(20.0 %) is above the seed's host-side 13.4 %" in text


def test_case1_s_link_times_come_from_the_device_model():
    # samsung-ufs40-class: two lanes, HS-G1 at the min level and HS-G5 at the max. By hand:
    # 65536 B over 2 x 145.76 MB/s x 0.91 framing = 247 us at G1, 16 times less (15.4 us) at
    # G5; the sentence rounds to two figures.
    text = markdown._case1_divergence(_devfreq_figures(500.0, 1000.0))
    assert "at HS-G1 a 64 KiB read crosses the link in ~250 us against ~15 us at HS-G5" in text


def test_case2_s_seed_figure_is_the_seed_s_bandwidths():
    # 388.6 vs 378.2 MB/s: +2.75 % (by hand: 10.4 / 378.2 = 0.0274987).
    assert markdown._seed_case2(_devfreq_figures(500.0, 1000.0)) == "+2.75 %"


def test_malformed_judgement_inputs_are_a_value_error():
    with pytest.raises(ValueError, match="missing field"):
        native.judge_devfreq({"runs": []})
    # A row a claim reads is missing: named, not a crash.
    figures_inputs = {"runs": [], "variants": [], "sensitivity": [], "assumptions": []}
    with pytest.raises(ValueError, match="no row for case 1"):
        native.judge_devfreq(figures_inputs)


def _teo_figures(util_more: list[str], frame_vsyncs: float) -> dict[str, Any]:
    return {"teo_util_draws_more": util_more, "menu_frame_vsyncs": frame_vsyncs, "run_vsyncs": 1200}


def test_teo_util_s_power_is_stated_from_the_figures():
    every = list(teo.WORKLOADS)
    assert markdown._teo_util_power(_teo_figures(every, 1.0)) == (
        "so teo-util draws more on every stand-in"
    )
    assert markdown._teo_util_power(_teo_figures([], 1.0)) == (
        "yet teo-util draws no more than menu on any stand-in"
    )
    some = markdown._teo_util_power(_teo_figures(["geekbench", "speedometer"], 1.0))
    assert some == "so teo-util draws more on geekbench, speedometer (not on the others)"


def test_jankbench_s_frames_are_stated_from_the_figures_and_the_run():
    rows = [{"workload": "jankbench", "governor": "menu", "frames_missed": 300}]
    text = markdown._jank(rows, _teo_figures([], 1.49997))
    assert text == "so under menu a frame takes about 1.5 vsyncs and 300 of the run's 1200 " + (
        "vsyncs are missed"
    )
