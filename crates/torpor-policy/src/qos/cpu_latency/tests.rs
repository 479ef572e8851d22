//! Every expected value below is worked from kernel/power/qos.c, drivers/base/power/sysfs.c,
//! lib/kstrtox.c and drivers/cpuidle/governor.c as the module doc restates them.

use super::*;

use crate::qos::REMOVAL_ORDERS as ORDERS;

#[test]
fn global_requests_take_the_minimum_and_every_removal_order_returns_to_2e9() {
    // Three holders of /dev/cpu_dma_latency: 280, 100 and 500 us.
    let holders = [(1, 280), (2, 100), (3, 500)];
    for order in ORDERS {
        let mut q = CpuLatencyQos::new(&[0]);
        assert_eq!(q.limit_us(), 2_000_000_000);
        // Opening adds a request at the default: the limit does not move.
        for &(h, _) in &holders {
            assert!(!q.open_dma_latency(h));
        }
        assert!(q.update_request(1, 280)); // 2e9 -> 280
        assert!(q.update_request(2, 100)); // 280 -> 100
        assert!(!q.update_request(3, 500)); // 100 stays
        assert_eq!(q.limit_us(), 100);
        let mut left: Vec<(u32, i32)> = holders.to_vec();
        for &i in &order {
            let (h, _) = holders[i];
            let before = q.limit_us();
            left.retain(|&(x, _)| x != h);
            let want = left.iter().map(|&(_, v)| v).min().unwrap_or(2_000_000_000);
            assert_eq!(q.close_dma_latency(h), want != before, "order {order:?}");
            assert_eq!(q.limit_us(), want, "order {order:?}");
        }
    }
}

#[test]
fn the_kernel_ignores_what_it_ignores() {
    let mut q = CpuLatencyQos::new(&[0]);
    // v6.6+: a negative value other than -1 is ignored, on add and on update.
    assert!(!q.add_request(1, -5));
    assert_eq!(q.request_us(1), None);
    assert!(q.add_request(1, 50));
    assert!(!q.update_request(1, -2));
    assert_eq!(q.limit_us(), 50);
    // Adding twice for one holder: the kernel warns and keeps the first request.
    assert!(!q.add_request(1, 10));
    assert_eq!(q.request_us(1), Some(50));
    // Updating to the current value, or a holder that never added: nothing.
    assert!(!q.update_request(1, 50));
    assert!(!q.update_request(9, 1));
    assert!(!q.remove_request(9));
    // -1 puts the request back at the default: the limit returns to 2e9.
    assert!(q.update_request(1, PM_QOS_DEFAULT_VALUE));
    assert_eq!(q.request_us(1), Some(2_000_000_000));
    assert_eq!(q.limit_us(), 2_000_000_000);
}

#[test]
fn a_write_to_cpu_dma_latency_is_binary_at_four_bytes_and_hex_otherwise() {
    // What cyclictest writes: its s32 in 4 bytes (little-endian).
    assert_eq!(parse_dma_latency_write(&0i32.to_le_bytes()), Ok(0));
    assert_eq!(parse_dma_latency_write(&[0x10, 0x27, 0, 0]), Ok(10_000));
    // Text is hex: "10" is 16 us, "1000\n" (5 bytes) is 0x1000 = 4096 us (spec §6.2).
    assert_eq!(parse_dma_latency_write(b"10"), Ok(16));
    assert_eq!(parse_dma_latency_write(b"0x10\n"), Ok(16));
    // ... but "0x10" is 4 bytes: binary 0x30317830 ('0' 'x' '1' '0', little-endian).
    assert_eq!(parse_dma_latency_write(b"0x10"), Ok(0x3031_7830));
    assert_eq!(parse_dma_latency_write(b"1000\n"), Ok(4096));
    assert_eq!(parse_dma_latency_write(b"3E8"), Ok(1000));
    // `echo 500` writes "500\n", 4 bytes, read as binary: 0x0a303035 = 170 930 229 (the value
    // reported on LKML in Aug 2023 and in spec §6.2).
    assert_eq!(parse_dma_latency_write(b"500\n"), Ok(170_930_229));
    // -1 in text is the default request; the sign is read before the digits.
    assert_eq!(parse_dma_latency_write(b"-1\n"), Ok(-1));
    // Refused: not hex, empty, newlines after one (5 bytes: not binary), beyond s32 (0x80000000 = 2^31).
    for bad in [&b"xyz"[..], b"", b"10\n\n\n", b"1 0", b"80000000", b"0x"] {
        assert!(parse_dma_latency_write(bad).is_err(), "{bad:?}");
    }
    // Only the first 34 bytes are read: 33 zeros and a "1" parse; a 35th byte is never seen.
    let mut long = vec![b'0'; 33];
    long.push(b'1');
    assert_eq!(parse_dma_latency_write(&long), Ok(1));
    long.push(b'z');
    assert_eq!(parse_dma_latency_write(&long), Ok(1));
}

#[test]
fn a_write_to_the_device_updates_the_holders_request() {
    let mut q = CpuLatencyQos::new(&[0]);
    q.open_dma_latency(7);
    assert_eq!(q.write_dma_latency(7, b"a"), Ok(true)); // 0xa = 10 us
    assert_eq!(q.limit_us(), 10);
    assert!(q.write_dma_latency(7, b"q").is_err());
    assert_eq!(q.limit_us(), 10); // a refused write leaves the request
    assert_eq!(q.write_dma_latency(7, b"-5\n"), Ok(false)); // v6.6+: ignored
    assert_eq!(q.limit_us(), 10);
}

#[test]
fn the_resume_latency_file_reads_as_the_kernel_stores_it() {
    let none = RESUME_LATENCY_NO_CONSTRAINT_US;
    for (text, want) in [
        ("0", none), // 0: no constraint
        ("10", 10),
        ("10\n", 10),
        ("+5", 5),
        ("0x10", 16), // base 0: hex after 0x
        ("010", 8),   // base 0: octal after a leading 0
        ("2147483646", 2_147_483_646),
        ("n/a", 0), // no latency allowed
        ("n/a\n", 0),
    ] {
        assert_eq!(parse_resume_latency_store(text), Ok(want), "{text:?}");
    }
    for bad in [
        "-1",
        "2147483647", // the no-constraint value itself
        "2147483648", // beyond s32
        "abc",
        "N/A",
        " 10",
        "08", // octal has no 8
        "",
        "10us",
    ] {
        assert!(parse_resume_latency_store(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn one_sysfs_request_per_cpu_whoever_writes_and_kernel_requests_beside_it() {
    let mut q = CpuLatencyQos::new(&[0, 1]);
    assert_eq!(q.resume_latency_us(0), RESUME_LATENCY_NO_CONSTRAINT_US);
    // Two writers of cpu0's file: the last write is the file's one request.
    assert_eq!(q.store_resume_latency(0, "100"), Ok(true));
    assert_eq!(q.store_resume_latency(0, "300"), Ok(true));
    assert_eq!(q.resume_latency_us(0), 300);
    assert_eq!(q.sysfs_request_us(0), 300);
    assert_eq!(q.resume_latency_us(1), RESUME_LATENCY_NO_CONSTRAINT_US); // cpu1 untouched
                                                                         // The file's request cannot be removed; "0" lifts it.
    assert!(!q.remove_resume_request(0, SYSFS_HOLDER));
    assert_eq!(q.store_resume_latency(0, "0"), Ok(true));
    assert_eq!(q.resume_latency_us(0), RESUME_LATENCY_NO_CONSTRAINT_US);
    // A refused write changes nothing.
    assert!(q.store_resume_latency(0, "-3").is_err());
    // An unknown CPU has no list: nothing to set, and no constraint to read.
    assert!(!q.set_resume_request(5, 1, 10));
    assert_eq!(q.resume_latency_us(5), RESUME_LATENCY_NO_CONSTRAINT_US);
}

#[test]
fn resume_requests_take_the_minimum_and_every_removal_order_returns_to_the_file() {
    // cpu0's file at 400 us, and two kernel requests at 50 and 250 us.
    let kernel = [(1, 50), (2, 250)];
    let removals: [[usize; 2]; 2] = [[0, 1], [1, 0]];
    for order in removals {
        let mut q = CpuLatencyQos::new(&[0]);
        q.store_resume_latency(0, "400").unwrap();
        for &(h, v) in &kernel {
            q.set_resume_request(0, h, v);
        }
        assert_eq!(q.resume_latency_us(0), 50);
        let mut left = vec![(SYSFS_HOLDER, 400), kernel[0], kernel[1]];
        for &i in &order {
            let (h, _) = kernel[i];
            let before = q.resume_latency_us(0);
            left.retain(|&(x, _)| x != h);
            let want = left.iter().map(|&(_, v)| v).min().unwrap();
            assert_eq!(q.remove_resume_request(0, h), want != before);
            assert_eq!(q.resume_latency_us(0), want);
        }
        assert_eq!(q.resume_latency_us(0), 400);
    }
}

#[test]
fn the_governor_reads_the_smaller_of_both_in_ns() {
    // (global writes, cpu0's file, expected latency_req in ns), by hand.
    let cases: [(Option<i32>, Option<&str>, i64); 7] = [
        (None, None, 2_000_000_000_000), // min(S32_MAX, 2e9) us x 1000
        (Some(100), None, 100_000),
        (None, Some("50"), 50_000),
        (Some(20), Some("50"), 20_000), // the global limit is smaller
        (Some(80), Some("50"), 50_000), // the CPU's is smaller
        (None, Some("n/a"), 0),         // n/a: no latency at all
        (Some(0), Some("0"), 0),        // the file's 0 is no constraint; the global 0 wins
    ];
    for (global, file, want) in cases {
        let mut q = CpuLatencyQos::new(&[0, 1]);
        if let Some(v) = global {
            q.add_request(1, v);
        }
        if let Some(text) = file {
            q.store_resume_latency(0, text).unwrap();
        }
        assert_eq!(q.governor_latency_req_ns(0), want, "{global:?} {file:?}");
        // cpu1 sees only the global limit.
        let cpu1 = i64::from(global.unwrap_or(2_000_000_000)) * 1000;
        assert_eq!(q.governor_latency_req_ns(1), cpu1);
    }
    // With nothing asked the governor sees torpor's no-constraint value.
    assert_eq!(
        CpuLatencyQos::new(&[0]).governor_latency_req_ns(0),
        crate::cpuidle::NO_LATENCY_CONSTRAINT_NS
    );
}

#[test]
fn an_action_opens_the_file_when_needed_and_reports_only_global_changes() {
    let mut q = CpuLatencyQos::new(&[0]);
    let act = |holder, target, op| QosAction {
        at: Nanos::ZERO,
        holder,
        target,
        op,
    };
    let dma = QosTarget::CpuDmaLatency;
    let cpu0 = QosTarget::ResumeLatency { cpu: 0 };
    // Holder 1 has no open file: the action opens it (at 2e9) and writes 30.
    assert!(q.apply(&act(1, dma, QosOp::Set(30))));
    assert_eq!(q.request_us(1), Some(30));
    // A CPU's resume latency moves that CPU's value, never the global limit.
    assert!(!q.apply(&act(SYSFS_HOLDER, cpu0, QosOp::Set(10))));
    assert_eq!(q.governor_latency_req_ns(0), 10_000);
    assert!(q.apply(&act(1, dma, QosOp::Remove)));
    assert_eq!(q.limit_us(), CPU_LATENCY_DEFAULT_US);
    assert!(!q.apply(&act(1, dma, QosOp::Remove))); // closed already
}
