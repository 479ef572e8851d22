//! CPU platform presets: one platform TOML per SoC or CPU family under `presets/cpu/`, embedded at
//! build time, in the format [`CpuPlatform::parse`] reads (the same a user writes or
//! `torpor probe` prints). Each file opens with comments naming its sources and the rule behind
//! every estimated power; `docs/cpu-platform.md` describes the format.

use crate::cpu::CpuPlatform;
use crate::error::{self, InputError};

/// The preset directory (under `presets/`) holding CPU platforms.
const KIND: &str = "cpu";

/// Every built-in CPU preset, sorted by id; a preset that fails to load yields its error.
pub fn builtin() -> impl Iterator<Item = Result<CpuPlatform, InputError>> {
    super::embedded_of(KIND).map(|(id, text)| load_embedded(id, text))
}

/// The built-in preset `id`, if there is one.
pub fn find(id: &str) -> Option<Result<CpuPlatform, InputError>> {
    super::embedded_of(KIND)
        .find(|(pid, _)| *pid == id)
        .map(|(id, text)| load_embedded(id, text))
}

/// What to add after "no built-in CPU preset has this id": the closest ids, if any is close,
/// then where the list is.
pub fn suggestion(id: &str) -> String {
    super::suggest_preset(KIND, id)
}

fn load_embedded(id: &str, text: &str) -> Result<CpuPlatform, InputError> {
    let file = format!("presets/{KIND}/{id}.toml");
    let platform = CpuPlatform::parse(&file, text)?;
    if platform.id != id {
        let msg = format!(
            "`id` is \"{}\"; expected the file name, \"{id}\"",
            platform.id
        );
        return Err(InputError::at(
            &file,
            error::line_of_toml_key(text, "id").unwrap_or(1),
            msg,
        ));
    }
    Ok(platform)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::{PowerMw, StateLevel};
    use crate::input::x86_idle_power::is_x86_estimate;

    fn preset(id: &str) -> CpuPlatform {
        find(id).expect("a built-in preset").expect("it loads")
    }

    /// (name, exit latency, target residency, level) of a cluster's states.
    fn table(p: &CpuPlatform, cluster: &str) -> Vec<(String, u64, u64, StateLevel)> {
        let c = p.clusters.iter().find(|c| c.name == cluster).unwrap();
        c.states
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    s.exit_latency_us,
                    s.target_residency_us,
                    s.level,
                )
            })
            .collect()
    }

    fn rows(r: &[(&str, u64, u64, StateLevel)]) -> Vec<(String, u64, u64, StateLevel)> {
        r.iter()
            .map(|&(n, l, t, v)| (n.to_string(), l, t, v))
            .collect()
    }

    #[test]
    fn every_preset_loads_and_ids_are_the_data_ids() {
        let ids: Vec<String> = builtin().map(|p| p.unwrap().id).collect();
        assert_eq!(
            ids,
            [
                "amd-zen2-acpi-idle",
                "arm-juno-r0",
                "google-gs101",
                "hisilicon-hi3660-hikey960",
                "hisilicon-hi6220-hikey",
                "intel-alderlake",
                "intel-haswell-broadwell-client",
                "intel-skylake-client",
                "qcom-msm8916",
                "qcom-msm8996-pixel",
            ]
        );
        for text in super::super::embedded::PRESETS
            .iter()
            .filter(|(k, _, _)| *k == KIND)
            .map(|(_, _, t)| t)
        {
            assert!(
                text.starts_with("# ") && text.contains("# Source: https://"),
                "every preset opens with comments naming its source"
            );
        }
    }

    #[test]
    fn psci_exit_latency_is_dt_entry_plus_exit_and_cluster_states_are_marked() {
        use StateLevel::{Cluster, Cpu};
        // juno.dts: CPU_SLEEP_0 300 + 1200 us, min-residency 2000; CLUSTER_SLEEP_0 400 + 1200,
        // 2500. State 0 WFI is 1 us / 1 us (cpuidle-psci.c).
        let juno = rows(&[
            ("WFI", 1, 1, Cpu),
            ("CPU_SLEEP_0", 1500, 2000, Cpu),
            ("CLUSTER_SLEEP_0", 1600, 2500, Cluster),
        ]);
        let p = preset("arm-juno-r0");
        assert_eq!(table(&p, "big"), juno);
        assert_eq!(table(&p, "little"), juno);
        assert_eq!(p.cluster_of(0).unwrap().name, "little");
        assert_eq!(p.cluster_of(1).unwrap().name, "big");
        // msm8916.dtsi: 130 + 150; the genpd domain states 500 + 500 and 2000 + 2000.
        assert_eq!(
            table(&preset("qcom-msm8916"), "cpu0-3"),
            rows(&[
                ("WFI", 1, 1, Cpu),
                ("CPU_SLEEP_0", 280, 2000, Cpu),
                ("CLUSTER_RET", 1000, 2000, Cluster),
                ("CLUSTER_PWRDN", 4000, 6000, Cluster),
            ])
        );
        // hi3660.dtsi cluster1: 400 + 550, 1500; 800 + 2900, 3500.
        assert_eq!(
            table(&preset("hisilicon-hi3660-hikey960"), "cluster1"),
            rows(&[
                ("WFI", 1, 1, Cpu),
                ("CPU_SLEEP_1", 950, 1500, Cpu),
                ("CLUSTER_SLEEP_1", 3700, 3500, Cluster),
            ])
        );
        // hi6220.dtsi: CPU_SLEEP 700 + 250, 1000; CLUSTER_SLEEP has wakeup-latency-us 1500, which
        // dt_idle_states.c takes instead of 1000 + 700; min-residency 2700. Both clusters alike.
        let hikey = rows(&[
            ("WFI", 1, 1, Cpu),
            ("CPU_SLEEP", 950, 1000, Cpu),
            ("CLUSTER_SLEEP", 1500, 2700, Cluster),
        ]);
        let p = preset("hisilicon-hi6220-hikey");
        assert_eq!(table(&p, "cluster0"), hikey);
        assert_eq!(table(&p, "cluster1"), hikey);
        // msm8996.dtsi: CPU_SLEEP_0 130 + 80, 300, the only DT state (no cluster state).
        let p = preset("qcom-msm8996-pixel");
        for cluster in ["silver", "gold"] {
            assert_eq!(
                table(&p, cluster),
                rows(&[("WFI", 1, 1, Cpu), ("CPU_SLEEP_0", 210, 300, Cpu)])
            );
        }
        // gs101.dtsi big (X1): 235 + 220, 3500; no cluster state.
        assert_eq!(
            table(&preset("google-gs101"), "big"),
            rows(&[("WFI", 1, 1, Cpu), ("HERA_CPU_SLEEP", 455, 3500, Cpu)])
        );
    }

    #[test]
    fn x86_tables_are_the_variants_chosen() {
        use StateLevel::Cpu;
        // adl_l_cstates without the unusable C1; equal to pepc's i7-1260P capture.
        let p = preset("intel-alderlake");
        assert_eq!(
            table(&p, "all"),
            rows(&[
                ("POLL", 0, 0, Cpu),
                ("C1E", 2, 4, Cpu),
                ("C6", 170, 500, Cpu),
                ("C8", 200, 600, Cpu),
                ("C10", 230, 700, Cpu),
            ])
        );
        assert!(p.clusters[0].states[0].polling);
        assert!(p.clusters[0].states[1..].iter().all(|s| !s.polling));
        // Haswell's C3 is 33 us (Broadwell's 40).
        let hsw = preset("intel-haswell-broadwell-client");
        assert_eq!(table(&hsw, "all")[3], ("C3".to_string(), 33, 100, Cpu));
        assert_eq!(table(&hsw, "all").len(), 9);
        // acpi_idle: residency = latency x 2 (latency_factor).
        let amd = preset("amd-zen2-acpi-idle");
        assert_eq!(
            table(&amd, "all"),
            rows(&[
                ("POLL", 0, 0, Cpu),
                ("C1", 1, 2, Cpu),
                ("C2", 18, 36, Cpu),
                ("C3", 350, 700, Cpu),
            ])
        );
        let pss: Vec<(u64, f64)> = amd.clusters[0]
            .opps
            .iter()
            .map(|o| (o.freq_khz, o.power_mw.as_ref().unwrap().central()))
            .collect();
        assert_eq!(
            pss,
            [
                (1_400_000, 1277.0),
                (1_600_000, 1520.0),
                (1_700_000, 2071.0)
            ]
        );
    }

    #[test]
    fn capacities_follow_arch_topology_from_dmips_and_the_top_opp() {
        // capacity = floor(dmips x f_max_MHz x 1024 / max over CPUs of dmips x f_max_MHz), by hand:
        // Juno: A57 1024 x 1100 = 1126400; A53 578 x 850 = 491300 -> 446.
        // hi3660: A73 1024 x 2362 = 2418688; A53 592 x 1844 = 1091648 -> 462.
        // gs101: X1 1024 x 2802 = 2869248; A76 620 x 2253 = 1396860 -> 498; A55 250 x 1803 =
        // 450750 -> 160. msm8996 (the Pixel's OPPs): Kryo 1024 x 2150.4 MHz (gold); silver 1024 x
        // 1593.6 MHz -> floor(1593600 x 1024 / 2150400) = floor(758.86) = 758. msm8916 and
        // hi6220 have no capacity-dmips-mhz: 1024.
        let caps = |id: &str| -> Vec<(String, u64)> {
            preset(id)
                .clusters
                .iter()
                .map(|c| (c.name.clone(), c.capacity))
                .collect()
        };
        let want = |r: &[(&str, u64)]| -> Vec<(String, u64)> {
            r.iter().map(|&(n, c)| (n.to_string(), c)).collect()
        };
        assert_eq!(caps("arm-juno-r0"), want(&[("little", 446), ("big", 1024)]));
        assert_eq!(
            caps("hisilicon-hi3660-hikey960"),
            want(&[("cluster0", 462), ("cluster1", 1024)])
        );
        assert_eq!(
            caps("google-gs101"),
            want(&[("little", 160), ("mid", 498), ("big", 1024)])
        );
        assert_eq!(caps("qcom-msm8916"), want(&[("cpu0-3", 1024)]));
        assert_eq!(
            caps("qcom-msm8996-pixel"),
            want(&[("silver", 758), ("gold", 1024)])
        );
        assert_eq!(
            caps("hisilicon-hi6220-hikey"),
            want(&[("cluster0", 1024), ("cluster1", 1024)])
        );
        // The top OPP is the frequency the derivation used.
        let top = |id: &str, cluster: &str| {
            let p = preset(id);
            let c = p.clusters.iter().find(|c| c.name == cluster).unwrap();
            c.opps.last().unwrap().freq_khz
        };
        assert_eq!(top("arm-juno-r0", "little"), 850_000);
        assert_eq!(top("google-gs101", "mid"), 2_253_000);
        assert_eq!(top("hisilicon-hi3660-hikey960", "cluster0"), 1_844_000);
        assert_eq!(top("qcom-msm8996-pixel", "silver"), 1_593_600);
        assert_eq!(top("qcom-msm8996-pixel", "gold"), 2_150_400);
    }

    #[test]
    fn opp_power_is_the_dt_energy_model() {
        // P = dpc x V^2 x f, by hand: hi3660 A53 110 x 0.7^2 x 533 = 28728.7 uW; A73
        // 550 x 1.1^2 x 2362 = 1571911 uW; gs101 X1 650 x 1.05625^2 x 2802 = 2031959 uW; A55
        // 70 x 0.5375^2 x 300 = 6067 uW.
        let opp = |id: &str, cluster: &str, khz: u64| {
            let p = preset(id);
            let c = p.clusters.iter().find(|c| c.name == cluster).unwrap();
            let o = c.opps.iter().find(|o| o.freq_khz == khz).unwrap();
            o.power_mw.as_ref().unwrap().central()
        };
        // Juno (juno.dts coefficients, SCP-firmware voltages): A53 140 x 0.82^2 x 450 = 42 361.2
        // uW; A57 530 x 1.0^2 x 1100 = 583 000 uW. hi6220 (every A53): 311 x 1.04^2 x 208 =
        // 69 966.5 uW; 311 x 1.33^2 x 1200 = 660 153.5 uW.
        for (id, cluster, khz, mw) in [
            ("arm-juno-r0", "little", 450_000, 42.3612),
            ("arm-juno-r0", "big", 1_100_000, 583.0),
            ("hisilicon-hi3660-hikey960", "cluster0", 533_000, 28.7287),
            ("hisilicon-hi3660-hikey960", "cluster1", 2_362_000, 1571.911),
            ("google-gs101", "big", 2_802_000, 2031.959),
            ("google-gs101", "little", 300_000, 6.067),
            ("hisilicon-hi6220-hikey", "cluster0", 208_000, 69.9665),
            ("hisilicon-hi6220-hikey", "cluster1", 1_200_000, 660.1535),
        ] {
            let got = opp(id, cluster, khz);
            assert!((got - mw).abs() <= 0.05 + 1e-9, "{id} {khz}: {got} vs {mw}");
        }
    }

    #[test]
    fn opp_voltages_and_cpufreq_tables_are_their_sources() {
        use crate::cpu::LatencyNs;
        // (preset, cluster, OPP kHz, its microvolt, transition latency ns, coefficient), read
        // from: gs101.dtsi @ 01272f05 (X1 2802 MHz at 1 056 250 uV, clock-latency-ns 500 000,
        // dpc 650); hi3660.dtsi (A73 2362 MHz at 1.1 V, 300 000 ns, 550); SCP-firmware's Juno r0
        // table (A57 1100 MHz at 1000 mV, latency 1450 us) and juno.dts (530); hi6220.dtsi (1.2 GHz
        // at 1.33 V, 500 000 ns on every OPP, 311 on every CPU node); msm8916.dtsi has
        // no voltage, latency or coefficient (CPUFREQ_ETERNAL).
        let cases = [
            (
                "google-gs101",
                "big",
                2_802_000,
                Some(1_056_250),
                500_000,
                Some(650),
            ),
            (
                "google-gs101",
                "little",
                300_000,
                Some(537_500),
                500_000,
                Some(70),
            ),
            (
                "google-gs101",
                "mid",
                2_253_000,
                Some(968_750),
                500_000,
                Some(284),
            ),
            (
                "hisilicon-hi3660-hikey960",
                "cluster1",
                2_362_000,
                Some(1_100_000),
                300_000,
                Some(550),
            ),
            (
                "hisilicon-hi3660-hikey960",
                "cluster0",
                533_000,
                Some(700_000),
                300_000,
                Some(110),
            ),
            (
                "arm-juno-r0",
                "big",
                1_100_000,
                Some(1_000_000),
                1_450_000,
                Some(530),
            ),
            (
                "arm-juno-r0",
                "little",
                450_000,
                Some(820_000),
                1_450_000,
                Some(140),
            ),
            (
                "hisilicon-hi6220-hikey",
                "cluster0",
                1_200_000,
                Some(1_330_000),
                500_000,
                Some(311),
            ),
            (
                "hisilicon-hi6220-hikey",
                "cluster1",
                208_000,
                Some(1_040_000),
                500_000,
                Some(311),
            ),
            ("qcom-msm8916", "cpu0-3", 998_400, None, 4_294_967_295, None),
            // msm8996pro.dtsi: clock-latency-ns 200 000 on every OPP; no voltage or coefficient.
            ("qcom-msm8996-pixel", "gold", 2_150_400, None, 200_000, None),
            ("qcom-msm8996-pixel", "silver", 307_200, None, 200_000, None),
        ];
        for (id, cluster, khz, uv, latency, dpc) in cases {
            let p = preset(id);
            let c = p.clusters.iter().find(|c| c.name == cluster).unwrap();
            let o = c.opps.iter().find(|o| o.freq_khz == khz).unwrap();
            assert_eq!(o.microvolt, uv, "{id} {cluster}");
            let f = c.cpufreq.as_ref().expect("a [cluster.cpufreq]");
            let t = f.transition_latency.as_ref().unwrap();
            assert!(matches!(t, LatencyNs::Sourced { .. }));
            assert_eq!((t.central(), f.dynamic_power_coefficient), (latency, dpc));
            assert!(!f.fast_switch && !f.source.is_empty());
        }
    }

    #[test]
    fn every_derived_opp_power_is_the_kernels_integer_energy_model_within_rounding() {
        // Second method: the kernel's dev_pm_opp_calc_power (truncated mV and MHz, uW) against
        // the presets' figures (exact voltage, rounded to 0.1 mW): they differ by at most the
        // rounding (0.05 mW) plus the mV truncation (under 1 mV, so V^2 under 2 mV / V lower).
        let mut checked = 0;
        for p in builtin().map(Result::unwrap) {
            for c in &p.clusters {
                let Some(dpc) = c.cpufreq.as_ref().and_then(|f| f.dynamic_power_coefficient) else {
                    continue;
                };
                for o in &c.opps {
                    let uv = o.microvolt.expect("a voltage with the coefficient");
                    let kernel =
                        crate::cpufreq::energy_model::dt_power_uw(dpc, uv, o.freq_khz as u32)
                            as f64
                            / 1000.0;
                    let truncation = 2.0 * kernel / f64::from(uv / 1000);
                    let PowerMw::Sourced { mw, source } = o.power_mw.as_ref().unwrap() else {
                        panic!(
                            "{} {}: a derived power is a sourced figure",
                            p.id, o.freq_khz
                        );
                    };
                    assert!(
                        (mw - kernel).abs() <= 0.05 + truncation,
                        "{} {} {}: {mw} vs {kernel}",
                        p.id,
                        c.name,
                        o.freq_khz
                    );
                    assert!(source.starts_with("DERIVED: "));
                    checked += 1;
                }
            }
        }
        // gs101 11 + 14 + 17, hi3660 5 + 5, hi6220 5 + 5, Juno 5 + 5.
        assert_eq!(checked, 72);
    }

    #[test]
    fn hikey_figures_by_hand_from_hi6220_dtsi() {
        // hi6220.dtsi: eight A53s in two cpu-map clusters, no capacity-dmips-mhz (so 1024 each);
        // one opp-shared table, so both clusters carry the same five OPPs; 729 MHz at 1.09 V
        // with dpc 311: 311 x 1.1881 x 729 = 269 364.8 uW -> 269.4 mW. CLUSTER_SLEEP's exit
        // latency is its wakeup-latency-us, 1500, not entry + exit 1000 + 700 = 1700.
        let p = preset("hisilicon-hi6220-hikey");
        let cpus: Vec<Vec<u32>> = p.clusters.iter().map(|c| c.cpus.clone()).collect();
        assert_eq!(cpus, [vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        assert!(p.clusters.iter().all(|c| c.capacity == 1024));
        let opps = |c: usize| -> Vec<(u64, Option<u32>, f64)> {
            p.clusters[c]
                .opps
                .iter()
                .map(|o| {
                    let mw = o.power_mw.as_ref().unwrap().central();
                    (o.freq_khz, o.microvolt, mw)
                })
                .collect()
        };
        assert_eq!(opps(0), opps(1));
        assert_eq!(
            opps(0)[2],
            (729_000, Some(1_090_000), 269.4),
            "729 MHz by hand"
        );
        let cluster_sleep = &p.clusters[1].states[2];
        assert_eq!(cluster_sleep.name, "CLUSTER_SLEEP");
        assert_eq!(cluster_sleep.exit_latency_us, 1500);
        // The idle rule from P0 = 70.0 mW (208 MHz: 311 x 1.0816 x 208 = 69 966.5 uW): WFI 0.07
        // x 70 = 4.9 mW; the cluster state's high end 0.13 x 4 x 70 = 36.4 mW.
        let power = |s: usize| match p.clusters[0].states[s].power_mw.as_ref().unwrap() {
            PowerMw::Estimate {
                low, central, high, ..
            } => (*low, *central, *high),
            PowerMw::Sourced { .. } => panic!("an estimate"),
        };
        assert!((power(0).1 - 4.9).abs() < 1e-9);
        assert!((power(2).2 - 36.4).abs() < 1e-9);
        // Second method, the header's cross-check: LISA's measured per-CPU powers (hikey_energy.py,
        // relative units, copied by hand) 69 / 125 / 224 / 367 / 670 over the five OPPs; relative
        // to the lowest, the DT model's are 12-19 % above them in the middle and 3 % below at the
        // top (670 / 69 = 9.71 against 660.2 / 70.0 = 9.43).
        let lisa = [69.0, 125.0, 224.0, 367.0, 670.0];
        let dt: Vec<f64> = opps(0).iter().map(|o| o.2).collect();
        let excess: Vec<f64> = (1..5)
            .map(|i| (dt[i] / dt[0]) / (lisa[i] / lisa[0]) - 1.0)
            .collect();
        assert!(
            excess[..3].iter().all(|e| (0.11..0.19).contains(e)),
            "{excess:?}"
        );
        assert!((-0.035..-0.025).contains(&excess[3]), "{excess:?}");
    }

    #[test]
    fn msm8916_opp_power_is_the_cv2f_estimate_with_its_stated_constants() {
        // C = 110 uW/MHz/V^2; V = 0.90 / 0.95 / 1.05 / 1.10 V, +-0.1 V; rounded to 0.1 mW:
        // 200 MHz: 110 x 0.81 x 200 / 1000 = 17.82 -> 17.8 (0.8 V: 14.08 -> 14.1; 1.0 V: 22.0);
        // 998.4 MHz: 110 x 1.21 x 998.4 / 1000 = 132.887 -> 132.9 (1.0 V: 109.8; 1.2 V: 158.1).
        let p = preset("qcom-msm8916");
        let opps = &p.clusters[0].opps;
        let spans: Vec<(f64, f64, f64)> = [&opps[0], &opps[3]]
            .iter()
            .map(|o| match o.power_mw.as_ref().unwrap() {
                PowerMw::Estimate {
                    low, central, high, ..
                } => (*low, *central, *high),
                PowerMw::Sourced { .. } => panic!("an estimate"),
            })
            .collect();
        assert_eq!(spans, [(14.1, 17.8, 22.0), (109.8, 132.9, 158.1)]);
        // The rule in the core gives the same (before rounding).
        use crate::cpufreq::energy_model::{estimate_mw, Span};
        let s = estimate_mw(
            Span {
                low: 110.0,
                central: 110.0,
                high: 110.0,
            },
            Span {
                low: 1.0,
                central: 1.1,
                high: 1.2,
            },
            998.4,
        );
        assert_eq!(
            [s.low, s.central, s.high].map(|v| (v * 10.0).round() / 10.0),
            [109.8, 132.9, 158.1]
        );
    }

    #[test]
    fn msm8996_opp_power_is_the_cv2f_estimate_shaped_by_the_pixels_energy_model() {
        use crate::cpufreq::energy_model::{estimate_mw, Span};
        // The header's rule: C = 530 (284-650) uW/MHz/V^2; V = 0.605 V x sqrt((E / f) /
        // (E0 / 307.2)), +-0.1 V, E = LISA's per-CPU power (pixel_energy.py, copied by hand):
        // gold 307.2 MHz 93, 2150.4 MHz 1715; silver 307.2 MHz 90, 1593.6 MHz 925. By hand, gold
        // at 2150.4 MHz: V^2 = 0.366025 x (1715 / 2150.4) / (93 / 307.2) = 0.964259, V = 0.98197;
        // central 530 x 0.964259 x 2150.4 / 1000 = 1098.98 -> 1099.0 mW.
        let p = preset("qcom-msm8996-pixel");
        let span = |cluster: &str, khz: u64| -> (f64, f64, f64) {
            let c = p.clusters.iter().find(|c| c.name == cluster).unwrap();
            let o = c.opps.iter().find(|o| o.freq_khz == khz).unwrap();
            match o.power_mw.as_ref().unwrap() {
                PowerMw::Estimate {
                    low, central, high, ..
                } => (*low, *central, *high),
                PowerMw::Sourced { .. } => panic!("an estimate"),
            }
        };
        assert_eq!(span("gold", 2_150_400).1, 1099.0);
        for (cluster, khz, e, e0) in [
            ("gold", 2_150_400, 1715.0, 93.0),
            ("gold", 307_200, 93.0, 93.0),
            ("silver", 1_593_600, 925.0, 90.0),
        ] {
            let mhz = khz as f64 / 1000.0;
            let v = 0.605 * ((e / mhz) / (e0 / 307.2_f64)).sqrt();
            let want = estimate_mw(
                Span {
                    low: 284.0,
                    central: 530.0,
                    high: 650.0,
                },
                Span {
                    low: v - 0.1,
                    central: v,
                    high: v + 0.1,
                },
                mhz,
            );
            let got = span(cluster, khz);
            for (g, w) in [(got.0, want.low), (got.1, want.central), (got.2, want.high)] {
                assert!((g - w).abs() <= 0.05 + 1e-9, "{cluster} {khz}: {g} vs {w}");
            }
        }
        // Each cluster's power rises with its frequency.
        for c in &p.clusters {
            let mw: Vec<f64> = c
                .opps
                .iter()
                .map(|o| o.power_mw.as_ref().unwrap().central())
                .collect();
            assert!(mw.windows(2).all(|w| w[0] < w[1]), "{}", c.name);
        }
    }

    /// The idle-power rule of the presets' headers: (central, low, high) factors of the lowest
    /// OPP's active power per CPU, for WFI, a CPU power-down and (times the cluster's CPUs) a
    /// cluster state.
    const WFI: (f64, f64, f64) = (0.07, 0.02, 0.61);
    const CPU_DOWN: (f64, f64, f64) = (0.035, 0.0, 0.42);
    const CLUSTER: (f64, f64, f64) = (0.0, 0.0, 0.13);

    /// One legacy EAS table: see the test below.
    type Em = (f64, f64, [f64; 2], [f64; 3]);

    #[test]
    fn the_rule_factors_are_the_energy_models_medians_and_ranges() {
        // The seven legacy EAS tables, in their relative units (ARM-software/lisa): CPUs in the
        // cluster, CPU active power at the lowest OPP, CPU idle (WFI, cpu-sleep), cluster idle
        // (WFI, cpu-sleep, cluster-sleep). Copied by hand from the energy models.
        let tables: [Em; 7] = [
            (4.0, 69.0, [15.0, 0.0], [107.0, 47.0, 0.0]), // hi6220 A53
            (2.0, 90.0, [2.0, 0.0], [0.0, 0.0, 0.0]),     // msm8996 silver
            (2.0, 93.0, [2.0, 0.0], [0.0, 0.0, 0.0]),     // msm8996 gold
            (4.0, 33.0, [6.0, 0.0], [56.0, 56.0, 17.0]),  // Juno A53
            (2.0, 168.0, [15.0, 0.0], [65.0, 65.0, 24.0]), // Juno A57
            (4.0, 160.0, [6.0, 0.0], [20.0, 20.0, 0.0]),  // hi3660 A53
            (4.0, 332.0, [10.0, 0.0], [47.0, 47.0, 0.0]), // hi3660 A73
        ];
        let stats = |f: &dyn Fn(&Em) -> f64| {
            let mut v: Vec<f64> = tables.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            (v[3], v[0], v[6])
        };
        let wfi = stats(&|t| (t.2[0] + t.3[0] / t.0) / t.1);
        let down = stats(&|t| (t.2[1] + t.3[1] / t.0) / t.1);
        let cluster = stats(&|t| t.3[2] / (t.0 * t.1));
        // Each factor is its statistic rounded to two significant digits at most.
        for (got, rule) in [(wfi, WFI), (down, CPU_DOWN), (cluster, CLUSTER)] {
            for (g, r) in [(got.0, rule.0), (got.1, rule.1), (got.2, rule.2)] {
                assert!((g - r).abs() <= 0.005, "{g} rounds to {r}?");
            }
        }
    }

    #[test]
    fn every_estimated_idle_power_follows_the_rule() {
        let mut estimated = 0;
        for p in builtin().map(Result::unwrap) {
            for c in &p.clusters {
                let p0 = c
                    .opps
                    .first()
                    .and_then(|o| o.power_mw.as_ref())
                    .map(PowerMw::central);
                for (i, s) in c.states.iter().enumerate() {
                    // x86 states follow their own rule (input/x86_idle_power.rs, tested there).
                    let Some(power) = s.power_mw.as_ref().filter(|p| !is_x86_estimate(p)) else {
                        continue;
                    };
                    let p0 = p0.expect("an estimate needs the lowest OPP's power");
                    let (rule, n) = match s.level {
                        StateLevel::Cluster => (CLUSTER, c.cpus.len() as f64),
                        StateLevel::Cpu if i == 0 => (WFI, 1.0),
                        StateLevel::Cpu => (CPU_DOWN, 1.0),
                    };
                    let PowerMw::Estimate {
                        low,
                        central,
                        high,
                        source,
                    } = power
                    else {
                        panic!("{} {}: expected an estimate", p.id, s.name);
                    };
                    for (got, factor) in [(central, rule.0), (low, rule.1), (high, rule.2)] {
                        let want = factor * n * p0;
                        assert!(
                            (got - want).abs() <= 0.0005 + 1e-9,
                            "{} {} {}: {got} vs {want}",
                            p.id,
                            c.name,
                            s.name
                        );
                    }
                    assert!(source.starts_with("ESTIMATE by rule"));
                    estimated += 1;
                }
            }
        }
        // hi3660 and hi6220: 2 clusters x 3 states each; gs101: 3 clusters x 2 states; MSM8916: 4
        // states; MSM8996: 2 clusters x 2 states.
        assert_eq!(estimated, 26);
    }

    #[test]
    fn a_mistyped_id_gets_the_closest_ids() {
        assert!(find("skylake-client").is_none());
        assert_eq!(
            suggestion("skylake-client"),
            "did you mean \"intel-skylake-client\"? (`torpor devices` lists them)"
        );
        assert!(suggestion("gs101").contains("\"google-gs101\""));
        assert_eq!(suggestion("zzzz"), "see `torpor devices`");
    }
}
