//! The dependency rule of DESIGN.md ("Layers"), checked on the source: a module of the core
//! imports only from its own layer or the layers below it. Test code is outside the rule (a
//! test may drive a model through a parser or a driver).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The core's top-level modules, bottom layer first; DESIGN.md's table says the same.
const LAYERS: &[&[&str]] = &[
    // The engine's re-exports (crate torpor-sim).
    &["sim", "time"],
    // The policies' re-exports (crate torpor-policy, which imports only the engine): what the
    // kernel decides.
    &[
        "cpuidle",
        "cpufreq",
        "qos",
        "pelt",
        "apst",
        "devfreq",
        "ufshcd",
        "blk_freq_boost",
        "hpb",
        "variant_names",
    ],
    // Helpers every layer above uses.
    &["error", "user_file", "output_file"],
    &["metrics"],
    // Models of hardware; the CPUs' model uses the storage types (a task's IO).
    &["storage", "pstates"],
    &["cpu"],
    // Event-stream parsers.
    &["trace"],
    &["workload"],
    &["world"],
    // Device and platform inputs apart from traces: presets, dumps, sysfs.
    &["input"],
    &["scenario"],
    &["report"],
    &["view"],
    // The seeds' claims and their verdicts on the built-in experiments' runs.
    &["experiments"],
    &["drivers"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The top-level modules `source` names as `crate::X` or in a `crate::{X, Y::Z}` group
/// (comments and the inline test module left out).
fn imported_modules(source: &str) -> BTreeSet<String> {
    // The inline test module: `#[cfg(test)]` over a `mod ... {` line, the file's last item.
    let test_module = source.match_indices("#[cfg(test)]\n").find(|(at, attr)| {
        let next = source[at + attr.len()..].lines().next().unwrap_or("");
        next.contains("mod ") && next.trim_end().ends_with('{')
    });
    let code: String = match test_module {
        Some((at, _)) => &source[..at],
        None => source,
    }
    .lines()
    .map(|line| line.split("//").next().unwrap_or(""))
    .collect::<Vec<_>>()
    .join("\n");
    let ident = |text: &str| -> String {
        text.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_' || c.is_ascii_digit())
            .collect()
    };
    let mut out = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            out.insert(ident(rest));
            continue;
        };
        // Each item of the group at its outer level: the name before its first `::`.
        let mut depth = 0;
        let mut item_start = true;
        for (i, c) in group.char_indices() {
            if item_start && !c.is_whitespace() {
                out.insert(ident(&group[i..]));
                item_start = false;
            }
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                _ => {}
            }
        }
    }
    out.remove("");
    out
}

fn is_test_file(path: &Path) -> bool {
    let name = path.file_stem().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests" || name.starts_with("tests_") || name.ends_with("_tests")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the source folder reads") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && !is_test_file(&path) {
            out.push(path);
        }
    }
}

/// Every import against the rule in the source under `src`: `(file, its module, the module it
/// imports)`, and the top-level modules the table does not place.
fn violations(src: &Path) -> (Vec<(String, String, String)>, BTreeSet<String>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    let mut unplaced = BTreeSet::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("under src");
        let first = relative.components().next().expect("a path");
        let module = first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(own) = layer_of(&module) else {
            unplaced.insert(module);
            continue;
        };
        let source = std::fs::read_to_string(&file).expect("a source file reads");
        for imported in imported_modules(&source) {
            if imported == module {
                continue;
            }
            match layer_of(&imported) {
                Some(l) if l > own => wrong.push((
                    relative.display().to_string(),
                    module.clone(),
                    imported.clone(),
                )),
                Some(_) => {}
                None => {
                    unplaced.insert(imported);
                }
            }
        }
    }
    (wrong, unplaced)
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (wrong, unplaced) = violations(&src);
    assert!(
        unplaced.is_empty(),
        "top-level modules missing from the layer table (place them in LAYERS and in \
         DESIGN.md): {unplaced:?}"
    );
    assert!(
        wrong.is_empty(),
        "imports from a higher layer (file, its module, the module it imports): {wrong:#?}"
    );
}

#[test]
fn the_check_finds_an_upward_import_and_ignores_comments_and_tests() {
    // A second method: a tree written here, with one upward import (a policy reading a
    // parser), one in a comment, one in a test module and one in a test file.
    let dir = std::env::temp_dir().join(format!("torpor-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("cpuidle")).unwrap();
    std::fs::write(
        dir.join("cpuidle/mod.rs"),
        "use crate::{time::Nanos, trace::ftrace};\n// crate::view is only named here\n\
         #[cfg(test)]\npub(crate) mod tests {\n    use crate::drivers::run::x;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("cpuidle/tests.rs"), "use crate::drivers::y;\n").unwrap();
    std::fs::write(
        dir.join("metrics.rs"),
        "use crate::{\n    sim::Ctx,\n    cpu::Z,\n};\n",
    )
    .unwrap();
    let (wrong, unplaced) = violations(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(unplaced.is_empty(), "{unplaced:?}");
    let found: Vec<(&str, &str)> = wrong
        .iter()
        .map(|(_, m, i)| (m.as_str(), i.as_str()))
        .collect();
    assert_eq!(found, vec![("cpuidle", "trace"), ("metrics", "cpu")]);
}
