//! Embeds every preset under `presets/` into the library, so an installed torpor needs no data
//! directory at run time and `torpor devices` lists exactly what was built in.

use std::env;
use std::fs;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../presets");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut entries = Vec::new();
    if let Ok(kinds) = fs::read_dir(&root) {
        for kind in kinds.flatten() {
            let kind_path = kind.path();
            if !kind_path.is_dir() {
                continue;
            }
            println!("cargo:rerun-if-changed={}", kind_path.display());
            for f in fs::read_dir(&kind_path)
                .expect("readable preset dir")
                .flatten()
            {
                let p = f.path();
                if p.extension().is_some_and(|e| e == "toml") {
                    let kind_name = kind.file_name().to_string_lossy().into_owned();
                    let id = p.file_stem().unwrap().to_string_lossy().into_owned();
                    entries.push((kind_name, id, p.canonicalize().unwrap()));
                }
            }
        }
    }
    entries.sort();
    let mut out = String::from("/// (kind, id, TOML text) of every built-in preset, sorted.\npub static PRESETS: &[(&str, &str, &str)] = &[\n");
    for (kind, id, path) in entries {
        out.push_str(&format!(
            "    ({kind:?}, {id:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    out.push_str("];\n");
    fs::write(
        Path::new(&env::var("OUT_DIR").unwrap()).join("presets.rs"),
        out,
    )
    .unwrap();
}
