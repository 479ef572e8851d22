//! Job files written by hand; every expected value comes from fio's HOWTO and `parse.c` rules
//! as the module doc states them, not from running the parser.

use super::*;

fn jobs(text: &str) -> JobFile {
    parse("j.fio", text).unwrap_or_else(|e| panic!("{e}"))
}

fn error(text: &str) -> String {
    parse("j.fio", text).unwrap_err().to_string()
}

#[test]
fn global_options_reach_the_jobs_after_it_and_jobs_override_them() {
    let f = jobs(
        "; a comment\n\
         [global]\n\
         bs=8k\n\
         iodepth=4   # inline comment\n\
         direct=1\n\
         [a]\n\
         rw=randread\n\
         [b]\n\
         rw=write\n\
         bs=64k\n\
         [global]\n\
         iodepth=2\n\
         [c]\n\
         rw=read\n",
    );
    let got: Vec<(&str, RwMode, u64, u32)> = f
        .jobs
        .iter()
        .map(|j| (j.name.as_str(), j.rw, j.bs, j.iodepth))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a", RwMode::RandRead, 8192, 4),
            ("b", RwMode::Write, 65536, 4),
            // The second [global] changes iodepth, keeps bs=8k.
            ("c", RwMode::Read, 8192, 2),
        ]
    );
}

#[test]
fn a_global_after_a_job_does_not_reach_back() {
    let f = jobs("[a]\nrw=read\ndirect=1\n[global]\nbs=16k\n[b]\nrw=read\ndirect=1\n");
    assert_eq!((f.jobs[0].bs, f.jobs[1].bs), (4096, 16384));
}

#[test]
fn numjobs_clones_the_job_under_its_own_name() {
    let f = jobs("[global]\nnumjobs=3\ndirect=1\n[r]\nrw=randread\n[w]\nrw=write\nnumjobs=1\n");
    let names: Vec<&str> = f.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["r", "r", "r", "w"]);
    // `name=` renames the section's job.
    let f = jobs("[x]\nname=renamed\nrw=read\ndirect=1\n");
    assert_eq!(f.jobs[0].name, "renamed");
}

#[test]
fn sizes_follow_fios_kb_base_1024_rules() {
    // k = 1024; KiB = 1000 under fio's default kb_base=1024 ("compatibility mode").
    for (v, want) in [
        ("4k", 4096),
        ("4K", 4096),
        ("4kb", 4096),
        ("1m", 1 << 20),
        ("1M", 1 << 20),
        ("2g", 2 << 30),
        ("4KiB", 4000),
        ("1MiB", 1_000_000),
        ("512", 512),
        ("512b", 512),
    ] {
        let f = jobs(&format!("[a]\nrw=read\nsize=4g\nbs={v}\ndirect=1\n"));
        assert_eq!(f.jobs[0].bs, want, "bs={v}");
    }
}

#[test]
fn rates_are_bytes_or_ios_per_second_per_direction() {
    let f = jobs("[a]\nrw=randrw\nrate=1m,2m\ndirect=1\n");
    assert_eq!(f.jobs[0].rate, [Some(1 << 20), Some(2 << 20)]);
    let f = jobs("[a]\nrw=randrw\nrate=,512k\ndirect=1\n");
    assert_eq!(f.jobs[0].rate, [None, Some(512 << 10)]);
    // A trailing comma is dropped (fio): both directions.
    let f = jobs("[a]\nrw=randrw\nrate_iops=100,\ndirect=1\n");
    assert_eq!(f.jobs[0].rate_iops, [Some(100), Some(100)]);
    // 0 means no limit, as in fio.
    let f = jobs("[a]\nrw=read\nrate_iops=0\ndirect=1\n");
    assert_eq!(f.jobs[0].rate_iops, [None, None]);
}

#[test]
fn times_take_each_options_default_unit() {
    // runtime and startdelay: seconds; thinktime: microseconds.
    let f = jobs("[a]\nrw=read\nruntime=2\nstartdelay=3\nthinktime=250\ndirect=1\n");
    let j = &f.jobs[0];
    assert_eq!(j.runtime, Some(Nanos::from_secs(2)));
    assert_eq!(j.startdelay, Some(Nanos::from_secs(3)));
    assert_eq!(j.thinktime, Some(Nanos::from_us(250)));
    let f = jobs("[a]\nrw=read\nruntime=1m\nstartdelay=500ms\nthinktime=2s\ndirect=1\n");
    let j = &f.jobs[0];
    assert_eq!(j.runtime, Some(Nanos::from_secs(60)));
    assert_eq!(j.startdelay, Some(Nanos::from_ms(500)));
    assert_eq!(j.thinktime, Some(Nanos::from_secs(2)));
    let f = jobs("[a]\nrw=read\ntimeout=1h\ndirect=1\n");
    assert_eq!(f.jobs[0].runtime, Some(Nanos::from_secs(3600)));
    // runtime=0: no limit.
    let f = jobs("[a]\nrw=read\nruntime=0\ndirect=1\n");
    assert_eq!(f.jobs[0].runtime, None);
}

#[test]
fn booleans_are_bare_or_numbers() {
    let f = jobs("[a]\nrw=read\ntime_based\ndirect=1\n[b]\nrw=read\ntime_based=0\ndirect=1\n");
    assert!(f.jobs[0].time_based);
    assert!(!f.jobs[1].time_based);
    let f = jobs("[a]\nrw=read\ntime_based=1\ndirect=1\n");
    assert!(f.jobs[0].time_based);
}

#[test]
fn rwmixwrite_sets_the_read_share() {
    let f = jobs("[a]\nrw=randrw\nrwmixwrite=30\ndirect=1\n");
    assert_eq!(f.jobs[0].rwmixread, 70);
}

#[test]
fn accepted_options_without_effect_and_assumptions_are_noted() {
    let f = jobs(
        "[global]\nioengine=libaio\n[a]\nrw=read\ncpus_allowed=0-3\nhipri\nfilename=/dev/nvme0n1\n",
    );
    assert_eq!(
        f.notes,
        vec![
            "j.fio:3: [a] no `direct=1`: fio would do buffered IO through the page cache; \
             torpor sends every IO to the drive, as with direct=1",
            "j.fio:3: [a] no `size`: fio would cover the whole device; torpor's drive models \
             carry no capacity, so the job stops after 1 GiB",
            "j.fio:2: [a] ioengine=libaio accepted: torpor issues the job's IO from its own \
             model, through no engine",
            "j.fio:5: [a] cpus_allowed=0-3: beside [platform.cpu] the job's thread runs on the \
             first of these CPUs; without CPUs it has no effect",
            "j.fio:6: [a] hipri accepted: completions are not polled (libaio has no polled path \
             in mainline kernels, aio polling having given way to io_uring's IOPOLL, and \
             torpor's UFS host has no poll queues): beside [platform.cpu] they interrupt a CPU",
            "j.fio:7: [a] filename=/dev/nvme0n1 accepted: IO goes to the scenario's drive",
        ]
    );
    assert_eq!(f.jobs[0].cpus_allowed, Some(vec![0, 1, 2, 3]));
}

#[test]
fn cpu_lists_read_as_fio_writes_them() {
    use crate::workload::fio_job::parse_cpu_list;
    assert_eq!(parse_cpu_list("3"), Ok(vec![3]));
    assert_eq!(parse_cpu_list("5-6,1, 3"), Ok(vec![1, 3, 5, 6]));
    assert!(parse_cpu_list("3-1").is_err());
    assert!(parse_cpu_list("x").is_err());
}

#[test]
fn a_share_of_the_device_is_noted_when_time_based_and_refused_otherwise() {
    let f = jobs("[a]\nrw=randread\nsize=50%\ntime_based\nruntime=1\ndirect=1\n");
    assert_eq!(f.notes.len(), 1, "{:?}", f.notes);
    assert!(
        f.notes[0].starts_with("j.fio:3: [a] size=50%"),
        "{}",
        f.notes[0]
    );
    assert_eq!(
        error("[a]\nrw=randread\nsize=50%\ndirect=1\n"),
        "j.fio:3: [a] size=50%: a share of the device, and torpor's drive models carry no \
         capacity; without `time_based` it decides how much IO the job does: give bytes \
         (size=1g)"
    );
}

#[test]
fn every_error_names_its_line() {
    let cases = [
        (
            "[a]\nrw=read\nfoo=1\n",
            "j.fio:3: unknown fio option `foo` (torpor reads: name, rw, readwrite, rwmixread, \
             rwmixwrite, bs, blocksize, iodepth, numjobs, rate, rate_iops, thinktime, \
             thinktime_blocks, runtime, timeout, time_based, startdelay, size, offset, \
             number_ios, direct, cpus_allowed, hipri, ioengine, filename, directory)",
        ),
        (
            "bs=4k\n[a]\nrw=read\n",
            "j.fio:1: option `bs` outside of a section: expected `[global]` or a `[job]` header \
             before it (fio refuses it too)",
        ),
        (
            "[a]\nrw=read\nfilename=${DEV}\n",
            "j.fio:3: `${DEV}`: fio expands it from the environment (or the machine) when it \
             reads the file; torpor does not: write the value",
        ),
        (
            "[a]\nrw=read\nnumjobs=$ncpus\n",
            "j.fio:3: `$ncpus`: fio expands it from the environment (or the machine) when it \
             reads the file; torpor does not: write the value",
        ),
        (
            "[a]\nrw=read\nruntime=10sec\n",
            "j.fio:3: `runtime`: expected a whole number of us, ms, s, m (minutes), h or d, got \
             \"10sec\" (fio would take an unknown suffix as microseconds)",
        ),
        (
            "[a]\nrw=read\nruntime=1.5s\n",
            "j.fio:3: `runtime`: expected a whole number of us, ms, s, m (minutes), h or d, got \
             \"1.5s\"",
        ),
        (
            "[a]\nrw=trim\n",
            "j.fio:2: `rw=trim`: trims are not modelled; expected read or write modes",
        ),
        (
            "[a]\nrw=read\nbs=4x\n",
            "j.fio:3: `bs`: expected a whole number with an optional k, m, g, t, p suffix \
             (fio's units), got \"4x\"",
        ),
        (
            "[a]\nrw=read\ndirect=0\n",
            "j.fio:3: `direct=0`: buffered IO goes through the page cache, which torpor does \
             not model; write direct=1",
        ),
        (
            "[a\nrw=read\n",
            "j.fio:1: expected a section header `[name]`, got \"[a\"",
        ),
        (
            "[global]\nbs=4k\n",
            "j.fio:2: the file ends without a job: expected a `[name]` section with `rw=` and \
             the job's options (a `[global]` section alone defines none)",
        ),
        (
            "[a]\nrw=read\nrate=1m,2m,3m\n",
            "j.fio:3: `rate=1m,2m,3m`: a third value (trims) is not read; give READ,WRITE",
        ),
        (
            "[a]\nrw=read\niodepth\n",
            "j.fio:3: `iodepth` needs a value (`iodepth=...`)",
        ),
        (
            "[a]\nrw=read\nnumjobs=300\n",
            "j.fio:3: `numjobs`: expected 1 to 256 clones, got 300",
        ),
        (
            "[a]\nrw=read\ninclude other.fio\n",
            "j.fio:3: `include`: torpor reads one job file; put the included options in it",
        ),
    ];
    for (text, want) in cases {
        let got = error(text);
        assert!(got.starts_with(want), "{text}\n got: {got}\nwant: {want}");
    }
}

#[test]
fn a_validation_error_points_at_the_line_that_set_the_key() {
    // bs set in [global] at line 2; the job's region (size, line 5) is smaller than a block.
    assert_eq!(
        error("[global]\nbs=64k\ndirect=1\n[a]\nsize=4k\nrw=read\n"),
        "j.fio:5: [a] `size`: expected a region at least one block (`bs`) large"
    );
    // A key never set points at the job's header.
    assert_eq!(
        error("[global]\nrate=1m\nrate_iops=10\n[a]\nrw=read\n"),
        "j.fio:3: [a] `rate_iops`: `rate` and `rate_iops` are mutually exclusive in a \
         direction (as in fio)"
    );
}

#[test]
fn clones_beyond_the_limit_are_refused_at_numjobs() {
    let text = "[global]\nnumjobs=200\ndirect=1\nsize=1m\n[a]\nrw=read\n[b]\nrw=read\n";
    assert_eq!(
        error(text),
        "j.fio:2: [b] numjobs=200: at most 256 jobs in all, counting clones (200 before this \
         section)"
    );
}
