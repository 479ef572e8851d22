"""Markdown reports for the built-in experiments."""

from __future__ import annotations

from typing import Any

from torpor import native
from torpor.experiments import apst, devfreq, hpb, qos, teo


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _robust(claim: dict[str, Any]) -> str:
    """The robustness column: yes, n/a (not checkable), or what the verdict hinges on."""
    if claim.get("robust") is None:
        return "n/a"
    if claim["robust"]:
        return "yes"
    return claim["hinges_on"] or "no: fails at the central value and at every end"


def _change(fraction: float | None) -> str:
    """A relative change the core worked out ("n/a": none, the old figure being zero)."""
    return "n/a" if fraction is None else f"{fraction:+.1%}"


def _drive_section(device: str, rows: list[dict[str, Any]], figures: dict[str, Any]) -> str:
    name = apst.DRIVES[device]
    out = [f"### {name} (`{device}`)", ""]
    for alg in apst.ALGORITHMS:
        out.append(f"- {alg} table: {figures['schedules'][device][alg]}")
    out.append("")
    body = []
    for w in apst.WORKFLOWS:
        old = apst.row(rows, device, w, "legacy")
        new = apst.row(rows, device, w, "v5.14")
        change = figures["changes"][device][str(w)]
        body.append(
            [
                str(w),
                f"{old['avg_power_mw']:.1f}",
                f"{new['avg_power_mw']:.1f}",
                _change(change["power"]),
                f"{old['lat_mean_us']:.1f}",
                f"{new['lat_mean_us']:.1f}",
                _change(change["latency"]),
                f"{old['lat_p99_us']:.1f}",
                f"{new['lat_p99_us']:.1f}",
                f"{old['lat_p999_us']:.1f}",
                f"{new['lat_p999_us']:.1f}",
                f"{old['lat_max_us']:.1f}",
                f"{new['lat_max_us']:.1f}",
                f"{old['woken_ios']}",
                f"{new['woken_ios']}",
                f"{old['transitions']}",
                f"{new['transitions']}",
            ]
        )
    header = [
        "workflow",
        "power legacy mW",
        "power v5.14 mW",
        "power change",
        "mean lat legacy us",
        "mean lat v5.14 us",
        "lat change",
        "p99 legacy us",
        "p99 v5.14 us",
        "p99.9 legacy us",
        "p99.9 v5.14 us",
        "max legacy us",
        "max v5.14 us",
        "woken IOs legacy",
        "woken IOs v5.14",
        "transitions legacy",
        "transitions v5.14",
    ]
    out.append(_table(header, body))
    return "\n".join(out)


_MARK = {True: "yes", False: "**no**", None: "not checkable"}


def _claims(claims: list[dict[str, Any]]) -> str:
    """The claims without a robustness column: verdict, claim, seed, torpor."""
    return _table(
        ["", "claim", "seed", "torpor"],
        [[_MARK[c["ok"]], c["claim"], c["seed_value"], c["torpor_value"]] for c in claims],
    )


#: How a figure of torpor's stands against the seed's (the core's ``Against``), as a verb for
#: a plural and a singular subject.
_AGAINST = {
    "above": ("exceed", "exceeds"),
    "below": ("fall short of", "falls short of"),
    "matches": ("match", "matches"),
}


def divergences(figures: dict[str, Any]) -> list[str]:
    """Where the model and the seed part ways, stated from the core's figures of this run."""
    out = []
    no_idlp = figures["drives_without_idlp"]
    if no_idlp:
        who = (
            f"None of the {len(apst.DRIVES)} drives"
            if len(no_idlp) == len(apst.DRIVES)
            else ", ".join(no_idlp)
        )
        out.append(
            f"{who} reports idle power (IDLP) for its operational states, so idle PS0 is "
            "charged at each preset's estimate (a stated rule anchored on two measured drives, "
            "with a range): power changes scale with it wherever a table changes how long the "
            "drive idles in PS0, which is why every power claim is also checked at both ends "
            "of the ranges (the robust column)."
        )
    lo, hi = figures["sn530_smallest_saving"], figures["sn530_largest_saving"]
    seed_saving = figures["seed_sn530_saving"]
    out.append(
        f"WD SN530 savings on workflows 4-6 are {lo:.0%}-{hi:.0%}: they "
        f"{_AGAINST[figures['sn530_against_seed']][0]} the seed's "
        f'"up to {seed_saving:.0%}".'
    )
    w, worst = figures["pm991_worst"]["workflow"], figures["pm991_worst"]["value"]
    seed_increase = figures["seed_pm991_increase"]
    word = "an increase" if worst > 0 else "no increase"
    out.append(
        f"Samsung PM991 worst case is workflow {w} with {word} of {worst:+.1%}: it "
        f"{_AGAINST[figures['pm991_against_seed']][1]} the seed's "
        f'"up to {seed_increase:.0%}".'
    )
    w7 = figures["intel_w7"]
    if w7:
        verdict = (
            "so the seed's figure cannot come from the declared latencies: the real drive wakes "
            "slower than its descriptor says, or the host adds delay"
            if w7["declared_too_short"]
            else "which can account for the seed's figure"
        )
        out.append(
            f"Latency is device-side with the declared, maximum entry and exit latencies. "
            f"Intel 760p workflow 7 under v5.14: {w7['mean_ms']:.2f} ms mean here against the "
            f"seed's ~{w7['seed_ms']:g} ms; the declared exit latency of "
            f"PS{w7['first_target_ps']}, its first target, is {w7['exit_latency_ms']:g} ms, "
            f"{verdict}."
        )
    return out


def apst_report(results: dict[str, Any], figures: dict[str, Any]) -> str:
    """Seed 000's page: the claims, where the model and the seed part ways, and per drive its
    tables and runs; ``figures`` are the core's (``judge_apst``)."""
    rows = results["runs"]
    claims = results["claims"]
    parts = [
        "# NVMe APST: legacy (v4.12-v5.13) vs v5.14 table builder",
        "",
        "Reproduces the measurements described in the message of Linux commit ebd8a93aa4f5 "
        '("nvme: extend and modify the APST configuration algorithm", seed 000) in simulation: '
        f"5 drives x 7 workflows x 2 algorithms, {apst.DURATION} of simulated time per run.",
        "",
        "Workflows: "
        + "; ".join(f"{i}) {t}" for i, t in enumerate(native.apst_workflow_titles(), 1)),
        "",
        "Model: drive power states and latencies from each drive's own descriptors; power is "
        "ACTP while servicing IO (MP when not reported), IDLP when idle (when not reported: the "
        "preset's PS0 estimate, with its range), and halfway between the last operational "
        "state's idle and maximum power while entering or leaving a non-operational state (no "
        "drive documents it; the ends, idle and maximum power, are checked too); an IO that "
        "finds the drive asleep waits for the declared exit latency. Latency is device-side "
        "(submission to completion); the seed measured it on the host.",
        "",
        f"## Claims ({apst.verdict_text(claims)})",
        "",
        _table(
            ["", "claim", "seed", "torpor", "robust"],
            [
                [
                    _MARK[c["ok"]],
                    c["claim"],
                    c["seed_value"],
                    c["torpor_value"],
                    _robust(c),
                ]
                for c in claims
            ],
        ),
        "",
        "Robust: the verdict at the central power figures also holds at both ends of every "
        "drive's estimated PS0 idle power range (the presets give each range and its source).",
        "",
        "## Where the model and the seed part ways",
        "",
    ]
    parts += [f"- {d}" for d in divergences(figures)]
    parts += [
        f"- Not checked: {c['claim']} ({c['torpor_value'].removeprefix('not checkable: ')})."
        for c in claims
        if c["ok"] is None
    ]
    parts += ["", "## Per drive", ""]
    for device in apst.DRIVES:
        parts += [_drive_section(device, rows, figures), ""]
    return "\n".join(parts)


def _perc_diff(percent: float | None) -> str:
    """A perc_diff the core worked out ("-": none, menu's figure being zero)."""
    return "-" if percent is None else f"{percent:+.2f}%"


def _teo_util_power(figures: dict[str, Any]) -> str:
    """Where teo-util draws more power than menu, stated from the core's figures."""
    more = figures["teo_util_draws_more"]
    if len(more) == len(teo.WORKLOADS):
        return "so teo-util draws more on every stand-in"
    if not more:
        return "yet teo-util draws no more than menu on any stand-in"
    return "so teo-util draws more on " + ", ".join(more) + " (not on the others)"


def _jank(rows: list[dict[str, Any]], figures: dict[str, Any]) -> str:
    """Jankbench's frames under menu, stated from the run: vsyncs per frame and the frames
    the UI thread missed, of the run's vsyncs."""
    missed = teo.row(rows, "jankbench", "menu")["frames_missed"]
    return (
        f"so under menu a frame takes about {figures['menu_frame_vsyncs']:.1f} vsyncs and "
        f"{missed} of the run's {figures['run_vsyncs']} vsyncs are missed"
    )


def teo_report(results: dict[str, Any], rows: list[dict[str, Any]], figures: dict[str, Any]) -> str:
    """Seed 002's tables from torpor's runs: per workload the idle misses, the power and each
    task's wake-up latency against menu, then the cluster-state case behind the revert;
    ``figures`` are the core's (``judge_teo``)."""
    claims = results["claims"]
    parts = [
        "# cpuidle: teo util-awareness (seed 002) on a simulated Pixel 6",
        "",
        "Stand-ins for the seed's workloads on the gs101 preset (HZ=250), "
        f"{teo.DURATION} of simulated time per run, under "
        + ", ".join(f"`{g}`" for g in teo.GOVERNORS)
        + '. The seed\'s "teo" is the teo of its 5.18 kernel: `teo@5.13`; its util-aware teo '
        "is `teo-util` (`teo@6.3`, as merged). Idle misses are the cpuidle core's above (too "
        "deep) and below (too shallow) counts over all idle periods, as the seed counted "
        "`cpu_idle_miss` events.",
        "",
        f"Model: `{teo.CPUFREQ}` picks each cluster's OPP from PELT utilization (ASSUMPTION: "
        "the seed does not name its cpufreq governor); a burst's work takes longer at a lower "
        "clock and a running CPU draws its OPP's power (the gs101 device tree's energy model); "
        "an idle state's power through its exit; entering a state costs the energy its target "
        "residency implies; idle-state powers are the preset's estimates "
        "(docs/cpu-platform.md). Wake-up latency is the time from a task's wake-up to its burst "
        "starting. Score proxies: work per second (as time at the highest OPP) for Geekbench, "
        "PCMark and Speedometer; for Jankbench the mean frame time, from the vsync interrupt to "
        "the end of the RenderThread burst it led to, and the frames the UI thread missed.",
        "",
        f"## Claims ({teo.verdict_text(claims)})",
        "",
        _claims(claims),
        "",
        "## Where the model and the seed part ways",
        "",
        "- The stand-ins are built from the benchmarks' shapes, not from traces of them: absolute "
        "percentages differ from the seed's; the claims compare orderings.",
        "- The seed's power changes came with performance changes (Jankbench's frames "
        f"{figures['seed_frame_gain_pct']:g} % shorter). In torpor an idle governor reaches "
        "the frequency only through the time a wake-up takes: PELT utilization is "
        "frequency-invariant, so schedutil's choice for a given burst does not depend on how "
        "deep the CPU slept; a shallower state costs idle power and gives back a shorter "
        f"wake-up, {_teo_util_power(figures)}.",
        "- Jankbench's frames: each stage of the stand-in's chain (UI thread, then "
        "RenderThread) runs at the OPP schedutil picks for it, which stretches a periodic burst "
        "to about 80 % of its period (the 1.25 headroom over a frequency-invariant "
        f"utilization), {_jank(rows, figures)}; the seed's phone had "
        f"{figures['seed_frame_ms']:g} ms frames and {figures['seed_jank_pct']:g} % jank. "
        "Its kernel had what torpor leaves out: "
        "task placement (energy-aware scheduling), Android's boosts (uclamp, which torpor "
        "models but these stand-ins do not set), thermal limits. Only the change against menu "
        "is compared.",
        "",
        "## Workloads",
        "",
    ]
    parts += [f"- **{name}**: {doc}" for name, (doc, _) in teo.WORKLOADS.items()]
    for w in teo.WORKLOADS:
        menu = teo.row(rows, w, "menu")
        against = figures["against_menu"][w]
        parts += ["", f"## {w}", "", "Idle misses", ""]
        parts.append(
            _table(
                ["governor", "type", "count_perc"],
                [
                    [g, kind, f"{teo.row(rows, w, g)[key]:.3f}%"]
                    for kind, key in (
                        ("too deep", "too_deep_pct"),
                        ("too shallow", "too_shallow_pct"),
                    )
                    for g in teo.GOVERNORS
                ],
            )
        )
        parts += ["", "Power usage [mW]", ""]
        parts.append(
            _table(
                ["governor", "value", "perc_diff"],
                [
                    [
                        g,
                        f"{teo.row(rows, w, g)['avg_power_mw']:.1f}",
                        _perc_diff(against["power"][g]),
                    ]
                    for g in teo.GOVERNORS
                ],
            )
        )
        parts += ["", "Score proxy", ""]
        score_rows = []
        for g in teo.GOVERNORS:
            r = teo.row(rows, w, g)
            if w == "jankbench":
                value = f"mean frame {r['frame_ms']:.2f} ms, {r['frames_missed']} missed"
            else:
                value = f"{r['work_ms_per_s']:.1f} ms of work per s"
            score_rows.append([g, value, _perc_diff(against["score"][g])])
        parts.append(_table(["governor", "value", "perc_diff"], score_rows))
        parts += ["", "Task wake-up latency (mean per task)", ""]
        latency_rows = []
        for task in [t["task"] for t in menu["_tasks"]]:
            for g in teo.GOVERNORS:
                got = next(
                    t["latency_avg_us"] for t in teo.row(rows, w, g)["_tasks"] if t["task"] == task
                )
                diff = _perc_diff(against["latency"][task][g])
                latency_rows.append([task, g, f"{got:.2f}us", diff])
        parts.append(_table(["comm", "governor", "value", "perc_diff"], latency_rows))
    revert = results["revert"]
    parts += [
        "",
        "## The revert of v6.11: a cluster state never reached",
        "",
        "HiKey960's little cluster (WFI, CPU_SLEEP_0, CLUSTER_SLEEP_0 for the whole cluster), "
        f"CPU0 lightly but steadily busy ({teo.REVERT_LIGHT_RUN_US} us every "
        f"{teo.REVERT_LIGHT_PERIOD_MS} ms), CPUs 1-3 waking every {teo.REVERT_RARE_PERIOD_MS} ms.",
        "",
        _table(
            ["governor", "CPU0 in cluster state", "CPUs 1-3 in cluster state", "power mW"],
            [
                [
                    r["governor"],
                    f"{r['cluster_state_pct_cpu0']:.1f}%",
                    f"{r['cluster_state_pct_others']:.1f}%",
                    f"{r['avg_power_mw']:.2f}",
                ]
                for r in revert
            ],
        ),
    ]
    return "\n".join(parts) + "\n"


def _gain(figures: dict[str, Any], key: str, assumption: str | None, variant: str) -> float:
    """A run's boost gain against boost-off as the core measured it (``key``:
    ``case1_clat_gain_pct``, mean clat lower, or ``case2_bw_gain_pct``, bandwidth higher),
    percent; ``assumption`` names the sensitivity run (None: as run)."""
    run = next(r for r in figures["runs"] if r["assumption"] == assumption)
    return float(run[key][variant])


def _about(value: float) -> str:
    """``value`` to two significant figures, as prose rounds a figure: 247.0 -> 250."""
    return f"{float(f'{value:.2g}'):g}"


def _case1_divergence(figures: dict[str, Any]) -> str:
    """Case 1's gain against the seed's (the core's ``figures``), and the link times behind
    it, from the device's model."""
    link = native.ufs_link_times(devfreq.DEVICE, _READ_BYTES)
    lo, hi = link["min"], link["max"]
    gain = _gain(figures, "case1_clat_gain_pct", None, "boost-on")
    seed = figures["seed_case1_gain_pct"]
    return (
        "- Case 1: the gain's size follows the min level's service time: at "
        f"HS-G{lo['gear']} a 64 KiB read crosses the link in ~{_about(lo['link_us'])} us "
        f"against ~{_about(hi['link_us'])} us at HS-G{hi['gear']}, so the device-side gain "
        f"({gain:.1f} %) {figures['case1_against_seed']} the seed's host-side "
        f"{seed:.1f} %; with HS-G4 kept at the min level it is "
        f"{_gain(figures, 'case1_clat_gain_pct', 'min level keeps HS-G4', 'boost-on'):.1f} % "
        "(sensitivity table)."
    )


#: fio's block size in both cases (randread, 64 KiB).
_READ_BYTES = 65536


def _bw_gain(figures: dict[str, Any], assumption: str | None, variant: str) -> float:
    """Case 2's bandwidth gain of ``variant`` against boost-off in one run, percent."""
    return _gain(figures, "case2_bw_gain_pct", assumption, variant)


def _seed_case2(figures: dict[str, Any]) -> str:
    """The seed's case 2 gain as the report cites it."""
    return f"{figures['seed_case2_gain_pct']:+.2f} %"


def _anatomy(results: dict[str, Any], assumption: str | None = None) -> dict[str, Any]:
    """Case 2's clock anatomy rows of one run, by variant."""
    return {r["variant"]: r for r in results["case2"] if r.get("assumption") == assumption}


def _case2_divergence(results: dict[str, Any], figures: dict[str, Any]) -> str:
    """Case 2's bandwidth change against the seed's, and its cause, from the runs."""
    by = _anatomy(results)
    off = by["boost-off"]
    gain = _bw_gain(figures, None, "boost-on")
    if gain >= figures["case2_gain_range_pct"][0]:
        return (
            f"- Case 2: the boost raises bandwidth by {gain:+.2f} % (seed {_seed_case2(figures)})."
        )
    low = max(off["low_ms_at_job_starts"])
    jobs = len(off["low_ms_at_job_starts"])
    inside = (
        "never while a job runs"
        if off["scale_downs"] <= jobs
        else f"{off['scale_downs'] - jobs} more times while jobs run"
    )
    return (
        f"- Case 2: the boost changes bandwidth by {gain:+.2f} % (seed {_seed_case2(figures)}). "
        "The clock "
        f"is at the min level at most {low:.1f} ms from a job's start and {inside} (above); "
        "the patch's boost acts at the poll that ends that stretch."
    )


def _case2_by_assumption(results: dict[str, Any], figures: dict[str, Any]) -> list[str]:
    """Case 2's bandwidth under each assumption, with the scale-ups that start ufshcd's CPU
    latency vote, and where the boost moves bandwidth by more than 1 %, why."""
    groups = [
        None,
        *dict.fromkeys(r.get("assumption") for r in results["case2"] if "assumption" in r),
    ]
    rows, vote_driven = [], []
    for assumption in groups:
        by = _anatomy(results, assumption)
        off, on, now = by["boost-off"], by["boost-on"], by["boost-at-once"]
        ups = [r["scale_ups"] for r in (off, on, now)]
        rows.append(
            [
                assumption or "ufs-qcom (as run)",
                f"{off['bw_mbs']:.1f}",
                f"{on['bw_mbs']:.1f} ({_bw_gain(figures, assumption, 'boost-on'):+.2f} %)",
                f"{now['bw_mbs']:.1f} ({_bw_gain(figures, assumption, 'boost-at-once'):+.2f} %)",
                "/".join(map(str, ups)),
            ]
        )
        for name, r in (("the patch", on), ("at once", now)):
            gain = _bw_gain(figures, assumption, r["variant"])
            if abs(gain) > 1.0 and (off["scale_ups"] == 0) != (r["scale_ups"] == 0):
                vote_driven.append(
                    f"{assumption or 'ufs-qcom'} ({name}: {gain:+.1f} %, "
                    f"scale-ups {off['scale_ups']} without the boost, {r['scale_ups']} with)"
                )
    parts = [
        _table(
            ["case 2 under", "BW off", "BW patch", "BW at once", "scale-ups off/patch/at once"],
            rows,
        )
    ]
    if vote_driven:
        parts += [
            "",
            "- Where the boost moves case 2's bandwidth by more than 1 % ("
            + "; ".join(vote_driven)
            + "), one of the two runs scales up at least once and the other never does; the "
            "first scale-up starts ufshcd's CPU latency vote (below), which moves bandwidth far "
            "more than the clock's level does.",
        ]
    return parts


def _case2_clock(results: dict[str, Any], figures: dict[str, Any]) -> list[str]:
    """Case 2: where the clock is low, what the polls saw, and what that leaves the boost;
    every figure from the runs."""
    by = _anatomy(results)
    off, on, now = by["boost-off"], by["boost-on"], by["boost-at-once"]
    jobs = len(off["low_ms_at_job_starts"])
    period = off["polling_period_ms"]
    down, up = off["down_at_or_below_pct"], off["up_from_pct"]

    def lows(r: dict[str, Any]) -> str:
        return ", ".join(f"{ms:.1f}" for ms in r["low_ms_at_job_starts"])

    table = _table(
        [
            "variant",
            "ms at the min level from each job's start",
            "downs/ups",
            "windows at max: n, mean %, lowest %",
            f"at max <= {down} %",
            "windows at min: n, mean %",
            "BW MB/s",
        ],
        [
            [
                r["variant"],
                lows(r),
                f"{r['scale_downs']}/{r['scale_ups']}",
                f"{r['windows_at_max']['n']}, {r['windows_at_max']['mean_pct']}, "
                f"{r['windows_at_max']['lowest_pct']}",
                str(r["windows_at_max_at_or_below_down"]),
                f"{r['windows_at_min']['n']}, "
                + (
                    "-"
                    if r["windows_at_min"]["mean_pct"] is None
                    else str(r["windows_at_min"]["mean_pct"])
                ),
                f"{r['bw_mbs']:.2f}",
            ]
            for r in (off, on, now)
        ],
    )
    low_starts = [ms for ms in off["low_ms_at_job_starts"] if ms > 0]
    oscillates = off["scale_downs"] > jobs
    parts = [
        f"A poll at the max level goes down when its window was busy {down} % or less "
        f"(`ufs-qcom`'s 70/5 and the clock's rounding up to its table); one at the min level "
        f"goes up from {up} %. Polls come every {period:g} ms.",
        "",
        table,
        "",
        f"- The clock {'does' if oscillates else 'does not'} oscillate under continuous QD1 "
        f"reads: at the max level the windows were {off['windows_at_max']['mean_pct']} % busy "
        f"on average and {off['windows_at_max_at_or_below_down']} of "
        f"{off['windows_at_max']['n']} were at or below {down} % ({off['scale_downs']} "
        f"scale-downs for {jobs} jobs: the windows in which a job ended).",
    ]
    if low_starts:
        parts.append(
            f"- {len(low_starts)} of {jobs} jobs start with the clock at the min level (the "
            "poll after the previous job's end went down, then scaling suspended); each stays "
            f"there {min(low_starts):.1f} to {max(low_starts):.1f} ms: one poll ({period:g} ms "
            "after the start of the job's first jiffy), the read it drains and the stall, not "
            "longer. The patch's boost acts at that same poll "
            f"({lows(on)} ms); at once it scales up at the job's first read ({lows(now)} ms)."
        )
    else:
        parts.append(f"- All {jobs} jobs start with the clock at the max level.")
    parts.append(
        f"- Bandwidth: {off['bw_mbs']:.2f} MB/s without the boost, {on['bw_mbs']:.2f} "
        f"({_bw_gain(figures, None, 'boost-on'):+.2f} %) as the patch, {now['bw_mbs']:.2f} "
        f"({_bw_gain(figures, None, 'boost-at-once'):+.2f} %) at once (seed "
        f"{_seed_case2(figures)})."
    )
    variants = {r["variant"]: r for r in results["variants"] if r["case"] == 1}
    d_min = variants["boost-off"]["clat_device_avg_us"]
    d_max = variants["boost-on"]["clat_device_avg_us"]
    cycle_max = 65536 / now["bw_mbs"]
    share = cycle_max / (cycle_max + d_min - d_max)
    needed_ms = 1000 * figures["seed_case2_gain_pct"] / 100 * devfreq.RUNTIME_S / (1 - share)
    parts.append(
        f"- At the runs' own service times (a 64 KiB read {d_max:.0f} us at the max level, "
        f"{d_min:.0f} us at the min, a read every {cycle_max:.0f} us at the max) the min level "
        f"moves {100 * share:.0f} % of the max level's data, so {_seed_case2(figures)} would take "
        "each job "
        f"about {needed_ms:.0f} ms at the min level that the boost removes: "
        f"{needed_ms / period:.0f} polls, where the model has at most one."
    )
    dd65_run = "downdifferential 65 (Android's ufs-qcom)"
    dd65 = _anatomy(results, dd65_run)
    if dd65:
        o65 = dd65["boost-off"]
        parts.append(
            f"- With 70/65 (Qualcomm's 2025 patch, Android's value) a poll goes down only at "
            f"{o65['down_at_or_below_pct']} % or less; the lowest window at the max level was "
            f"{o65['windows_at_max']['lowest_pct']} % (a job's end), so the clock "
            f"{'never leaves' if o65['scale_downs'] == 0 else 'leaves'} the max level "
            f"({o65['scale_downs']} scale-downs) and the boost changes bandwidth by "
            f"{_bw_gain(figures, dd65_run, 'boost-at-once'):+.2f} % at once."
        )
    parts += ["", *_case2_by_assumption(results, figures), ""]
    noqos_run = "no CPU latency vote (pm_qos_enable off)"
    noqos = _anatomy(results, noqos_run)
    if noqos:
        q_off = noqos["boost-off"]
        parts.append(
            "- ufshcd's CPU latency vote holds every CPU at 0 us from a scale-up's clock switch "
            "to the next scale-down; torpor's host starts with it released (as after probe), "
            "so the vote only begins at a run's first scale-up. Without the vote the fio "
            f"thread's wake-ups pay deeper idle exits: {q_off['bw_mbs']:.2f} MB/s against "
            f"{off['bw_mbs']:.2f} without the boost"
            + (
                f", and a run that never scales up (70/65 above: {dd65['boost-off']['bw_mbs']:.2f}"
                " MB/s) runs as without it"
                if dd65
                else ""
            )
            + f". The boost's gain is alike without the vote "
            f"({_bw_gain(figures, noqos_run, 'boost-at-once'):+.2f} % "
            "at once): the vote moves absolute bandwidth, not the boost's effect."
        )
    return parts


def devfreq_report(results: dict[str, Any], figures: dict[str, Any]) -> str:
    """Seed 001 from torpor's runs: the claims, the fio cases with the boost off, on (as the
    patch) and at once, the sensitivity runs, and the Pixel 6a app traces; ``figures`` are the
    core's (``native.judge_devfreq``)."""
    claims = results["claims"]
    cols = ["case", "variant", "clat min/avg/max us", "p99 us", "BW MB/s", "low clock %", "mJ"]

    def variant_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
        return [
            [
                str(r["case"]),
                r["variant"] + (f" ({r['assumption']})" if "assumption" in r else ""),
                f"{r['clat_min_us']:.0f}/{r['clat_avg_us']:.0f}/{r['clat_max_us']:.0f}",
                f"{r['clat_p99_us']:.0f}",
                f"{r['bw_mbs']:.1f}",
                f"{r['low_clock_pct']:.1f}",
                f"{r['energy_mj']:.0f}",
            ]
            for r in rows
        ]

    parts = [
        "# Block-layer device-frequency boost for UFS (seed 001), simulated",
        "",
        f"fio as the seed ran it (randread, 64 KiB, iodepth 1, five 10 s jobs started 20 s "
        f"apart) on `{devfreq.DEVICE}` behind a `{devfreq.PROFILE}` host, with "
        f"`dev_freq_timeout_ms` = {devfreq.TIMEOUT_MS} and without. Case 1: one IO every 10 ms "
        "per job (the seed's `--rate=10ms`, read as a pacing interval); case 2: continuous. "
        "`boost-on` is the patch (devfreq sees the floor at its next poll); `boost-at-once` is "
        "what a merged version would likely do (a frequency-QoS request on the host, whose "
        "notifier re-evaluates at once). Latency is device-side (the seed's clat includes the "
        "host's block layer and driver).",
        "",
        f"## Claims ({devfreq.verdict_text(claims)})",
        "",
        _claims(claims),
        "",
        "## The fio cases",
        "",
        _table(cols, variant_rows(results["variants"])),
        "",
        "## Sensitivity",
        "",
        "The same cases with the min level keeping HS-G4 (as MediaTek hosts do), under "
        "ufshcd's core defaults (100 ms deferrable monitor, 70/5, no suspension at the max "
        "level) instead of `ufs-qcom`, with `ufs-qcom`'s downdifferential at 65 (Qualcomm's "
        "2025 patch: Android's value), and case 2 without ufshcd's CPU latency vote.",
        "",
        _table(cols, variant_rows(results["sensitivity"])),
        "",
        "## Case 2: the clock under continuous reads",
        "",
        *_case2_clock(results, figures),
        "",
        "## Where the model and the seed part ways",
        "",
        _case2_divergence(results, figures),
        _case1_divergence(figures),
        "- Device and host power, hibern8 exit and scale costs are the preset's estimates "
        "(`torpor devices --json` shows their ranges).",
        "",
        "## Pixel 6a app traces",
        "",
    ]
    if results["pixel_note"]:
        parts.append(results["pixel_note"] + ".")
    else:
        parts += [
            f"Real block IO of a Pixel 6a's UFS (acsl-technion/MobileBlockIOTraces) replayed "
            f"at its timestamps on `{devfreq.PIXEL_DEVICE}` behind a `{devfreq.PROFILE}` host: "
            "a what-if (the phone's own host does not scale this way). The traces mark no "
            "write as synchronous, so only reads trigger the boost.",
            "",
            _table(
                [
                    "trace",
                    "boost",
                    "IOs",
                    "avg us",
                    "p99 us",
                    "read avg us",
                    "mJ",
                    "uJ/IO",
                    "low clock %",
                    "scale-ups",
                ],
                [
                    [
                        r["trace"],
                        r["boost"],
                        f"{r['ios']:,}",
                        f"{r['lat_avg_us']:.0f}",
                        f"{r['lat_p99_us']:.0f}",
                        "-" if r["read_avg_us"] is None else f"{r['read_avg_us']:.0f}",
                        f"{r['energy_mj']:.0f}",
                        "-" if r["energy_per_io_uj"] is None else f"{r['energy_per_io_uj']:.1f}",
                        f"{r['low_clock_pct']:.1f}",
                        f"{r['scale_ups']:,}",
                    ]
                    for r in results["pixel"]
                ],
            ),
        ]
    return "\n".join(parts) + "\n"


def hpb_report(results: dict[str, Any], figures: dict[str, Any]) -> str:
    """Seed 003 from torpor's runs: the claims, the iozone table beside the seed's, the device
    and host side of each run, and the app-launch cycles; ``figures`` (the seed's tables, the
    warm-up curves) are the core's (``native.judge_hpb``)."""
    claims = results["claims"]
    rows = results["runs"]

    def bw(gb: int, on: bool) -> float:
        return float(next(r for r in rows if r["range_gb"] == gb and r["hpb"] == on)["bw_mbs"])

    iozone = [
        [
            f"{s['range_gb']} GB",
            f"{bw(s['range_gb'], True):.1f}",
            f"{s['hpb_on_mbs']}",
            f"{bw(s['range_gb'], False):.1f}",
            f"{s['hpb_off_mbs']}",
        ]
        for s in figures["seed_iozone"]
    ]
    detail = [
        [
            f"{d['range_gb']} GB",
            "on" if d["hpb"] else "off",
            str(d["hit_cnt"]),
            str(d["miss_cnt"]),
            str(d["map_req_cnt"]),
            str(d["rcmd_inactive_cnt"]),
            str(d["device_map_misses"]),
            "" if d["host_map_peak_mib"] is None else f"{d['host_map_peak_mib']:.1f}",
            f"{d['lat_avg_us']:.1f}",
        ]
        for d in results["detail"]
    ]
    launch = results["launch"]

    def launch_s(cycle: int, on: bool) -> float:
        return float(next(r for r in launch if r["cycle"] == cycle and r["hpb"] == on)["storage_s"])

    cycles = [d["cycle"] for d in figures["launch"]]
    launch_rows = [
        [
            str(d["cycle"]),
            f"{launch_s(d['cycle'], False):.2f}",
            f"{launch_s(d['cycle'], True):.2f}",
            f"{d['hpb_minus_off_s']:+.2f}",
            f"{s['baseline_s']}",
            f"{s['hpb_s']}",
            f"{s['hpb_minus_baseline_s']:+.1f}",
        ]
        for d, s in zip(figures["launch"], figures["seed_launch"], strict=True)
    ]
    return "\n".join(
        [
            "# UFS Host Performance Booster (seed 003), simulated",
            "",
            "HPB was removed from Linux in v6.6: this is the what-if its users still ask about. "
            f"iozone as the seed ran it (4 KiB random reads, 16 threads, each over range/16) on "
            f"`{hpb.DEVICE}`, HPB in device control mode (the v6.5 driver's logic), clock "
            "scaling off. Ranges are GiB (iozone's sizes are binary). The device's FTL is "
            "calibrated to the seed's 1 GB HPB-off figure, the host's active-region budget to "
            "its 32 GB HPB-on figure; every other value is a prediction.",
            "",
            f"## Claims ({hpb.verdict_text(claims)})",
            "",
            _claims(claims),
            "",
            "## iozone random read, MB/s",
            "",
            _table(["range", "HPB on", "seed on", "HPB off", "seed off"], iozone),
            "",
            "## Each run's HPB and device counters",
            "",
            "`hit`/`miss`: reads sent as HPB READ / eligible reads sent as normal READs; "
            "`map req`: READ BUFFERs; `inactive`: regions the device asked the host to drop; "
            "`device misses`: map pages the device read from NAND; `host map`: the peak host "
            "memory of the map cache.",
            "",
            _table(
                [
                    "range",
                    "HPB",
                    "hit",
                    "miss",
                    "map req",
                    "inactive",
                    "device misses",
                    "host map MiB",
                    "read avg us",
                ],
                detail,
            ),
            "",
            "## App launch cycles",
            "",
            f"A synthetic launch workload ({hpb.GAMES} games reading {hpb.GAME_READS} and "
            f"{hpb.OTHERS} apps reading {hpb.OTHER_READS} random 4 KiB blocks at queue depth "
            f"1, each over a {hpb.SPAN_GIB:g} GiB span, apps {hpb.STRIDE_GIB:g} GiB apart), "
            f"launched in order, {hpb.CYCLES} cycles. torpor's figure is the storage time of "
            "the launches; the seed's is whole start-up time (CPU and app work included), so "
            "only the direction of the change compares.",
            "",
            _table(
                [
                    "cycle",
                    "storage s, off",
                    "storage s, HPB",
                    "diff",
                    "seed baseline s",
                    "seed HPB s",
                    "seed diff",
                ],
                launch_rows,
            ),
            "",
            "## Warm-up: what sets its pace",
            "",
            "HPB's gain per cycle (storage time off - on, s) with one lever moved over its range "
            "and the others at their defaults (`default`): the device's recommendation "
            "threshold (`device_miss_threshold`, misses of its map cache in a region before it "
            "recommends the region; not public, default 1), the HPB workqueue's latency "
            "(`map_work_delay_us`) and the LU's active-region budget (`max_active_regions`; "
            f"the launches span {hpb.WORKING_SET_REGIONS} regions). `half at` is the first "
            "cycle reaching half the mean gain of cycles 4-6. All three are ESTIMATES.",
            "",
            _table(
                ["lever", "value", *[f"cycle {c}" for c in cycles], "half at", "hit ratio"],
                _hpb_warmup_rows(results["warmup"], figures),
            ),
            "",
            "## Pixel 6a app traces with HPB (what-if)",
            "",
            *_hpb_pixel(results),
        ]
    )


def _hpb_warmup_rows(warmup: list[dict[str, Any]], figures: dict[str, Any]) -> list[list[str]]:
    """One row per lever value (its gains and half cycle the core's), then the seed's gains."""
    rows = []
    for curve in figures["warmup"]:
        lever, value = curve["lever"], curve["value"]
        hit = next(r["hit_ratio"] for r in warmup if (r["lever"], r["value"]) == (lever, value))
        rows.append(
            [
                f"`{lever}`",
                "defaults" if lever == "default" else str(value),
                *[f"{g:.2f}" for g in curve["gains_s"]],
                str(curve["half_gain_cycle"]),
                f"{hit:.3f}",
            ]
        )
    seed = figures["seed_gains_s"]
    rows.append(["seed", "", *[f"{g:g}" for g in seed], str(figures["seed_half_gain_cycle"]), ""])
    return rows


def _hpb_pixel(results: dict[str, Any]) -> list[str]:
    if results["pixel_note"]:
        return [results["pixel_note"] + ".", ""]
    rows = [
        [
            r["trace"],
            "on" if r["hpb"] else "off",
            str(r["reads"]),
            "" if r["read_avg_us"] is None else f"{r['read_avg_us']:.1f}",
            "" if r["read_p99_us"] is None else f"{r['read_p99_us']:.1f}",
            str(r["hit_cnt"]),
            str(r["miss_cnt"]),
            str(r["map_req_cnt"]),
            str(r["outside_lu"]),
            f"{r['energy_mj']:.0f}",
        ]
        for r in results["pixel"]
    ]
    return [
        "Real block IO of a Pixel 6a's UFS (acsl-technion/MobileBlockIOTraces, captured with "
        f"HPB off) replayed at its timestamps on `{hpb.DEVICE}` with HPB off and on. The "
        "phone's device is larger than this preset's LU: requests past its end are served "
        "without HPB and counted (`past LU`). HPB 1.0 turns only one-block (4 KiB) reads into "
        "HPB READs.",
        "",
        _table(
            [
                "trace",
                "HPB",
                "reads",
                "read avg us",
                "read p99 us",
                "hit",
                "miss",
                "map req",
                "past LU",
                "mJ",
            ],
            rows,
        ),
        "",
    ]


def qos_report(results: dict[str, Any]) -> str:
    """Seed 004 from torpor's runs: the claims, cyclictest's line and each CPU's residency per
    configuration (idlestat's comparison, as the seed prints it), and the NVMe scenario."""
    claims = results["claims"]
    rows = results["runs"]
    states = sorted({s for r in rows for s in r["residency_pct"]}, key=["WFI", "spc"].index)
    per_cpu = [
        [
            r["config"],
            str(r["cpu"]),
            *[f"{r['residency_pct'].get(s, 0.0):.1f}" for s in states],
            f"{r['energy_mj']:.2f}",
        ]
        for r in rows
    ]
    nvme = results["nvme_tolerance"]
    windows = [
        [
            w["window"],
            f"{w['from_s']:g}-{w['to_s']:g} s",
            str(w["ios"]),
            "" if w["lat_avg_us"] is None else f"{w['lat_avg_us']:.0f}",
            "" if w["lat_max_us"] is None else f"{w['lat_max_us']:.0f}",
            f"{w['avg_power_mw']:.1f}",
        ]
        for w in nvme["windows"]
    ]
    return "\n".join(
        [
            "# Per-CPU resume latency against cpu_dma_latency (seed 004), simulated",
            "",
            "cyclictest (`-t 1 -n -i 10000 -l 1000 --latency=10000`) as a task on cpu0 of the "
            f"MSM8916 as Linux v4.10 drove it (WFI and spc, {qos.SPC_US} us), `{qos.GOVERNOR}`, "
            f"{qos.DURATION_S} s: no limit, "
            f"`/dev/cpu_dma_latency` at {qos.LIMIT_US} us, and cpu0's "
            f"`pm_qos_resume_latency_us` at {qos.LIMIT_US} us. Power figures are estimates "
            "(inputs/msm8916-v4.10.toml); latency is the timer's slack, the wake-up path "
            "(timer interrupt and scheduler, fitted to the seed's WFI-only run) and the idle "
            "state's real exit.",
            "",
            f"## Claims ({qos.verdict_text(claims)})",
            "",
            _claims(claims),
            "",
            "## cyclictest",
            "",
            "```",
            *[f"{c:8s} {line}" for c, line in results["cyclictest"].items()],
            "```",
            "",
            "## idlestat's comparison (baseline: no limit)",
            "",
            *[
                line
                for c in qos.CONFIGS
                for line in [f"{c}:", "", "```", *results["idlestat"][c], "```", ""]
            ],
            "## Residency per CPU (% of the run) and energy",
            "",
            _table(["config", "cpu", *[f"{s} %" for s in states], "mJ"], per_cpu),
            "",
            "## An NVMe drive's latency tolerance lowered mid-run",
            "",
            f"`{nvme['drive']}` under APST workflow {nvme['workflow']}; at {nvme['at_s']:g} s a "
            f"holder writes {nvme['tolerance_us']} to "
            "`nvme0/power/pm_qos_latency_tolerance_us`, and the driver rebuilds the table with "
            f"`ps_max_latency_us` = {nvme['ps_max_latency_us']}.",
            "",
            "Table before: " + "; ".join(nvme["table_before"]) + ".",
            "",
            "Table after: " + "; ".join(nvme["table_after"]) + ".",
            "",
            _table(["window", "span", "IOs", "lat avg us", "lat max us", "avg mW"], windows),
            "",
        ]
    )
