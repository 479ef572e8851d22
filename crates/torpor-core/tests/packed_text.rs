//! Text traces packed in gzip, zstd or a systrace page give the same analyses as the plain
//! text, and say what they were unpacked from; the real systrace page of
//! `../shared/real-data/ftrace/` yields exactly the ftrace text its `.source.md` says was cut
//! from it (skipped where `../shared` is absent).

use std::io::{Read, Write};
use std::path::PathBuf;

use torpor_core::idle_stats::idle_stats;
use torpor_core::trace::packed_text::SystraceText;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("torpor-packed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn text_of(page: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    SystraceText::new(page).read_to_end(&mut out).unwrap();
    out
}

#[test]
fn gzip_zstd_and_html_give_the_plain_texts_report() {
    let plain_path = repo().join("tests/ftrace/two-clusters.report.txt");
    let plain = std::fs::read(&plain_path).unwrap();
    let want = idle_stats(&plain_path, None).unwrap();
    assert_eq!(want.trace.packed, None);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&plain).unwrap();
    let zst =
        ruzstd::encoding::compress_to_vec(&plain[..], ruzstd::encoding::CompressionLevel::Fastest);
    let mut html = b"<!DOCTYPE html>\n<html><head><script>var x = '</scr' + 'ipt>';</script>\n\
                     <script class=\"trace-data\" type=\"application/text\">\n{\"traceEvents\": []}\n\
                     </script>\n  <script class=\"trace-data\" type=\"application/text\">\n"
        .to_vec();
    html.extend_from_slice(&plain);
    html.extend_from_slice(b"  </script>\n</head></html>\n");
    for (name, bytes, packed) in [
        ("t.gz", gz.finish().unwrap(), "gzip"),
        ("t.zst", zst, "zstd"),
        ("t.html", html, "systrace html"),
    ] {
        let got = idle_stats(&temp(name, &bytes), None).unwrap();
        assert_eq!(got.trace.packed, Some(packed), "{name}");
        assert_eq!(got.sections, want.sections, "{name}");
        assert_eq!(got.cpu_idle_events, want.cpu_idle_events, "{name}");
    }
}

#[test]
fn the_text_block_is_found_across_read_boundaries() {
    // The tag and the closing tag straddle the 64 KiB reads.
    let text = b"# tracer: nop\n          <idle>-0     [000] d..1   1.000000: cpu_idle: state=1 cpu_id=0\n";
    for pad in [65_536 - 20, 65_536 - 5, 65_536 + 3] {
        let mut page = b"<html>".to_vec();
        page.resize(pad, b' ');
        page.extend_from_slice(b"<script class=\"trace-data\">\n");
        page.extend_from_slice(text);
        page.resize(page.len() + (65_536 - page.len() % 65_536) - 4, b'\n');
        page.extend_from_slice(b"</script>");
        let got = text_of(&page);
        assert!(got.starts_with(text), "pad {pad}");
        assert!(got[text.len()..].iter().all(|&b| b == b'\n'), "pad {pad}");
    }
    let mut none = Vec::new();
    let e = SystraceText::new(&b"<html><body>nothing</body></html>"[..])
        .read_to_end(&mut none)
        .unwrap_err();
    assert!(e.to_string().contains("found none"), "{e}");
}

#[test]
fn an_xz_file_is_refused_with_the_command_that_unpacks_it() {
    let p = temp("t.xz", b"\xfd7zXZ\x00\x00\x04");
    let e = idle_stats(&p, None).unwrap_err();
    assert_eq!(e.line, None);
    assert!(e.message.contains("xz -dk FILE"), "{e}");
}

#[test]
fn the_real_systrace_page_holds_its_ftrace_text() {
    let dir = repo().join("../shared/real-data/ftrace");
    if !dir.is_dir() {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    }
    let page = std::fs::read(dir.join("trappy-surfaceflinger-systrace.html")).unwrap();
    let text = std::fs::read(dir.join("trappy-surfaceflinger-systrace.ftrace.txt")).unwrap();
    let got = text_of(&page);
    assert_eq!(trim(&got), trim(&text));
    let a = idle_stats(&dir.join("trappy-surfaceflinger-systrace.html"), None).unwrap();
    let b = idle_stats(&dir.join("trappy-surfaceflinger-systrace.ftrace.txt"), None).unwrap();
    assert_eq!(a.sections, b.sections);
    // trappy-surfaceflinger-systrace.ftrace.txt.source.md: 621 cpu_idle events.
    assert_eq!(a.cpu_idle_events, 621);
}

/// Without the blank space around the block.
fn trim(b: &[u8]) -> &[u8] {
    b.trim_ascii()
}
