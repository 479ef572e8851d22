use super::*;

/// A sweep file around `body` (the axes, objectives and constraints), over `base.toml`.
fn file(body: &str) -> String {
    format!("[sweep]\nscenario = \"base.toml\"\n{body}")
}

const OBJECTIVE: &str = "[[sweep.objective]]\nminimise = \"avg_power_mw\"\n";

fn err(text: &str) -> String {
    parse("s.toml", text).unwrap_err().to_string()
}

#[test]
fn a_grid_counts_the_product_of_its_axes() {
    let p = parse(
        "s.toml",
        &file(&format!(
            "[[sweep.axis]]\npath = \"a\"\nvalues = [1, 2, 3]\n\
             [[sweep.axis]]\npath = \"b\"\nrange = [10, 20, 5]\n{OBJECTIVE}"
        )),
    )
    .unwrap();
    assert_eq!(p.points, 3 * 3);
    // 10, 15, 20: integers, as all three bounds are.
    assert_eq!(
        p.axes[1].values,
        vec![Value::Integer(10), Value::Integer(15), Value::Integer(20)]
    );
    assert_eq!((p.axes[0].line, p.axes[1].line), (3, 6));
}

#[test]
fn a_float_range_lands_on_its_end_despite_rounding() {
    // 0.1 + 0.1 + 0.1 is 0.30000000000000004 > 0.3: the tolerance keeps the last value.
    let p = parse(
        "s.toml",
        &file(&format!(
            "[[sweep.axis]]\npath = \"a\"\nrange = [0.0, 0.3, 0.1]\n{OBJECTIVE}"
        )),
    )
    .unwrap();
    assert_eq!(p.axes[0].values.len(), 4);
}

#[test]
fn each_malformed_part_is_refused_at_its_line() {
    let axis = |a: &str| file(&format!("[[sweep.axis]]\npath = \"a\"\n{a}\n{OBJECTIVE}"));
    let cases = [
        (axis("range = [1, 2]"), "s.toml:5: axis \"a\": range: expected [from, to, step]"),
        (axis("range = [5, 1, 1]"), "s.toml:5: axis \"a\": range: expected"),
        (axis("values = []"), "s.toml:5: axis \"a\": values: expected at least one value"),
        (axis("values = 3"), "s.toml:5: axis \"a\": values: expected an array, got 3"),
        (
            axis("range = [0, 1000000000, 1]"),
            "s.toml:5: axis \"a\": range: 1000000001 values, more than the limit of 100000",
        ),
        (
            file(&format!("[sweep.axis]\npath = \"a\"\nvalues = [1]\n{OBJECTIVE}")),
            "s.toml:3: [sweep] axis: expected an array of tables",
        ),
        (
            file("[[sweep.axis]]\npath = \"a\"\nvalues = [1]\n[sweep.objective]\nminimise = \"energy_mj\"\n"),
            "s.toml:6: [sweep] objective: expected an array of tables",
        ),
        (
            file(&format!(
                "[[sweep.axis]]\npath = \"a\"\nvalues = [1]\n{OBJECTIVE}\
                 [[sweep.constraint]]\nmetric = \"lat_p99_us\"\nmax = \"5ms\"\n"
            )),
            "s.toml:10: constraint lat_p99_us: max: expected a finite number, got \"5ms\"",
        ),
    ];
    for (text, want) in cases {
        let got = err(&text);
        assert!(got.starts_with(want), "{text}\n got: {got}\nwant: {want}");
    }
}

#[test]
fn sampling_checks_samples_seed_and_bounds() {
    let sampled = |head: &str, axis: &str| {
        format!(
            "[sweep]\nscenario = \"b.toml\"\n{head}\n[[sweep.axis]]\npath = \"a\"\n{axis}\n\
             {OBJECTIVE}"
        )
    };
    let cases = [
        (
            "mode = \"random\"\nsamples = \"ten\"",
            "low = 1\nhigh = 2",
            "s.toml:4: [sweep] samples",
        ),
        (
            "mode = \"random\"\nsamples = nan",
            "low = 1\nhigh = 2",
            "s.toml:4: [sweep] samples",
        ),
        (
            "mode = \"random\"\nsamples = 1000000000",
            "low = 1\nhigh = 2",
            "s.toml:4: [sweep] samples",
        ),
        (
            "mode = \"lhs\"\nsamples = 4\nseed = \"x\"",
            "low = 1\nhigh = 2",
            "s.toml:5: [sweep] seed: expected an integer >= 0, got \"x\"",
        ),
        (
            "mode = \"lhs\"\nsamples = 4",
            "low = 0\nhigh = 2\nlog = true",
            "s.toml:7: axis \"a\": log = true draws on a log scale, which needs low > 0",
        ),
        (
            "mode = \"lhs\"\nsamples = 4",
            "low = 3\nhigh = 2",
            "s.toml:7: axis \"a\": low 3 is above high 2",
        ),
        (
            "mode = \"grid\"",
            "low = 1\nhigh = 2",
            "s.toml:4: axis \"a\": `low`/`high` are drawn",
        ),
    ];
    for (head, axis, want) in cases {
        let text = sampled(head, axis);
        let got = err(&text);
        assert!(got.starts_with(want), "{text}\n got: {got}\nwant: {want}");
    }
}

#[test]
fn a_grid_above_the_limit_is_refused_before_its_points_are_made() {
    // 1000^3 = 10^9 points, from three axes of 1000 values each.
    let axes: String = (0..3)
        .map(|i| format!("[[sweep.axis]]\npath = \"a{i}\"\nrange = [1, 1000, 1]\n"))
        .collect();
    let got = err(&file(&format!("{axes}{OBJECTIVE}")));
    assert!(
        got.contains(
            "the grid has 1000000000 points (1000 x 1000 x 1000), more than the limit of 100000"
        ),
        "{got}"
    );
}

#[test]
fn deep_nesting_is_a_toml_error_not_a_stack_overflow() {
    let text = format!("x = {}{}", "[".repeat(3000), "]".repeat(3000));
    let got = err(&text);
    assert!(got.starts_with("s.toml:1: "), "{got}");
}

#[test]
fn a_measure_the_platform_lacks_is_named_with_what_it_needs() {
    let cpu = PlatformKinds {
        cpu: true,
        ..PlatformKinds::default()
    };
    let ufs = PlatformKinds {
        ufs: true,
        ..PlatformKinds::default()
    };
    assert!(needs("avg_power_mw", &cpu).is_ok());
    assert!(needs("lat_p99_us", &cpu)
        .unwrap_err()
        .contains("runs CPUs alone"));
    assert!(needs("lat_p99_us", &ufs).is_ok());
    assert!(needs("woken_ios", &ufs)
        .unwrap_err()
        .contains("runs a UFS device"));
    // The whole machine's measures need both CPUs and a device.
    let machine = PlatformKinds {
        cpu: true,
        nvme: true,
        ..PlatformKinds::default()
    };
    assert!(needs("system_avg_power_mw", &machine).is_ok());
    assert!(needs("task_io_p99_us", &cpu)
        .unwrap_err()
        .contains("runs CPUs alone"));
    assert!(needs("system_energy_mj", &ufs)
        .unwrap_err()
        .contains("CPUs beside a storage device"));
}
