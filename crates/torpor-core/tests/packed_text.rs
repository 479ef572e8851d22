//! Text traces packed in gzip, zstd, xz or a systrace page give the same analyses as the plain
//! text, and say what they were unpacked from; a cut-short or damaged xz file is one error;
//! the real systrace page of
//! `../shared/real-data/ftrace/` yields exactly the ftrace text its `.source.md` says was cut
//! from it (skipped where `../shared` is absent).

use std::io::{Read, Write};
use std::path::PathBuf;

use torpor_core::drivers::idle_stats::idle_stats;
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

/// An xz file written by hand from the xz file format (1.2.1): one stream of one block whose
/// LZMA2 data is uncompressed chunks of at most 64 KiB, checked by CRC32. A second method
/// beside torpor's decoder: no code is shared with it.
fn xz_stream(text: &[u8]) -> Vec<u8> {
    fn crc(bytes: &[u8]) -> [u8; 4] {
        let mut c = flate2::Crc::new();
        c.update(bytes);
        c.sum().to_le_bytes()
    }
    fn vli(mut n: u64, out: &mut Vec<u8>) {
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }
    fn pad4(out: &mut Vec<u8>, from: usize) {
        while !(out.len() - from).is_multiple_of(4) {
            out.push(0);
        }
    }
    // Stream header: magic, flags (check type 1: CRC32), the flags' CRC32.
    let flags = [0x00, 0x01];
    let mut out = b"\xfd7zXZ\x00".to_vec();
    out.extend_from_slice(&flags);
    out.extend_from_slice(&crc(&flags));
    // Block header: size byte (12 bytes: (2 + 1) * 4), flags (one filter, no sizes), the LZMA2
    // filter (id 0x21, one property byte: a 4 KiB dictionary), padding, CRC32.
    let block = out.len();
    let mut header = vec![0x02, 0x00, 0x21, 0x01, 0x00, 0, 0, 0];
    let c = crc(&header);
    header.extend_from_slice(&c);
    out.extend_from_slice(&header);
    // LZMA2 chunks: control 1 (uncompressed, dictionary reset) first, then 2; size - 1 in big
    // endian; the bytes. Control 0 ends the data.
    for (i, chunk) in text.chunks(1 << 16).enumerate() {
        out.push(if i == 0 { 0x01 } else { 0x02 });
        out.extend_from_slice(&((chunk.len() - 1) as u16).to_be_bytes());
        out.extend_from_slice(chunk);
    }
    out.push(0x00);
    let unpadded = (out.len() - block + 4) as u64;
    pad4(&mut out, block);
    out.extend_from_slice(&crc(text));
    // Index: indicator, one record (unpadded size, uncompressed size), padding, CRC32.
    let index = out.len();
    out.push(0x00);
    vli(1, &mut out);
    vli(unpadded, &mut out);
    vli(text.len() as u64, &mut out);
    pad4(&mut out, index);
    let c = crc(&out[index..]);
    out.extend_from_slice(&c);
    // Footer: CRC32 of (backward size, flags), backward size, flags, magic.
    let mut tail = (((out.len() - index) / 4 - 1) as u32)
        .to_le_bytes()
        .to_vec();
    tail.extend_from_slice(&flags);
    out.extend_from_slice(&crc(&tail));
    out.extend_from_slice(&tail);
    out.extend_from_slice(b"YZ");
    out
}

#[test]
fn xz_written_by_hand_gives_the_plain_texts_report() {
    let plain_path = repo().join("tests/ftrace/two-clusters.report.txt");
    let plain = std::fs::read(&plain_path).unwrap();
    let want = idle_stats(&plain_path, None).unwrap();
    // One stream; then the text cut in three streams, with stream padding after the first.
    let (a, rest) = plain.split_at(plain.len() / 3);
    let (b, c) = rest.split_at(rest.len() / 2);
    let mut three = xz_stream(a);
    three.extend_from_slice(&[0; 8]);
    three.extend_from_slice(&xz_stream(b));
    three.extend_from_slice(&xz_stream(c));
    for (name, bytes) in [("one.xz", xz_stream(&plain)), ("three.xz", three)] {
        let got = idle_stats(&temp(name, &bytes), None).unwrap();
        assert_eq!(got.trace.packed, Some("xz"), "{name}");
        assert_eq!(got.sections, want.sections, "{name}");
        assert_eq!(got.cpu_idle_events, want.cpu_idle_events, "{name}");
    }
}

#[test]
fn xz_from_the_xz_command_gives_the_plain_texts_report() {
    let plain_path = repo().join("tests/ftrace/two-clusters.report.txt");
    let packed = match std::process::Command::new("xz")
        .args(["-c", "-6"])
        .arg(&plain_path)
        .output()
    {
        Ok(out) if out.status.success() => out.stdout,
        _ => {
            eprintln!("skipped: no `xz` command here (Debian's xz-utils) to compress with");
            return;
        }
    };
    let want = idle_stats(&plain_path, None).unwrap();
    let got = idle_stats(&temp("cli.xz", &packed), None).unwrap();
    assert_eq!(got.trace.packed, Some("xz"));
    assert_eq!(got.sections, want.sections);
}

#[test]
fn a_cut_short_or_damaged_xz_file_is_one_error() {
    let plain = std::fs::read(repo().join("tests/ftrace/two-clusters.report.txt")).unwrap();
    let whole = xz_stream(&plain);
    // Cut inside the header, the data, the check, the index and the footer.
    for cut in [8, 20, whole.len() / 2, whole.len() - 30, whole.len() - 5] {
        let e = idle_stats(&temp("cut.xz", &whole[..cut]), None).unwrap_err();
        assert!(e.message.contains("xz"), "cut at {cut}: {e}");
    }
    let half = whole.len() / 2;
    let e = idle_stats(&temp("cut.xz", &whole[..half]), None).unwrap_err();
    let want = format!("the file ends inside an xz stream, after byte {half}: it is cut short");
    assert!(e.message.contains(&want), "{e}");
    // A byte of text changed: the block's CRC32 no longer matches.
    let mut bad = whole.clone();
    bad[100] ^= 0x20;
    let e = idle_stats(&temp("bad.xz", &bad), None).unwrap_err();
    assert!(e.message.contains("the xz data is damaged"), "{e}");
    // Bytes after the stream that are neither padding nor a stream.
    let mut tail = whole.clone();
    tail.extend_from_slice(b"\0\0\0\0trailing");
    let e = idle_stats(&temp("tail.xz", &tail), None).unwrap_err();
    assert!(e.message.contains("expected another xz stream"), "{e}");
    // A stream header naming SHA-256 (check type 0x0A) as the content check.
    let mut sha = b"\xfd7zXZ\x00\x00\x0a".to_vec();
    let mut c = flate2::Crc::new();
    c.update(&[0x00, 0x0a]);
    sha.extend_from_slice(&c.sum().to_le_bytes());
    sha.extend_from_slice(&[0; 64]);
    let e = idle_stats(&temp("sha.xz", &sha), None).unwrap_err();
    assert!(e.message.contains("content check is SHA-256"), "{e}");
    // Padding that is not a multiple of four bytes.
    let mut odd = whole;
    odd.extend_from_slice(&[0; 3]);
    let e = idle_stats(&temp("odd.xz", &odd), None).unwrap_err();
    assert!(e.message.contains("multiples of 4"), "{e}");
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
