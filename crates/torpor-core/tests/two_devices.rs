//! Two devices in one run: a UFS device and an NVMe drive on the same CPUs, each request on
//! the device its source names, each device's interrupts where its own mapping puts them.

use std::path::Path;
use torpor_core::drivers::run::{run_text, Limits, RunError};

/// gs101's CPUs with a UFS device (its interrupt fixed on CPU 0) and an NVMe drive (blk-mq's
/// managed vectors): a reader of each, and a job writing to the workloads' device `device`.
fn scenario(device: &str) -> String {
    format!(
        r#"
[platform.cpu]
preset = "google-gs101"
[platform.ufs]
preset = "samsung-ufs40-class"
[platform.nvme]
preset = "wdc-pc-sn530-256gb"
[platform.irq.ufs]
mode = "fixed"
cpus = [0]
[platform.irq.nvme]
mode = "managed"
[[workload.task]]
name = "ufs reader"
cpu = 1
sleep_min = "10ms"
sleep_max = "30ms"
run = "200us"
[workload.task.io]
device = "ufs"
rw = "randread"
bs = "16k"
size = "1g"
[[workload.task]]
name = "nvme reader"
cpu = 2
sleep = "100ms"
run = "2ms"
[workload.task.io]
device = "nvme"
rw = "randread"
bs = "128k"
size = "1g"
[workload]
device = "{device}"
[[workload.job]]
name = "backup"
rw = "write"
bs = "1m"
number_ios = 20
[run]
duration = "2s"
seed = 1
"#
    )
}

fn run(text: &str) -> Result<torpor_core::report::Report, RunError> {
    run_text(
        text,
        "s.toml",
        Path::new("."),
        &[],
        &Limits::default(),
        &mut (),
    )
}

#[test]
fn each_device_serves_what_is_sent_to_it_and_the_energy_adds_up() {
    for (device, job_to_nvme) in [("nvme", true), ("ufs", false)] {
        let report = run(&scenario(device)).expect("runs");
        let v = &report.variants[0];
        let cpu = v.cpu.as_ref().unwrap();
        let nvme = v.nvme.as_ref().unwrap();
        let ufs = v.ufs.as_ref().unwrap();
        // Each reader's requests, counted by its task and by its device.
        let reads = |name: &str| {
            let t = cpu.tasks.iter().find(|t| t.name == name).unwrap();
            t.io.as_ref().unwrap().total.count()
        };
        let (ufs_reads, nvme_reads) = (reads("ufs reader"), reads("nvme reader"));
        // The NVMe reader sleeps 100 ms per cycle (plus its 2 ms bursts and the reads): at most
        // 20 in 2 s, at least 15; the UFS reader 10-30 ms per cycle: 2 s / 30 ms = 66 at least.
        assert!((15..=20).contains(&nvme_reads), "{nvme_reads}");
        assert!(ufs_reads >= 60, "{ufs_reads}");
        let by = &cpu.io_by_device;
        assert_eq!(
            by.iter().map(|d| d.device.as_str()).collect::<Vec<_>>(),
            ["nvme", "ufs"]
        );
        assert_eq!(by[0].path.total.count(), nvme_reads);
        assert_eq!(by[1].path.total.count(), ufs_reads);
        // The job's 20 writes went to the device `[workload] device` names, and only there:
        // the drive counts its own reads and, when they came to it, the writes.
        assert_eq!(v.io.workloads[0].ios, 20);
        let writes_here = if job_to_nvme { 20 } else { 0 };
        assert_eq!(nvme.stats.ios, nvme_reads + writes_here);
        // The whole platform: CPUs + drive + UFS device.
        let sys = v.system.as_ref().unwrap();
        let sum = cpu.energy_mj + nvme.stats.energy_mj + ufs.stats.energy_mj;
        assert!((sys.energy_mj - sum).abs() < 1e-9);
        assert!((sys.device_energy_mj - (nvme.stats.energy_mj + ufs.stats.energy_mj)).abs() < 1e-9);
    }
}

#[test]
fn two_devices_need_to_be_told_where_the_workloads_go_and_whose_interrupts_go_where() {
    let base = scenario("nvme");
    let cases = [
        (
            base.replace("[workload]\ndevice = \"nvme\"\n", ""),
            "s.toml:13: [workload] device: this scenario has two devices",
        ),
        (
            base.replace("device = \"nvme\"\n[[workload.job]]", "device = \"sda\"\n[[workload.job]]"),
            "[workload] device: expected \"nvme\" or \"ufs\", a device of this scenario, got \"sda\"",
        ),
        (
            base.replace(
                "[platform.irq.ufs]\nmode = \"fixed\"\ncpus = [0]\n[platform.irq.nvme]\nmode = \"managed\"\n",
                "[platform.irq]\nmode = \"fixed\"\ncpus = [0]\n",
            ),
            "[platform.irq] mode: this scenario has two devices: say whose interrupts go where",
        ),
        (
            base.replace(
                "[platform.irq.ufs]\nmode = \"fixed\"\ncpus = [0]",
                "[platform.irq.ufs]\nmode = \"managed\"",
            ),
            "torpor's UFS host has one transfer request list and one interrupt",
        ),
        (
            base.replace("cpus = [0]\n[platform.irq.nvme]", "cpus = [9]\n[platform.irq.nvme]"),
            "the interrupt is mapped to CPU 9, which the platform does not have",
        ),
    ];
    for (text, want) in cases {
        let e = match run(&text) {
            Err(RunError::Input(e)) => e.to_string(),
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("accepted; wanted {want}"),
        };
        assert!(e.contains(want), "{e}\nwanted: {want}");
    }
}
