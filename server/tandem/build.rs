//! Embeds the Node extension host (`extension-host/src/*.mjs`, see `src/extensions/node.rs`),
//! and links the release binary with its hot code together.
//!
//! A one-turn run executes about 1.5 MB of the binary's 20 MB of code, but spread over most of
//! it; the kernel maps file pages 64 KiB at a time around each fault ("fault-around"), so the
//! scattered code made 11 MiB of the text resident. `hot-code.order` lists the functions a
//! one-turn print run, a JSON run and a language-server session execute, in the order they
//! first run (made by `scripts/order-hot-code`); lld places them first, side by side, so the
//! same run touches a few windows instead of most of them. A name that no longer exists is
//! ignored (`--no-warn-symbol-ordering`): the file goes stale gracefully, never breaks a build.
//!
//! Only where the linker is known to be lld: Rust ≥ 1.90 on x86_64-unknown-linux-gnu, with no
//! linker of the user's own configured (GNU ld has no such option). Elsewhere nothing changes.

use std::path::Path;

fn main() {
    embed_extension_host();
    println!("cargo:rerun-if-changed=hot-code.order");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    println!("cargo:rerun-if-env-changed=TANDEM_NO_CODE_ORDER");
    println!("cargo:rerun-if-env-changed=TANDEM_LINK_MAP");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let release = var("PROFILE") == "release";
    let target = var("TARGET") == "x86_64-unknown-linux-gnu";
    let own_linker = !var("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_empty()
        || var("CARGO_ENCODED_RUSTFLAGS").contains("link")
        || !var("TANDEM_NO_CODE_ORDER").is_empty();
    if !release || !target || own_linker || !rustc_links_with_lld() {
        return;
    }
    // `scripts/order-hot-code` asks for the linker's map (every function's address in this
    // very binary, which is stripped) to name the code a run executed.
    let map = var("TANDEM_LINK_MAP");
    if !map.is_empty() {
        println!("cargo:rustc-link-arg-bins=-Wl,-Map={map}");
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("hot-code.order");
    if order.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether this rustc links x86_64 Linux binaries with its own lld by default (1.90 and later).
fn rustc_links_with_lld() -> bool {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = std::process::Command::new(rustc).arg("-vV").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.lines().find_map(|l| l.strip_prefix("release: ")) else {
        return false;
    };
    let mut parts = version
        .split(['.', '-'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (1, 90)
}

/// Writes `$OUT_DIR/extension_host.rs`: every file of `extension-host/src/` as `(name, text)`
/// (`include_str!`, so a changed file rebuilds), and a hash of them all, which names the cache
/// directory the files are written to at run time.
fn embed_extension_host() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let dir = Path::new(&manifest).join("../../extension-host/src");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<(String, std::path::PathBuf)> = std::fs::read_dir(&dir)
        .map(|read| {
            read.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "mjs"))
                .filter_map(|p| Some((p.file_name()?.to_str()?.to_string(), p)))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    // FNV-1a over names and contents: stable across builds and platforms.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut code = String::from("pub const FILES: &[(&str, &str)] = &[\n");
    for (name, path) in &files {
        let text = std::fs::read(path).unwrap_or_default();
        for byte in name.bytes().chain([0]).chain(text.iter().copied()) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        code.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            path.canonicalize().unwrap_or_else(|_| path.clone())
        ));
    }
    code.push_str("];\n");
    code.push_str(&format!("pub const HASH: &str = \"{hash:016x}\";\n"));
    let out = Path::new(&std::env::var("OUT_DIR").unwrap_or_default()).join("extension_host.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=could not write {}: {e}", out.display());
    }
}
