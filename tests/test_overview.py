"""The one report of `torpor reproduce all` (`make demo`): out/results.json against its
documented schema (docs/results-schema.json), every claim of the five seeds in it once, the
page's sections in order, the last line printed, and the same bytes twice.

The demo runs once per session: ``written_pages`` (conftest.py) runs `reproduce all` for the
browser tests, and these tests read what it wrote. The page's rendering in Chromium (no
console errors, every figure drawn, no sideways scrolling at 1280 and 412 px) is
tests/test_pages_in_chromium.py's "index" case.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "docs" / "results-schema.json").read_text())
AREAS = ("apst", "devfreq", "teo", "hpb", "qos")


@pytest.fixture(scope="module")
def out(written_pages: dict[str, Any]) -> Path:
    return Path(written_pages["index"][0]).parent


@pytest.fixture(scope="module")
def results(out: Path) -> dict[str, Any]:
    return json.loads((out / "results.json").read_text())


def validate(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """The problems of ``value`` against ``schema``: the subset of JSON Schema that
    docs/results-schema.json uses (type, enum, required, properties, additionalProperties,
    items, minItems, minLength, minimum, pattern, $ref to $defs), written out so that the
    test needs no package; where `jsonschema` is installed it checks the same file too."""
    if "$ref" in schema:
        return validate(value, SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]], path)
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        checks = {
            "object": lambda v: isinstance(v, dict),
            "array": lambda v: isinstance(v, list),
            "string": lambda v: isinstance(v, str),
            "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
            "boolean": lambda v: isinstance(v, bool),
            "null": lambda v: v is None,
        }
        if not any(checks[k](value) for k in kinds):
            return [f"{path}: {value!r} is not of type {kinds}"]
    errors = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not one of {schema['enum']}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{path}: shorter than {schema['minLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, int | float) and "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: {value} below {schema['minimum']}")
    if isinstance(value, dict):
        errors += [f"{path}: lacks {k}" for k in schema.get("required", []) if k not in value]
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for k, v in value.items():
            if k in props:
                errors += validate(v, props[k], f"{path}.{k}")
            elif extra is False:
                errors.append(f"{path}: unexpected {k}")
            elif isinstance(extra, dict):
                errors += validate(v, extra, f"{path}.{k}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for i, v in enumerate(value):
                errors += validate(v, schema["items"], f"{path}[{i}]")
    return errors


def test_the_validator_catches_what_the_schema_forbids(results: dict[str, Any]) -> None:
    # The hand validator must fail on what it is for: a wrong type, a seed out of range, a
    # missing field, an unknown one.
    claim = results["claims"][0]
    assert validate(results, SCHEMA) == []
    assert validate(results | {"claims": [claim | {"ok": "yes"}]}, SCHEMA)
    assert validate(results | {"claims": [claim | {"seed": "005"}]}, SCHEMA)
    assert validate(
        results | {"claims": [{k: v for k, v in claim.items() if k != "fitted"}]}, SCHEMA
    )
    assert validate(results | {"extra": 1}, SCHEMA)


def test_results_json_validates_against_its_documented_schema(results: dict[str, Any]) -> None:
    assert validate(results, SCHEMA) == []
    try:
        import jsonschema
    except ImportError:
        return
    jsonschema.validate(results, SCHEMA)


def test_every_claim_of_the_five_seeds_appears_exactly_once(
    out: Path, results: dict[str, Any]
) -> None:
    # Each area's own results.json lists its claims; the one report has each of them once,
    # under its experiment's seed number, and nothing else.
    expected = []
    for area in AREAS:
        own = json.loads((out / area / "results.json").read_text())["claims"]
        assert own, area
        expected += [(area, c["claim"], c["seed_value"], c["torpor_value"], c["ok"]) for c in own]
    got = [
        (c["experiment"], c["claim"], c["seed_figure"], c["torpor_figure"], c["ok"])
        for c in results["claims"]
    ]
    assert sorted(got, key=repr) == sorted(expected, key=repr)
    assert len(set(got)) == len(got)
    seeds = {"apst": "000", "devfreq": "001", "teo": "002", "hpb": "003", "qos": "004"}
    assert all(c["seed"] == seeds[c["experiment"]] for c in results["claims"])
    assert [c["seed"] for c in results["claims"]] == sorted(c["seed"] for c in results["claims"])


def test_fitted_claims_are_those_the_experiments_fit_to_their_own_seed(
    results: dict[str, Any],
) -> None:
    # From the module docs: hpb fits the FTL to its 1 GB HPB-off point (read by the HPB-off
    # curve, the 1 GB parity and the 32/1 GB ratio) and the region budget to its 32 GB HPB-on
    # point (the 32 GB dip); qos fits the wake path to the WFI-only run (read by that run's
    # latency and the per-CPU halving). Seeds 000-002 fit nothing.
    fitted = {s: 0 for s in ("000", "001", "002", "003", "004")}
    for c in results["claims"]:
        assert c["fitted"] is (c["fitted_to"] is not None)
        fitted[c["seed"]] += c["fitted"]
    assert fitted == {"000": 0, "001": 0, "002": 0, "003": 4, "004": 2}


def test_robustness_is_computed_where_alternatives_run_and_explained_where_not(
    results: dict[str, Any],
) -> None:
    for c in results["claims"]:
        if c["ok"] is None:
            assert c["robust"] is None
        if c["robust"] is None and c["ok"] is not None:
            assert c["robust_basis"].startswith("not assessed: "), c
        # A verdict that flips somewhere names where; a robust one flips nowhere.
        assert (c["hinges_on"] is None) or c["robust"] is False
    for area in ("apst", "devfreq", "qos"):
        checked = [c for c in results["claims"] if c["experiment"] == area and c["ok"]]
        assert checked and all(c["robust"] is not None for c in checked), area


def test_the_page_opens_with_the_claims_then_seeds_systems_and_what_to_ship(
    out: Path, results: dict[str, Any]
) -> None:
    page = (out / "report.html").read_text()
    order = ["<h2>Claims</h2>", "<h2>The seeds</h2>", "<h2>The whole machine</h2>"]
    order += ["<h2>What to ship</h2>"]
    at = [page.index(h) for h in order]
    assert at == sorted(at) and at[0] < page.index("<svg")
    claims = results["claims"]
    assert page.count('<td class="holds">') == sum(c["ok"] is True for c in claims)
    assert page.count('<td class="fails">') == sum(c["ok"] is False for c in claims)
    assert page.count('<td class="not-checkable">') == sum(c["ok"] is None for c in claims)
    for seed in ("000", "001", "002", "003", "004"):
        assert f"<h3>Seed {seed}: " in page
    # Per system its IO decomposed and its lanes with one request's path.
    for name in ("phone", "laptop"):
        assert page.count(f'<svg id="{name}-io-path"') == 1
        assert page.count(f'<svg id="{name}-timeline"') == 1
        assert f'<g id="{name}-timeline-0-request"' in page
    report = (out / "report.md").read_text()
    md = ["## Claims", "## The seeds", "## The whole machine", "## What to ship"]
    assert [report.index(h) for h in md] == sorted(report.index(h) for h in md)


def test_what_to_ship_is_the_sweeps_pick_applied_as_users_apply_it(results: dict[str, Any]) -> None:
    # Each axis of each sweep reaches the machine through its kernel interface: nvme_core's
    # parameters, cpuidle's governor, the boost's and ufshcd's sysfs attributes.
    interface = {
        "policy.apst.primary_timeout_ms": "nvme_core.apst_primary_timeout_ms=",
        "policy.apst.primary_latency_tol_us": "nvme_core.apst_primary_latency_tol_us=",
        "policy.cpuidle.governor": "/sys/devices/system/cpu/cpuidle/current_governor",
        "policy.boost.dev_freq_timeout_ms": "/sys/block/sda/dev_freq_timeout_ms",
        "policy.devfreq.pm_qos_enable": "/pm_qos_enable",
    }
    assert [s["system"] for s in results["ship"]] == ["phone", "laptop"]
    for advice in results["ship"]:
        rec = advice["recommended"]
        assert rec is not None, advice
        text = "\n".join(rec["apply"])
        for path, value in rec["settings"].items():
            line = next(line for line in rec["apply"] if interface[path] in line)
            assert str(value).lower() in line or str(int(value)) in line, (path, value, text)
        for c in advice["constraints"]:
            value = rec["measures"][c["metric"]]
            assert c["max"] is None or value <= c["max"]
            assert c["min"] is None or value >= c["min"]
        assert rec["lines"][1].startswith(f"Recommended (point {rec['point']}): ")


def test_the_last_line_printed_is_the_page(out: Path) -> None:
    lines = (out / "stdout.txt").read_text().splitlines()
    assert lines[-1] == str(out / "report.html")


def test_the_sweep_bases_are_their_scenarios_at_the_defaults() -> None:
    # The sweeps' one-variant bases repeat their scenario's machine and workload: only the
    # variants (and comments) differ.
    for name in ("phone", "laptop"):
        full = tomllib.loads((ROOT / "scenarios" / f"system-{name}.toml").read_text())
        base = tomllib.loads((ROOT / "scenarios" / f"system-{name}-defaults.toml").read_text())
        assert "variant" not in base
        assert {k: v for k, v in full.items() if k != "variant"} == base
        # The first variant of each scenario is the defaults: it changes nothing.
        assert set(full["variant"][0]) == {"name"}


def test_the_one_report_is_byte_identical_twice(out: Path) -> None:
    # The five areas are each tested for it (test_run_and_reproduce.py); here the parts the
    # one report adds: the system runs, the sweeps and the rendering, twice from the same
    # areas' results.
    from torpor import overview
    from torpor.report import overview as overview_report

    experiments = [json.loads((out / a / "results.json").read_text()) for a in AREAS]
    pages = {a: (out / a / "report.html").read_text() for a in AREAS}
    outputs = []
    for _ in range(2):
        systems = [overview.run_system(n) for n, _, _ in overview.SYSTEMS]
        advice = [overview.ship(n) for n, _, _ in overview.SYSTEMS]
        results = overview.results(experiments, systems, advice)
        outputs.append(
            (
                json.dumps(results, indent=1),
                overview_report.markdown(results),
                overview_report.page(results, pages, systems),
            )
        )
    assert outputs[0] == outputs[1]
    assert outputs[0][0] + "\n" == (out / "results.json").read_text()
    assert outputs[0][1] == (out / "report.md").read_text()
