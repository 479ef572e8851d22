"""The claim rules of the APST reproduction, fed synthetic rows whose verdict is known."""

from __future__ import annotations

from torpor.experiments import apst


def _rows(device: str, power: dict[int, tuple[float, float]], lat_w7=(75.0, 75.0)):
    rows = []
    for w in apst.WORKFLOWS:
        old_p, new_p = power.get(w, (1000.0, 1000.0))
        old_l, new_l = lat_w7 if w == 7 else (15.0, 15.0)
        for alg, p, lat in (("legacy", old_p, old_l), ("v5.14", new_p, new_l)):
            rows.append(
                {
                    "device": device,
                    "workflow": w,
                    "algorithm": alg,
                    "avg_power_mw": p,
                    "lat_mean_us": lat,
                    "lat_p99_us": lat,
                    "transitions": 0,
                }
            )
    return rows


def test_sn530_savings_rule_needs_thirty_percent_on_each_of_4_5_6():
    sn = "wdc-pc-sn530-256gb"
    # 1000 -> 500 mW is 50 % lower on all three: holds.
    ok = apst.claim_sn530_savings(_rows(sn, {4: (1000, 500), 5: (1000, 500), 6: (1000, 500)}))
    assert ok["ok"]
    # Workflow 5 only 25 % lower (1000 -> 750): fails.
    bad = apst.claim_sn530_savings(_rows(sn, {4: (1000, 500), 5: (1000, 750), 6: (1000, 500)}))
    assert not bad["ok"]
    assert "workflow 5: 25% lower" in bad["torpor_value"]


def test_kioxia_flat_rule_allows_ten_percent_either_way():
    k = "kioxia-bg4-kbg40zns256g"
    assert apst.claim_kioxia_flat(_rows(k, {3: (1000, 1100), 6: (1000, 900)}))["ok"]
    assert not apst.claim_kioxia_flat(_rows(k, {3: (1000, 1101)}))["ok"]


def test_pm991_rule_wants_an_increase_up_to_twice_the_seed():
    d = "samsung-pm991-mzvlq256hajd"
    assert apst.claim_pm991_increase(_rows(d, {3: (1000, 1180)}))["ok"]
    assert not apst.claim_pm991_increase(_rows(d, {3: (1000, 1400)}))["ok"]
    assert not apst.claim_pm991_increase(_rows(d, {3: (1000, 900)}))["ok"]


def test_workflow7_rules_check_direction_and_magnitude_separately():
    d = "wdc-pc-sn530-256gb"
    rows = _rows(d, {}, lat_w7=(75.0, 11075.0))
    tabs = {d: {"v5.14": {"idle_schedule": [], "device": {}}}}
    direction, magnitude = apst.claim_w7_latency(rows, tabs, d, 0.6, 10)
    # 11.075 ms >= 3 x 0.075 ms, and within x2 of 10 ms.
    assert direction["ok"] and magnitude["ok"]
    rows = _rows(d, {}, lat_w7=(75.0, 4000.0))
    direction, magnitude = apst.claim_w7_latency(rows, tabs, d, 0.6, 10)
    # 4 ms is more than 3 x 0.075 ms but less than half of 10 ms.
    assert direction["ok"] and not magnitude["ok"]
