//! The client against real language servers (ruff, basedpyright, typescript-language-server,
//! installed by `scripts/install-language-servers`) and against servers that misbehave on
//! purpose; and the rules of the server table. The black-box tests through the binary are in
//! `tests/langservers.rs`.

mod faults;
mod python;
mod table;
mod typescript;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tandem_coding::intel::{Document, Pos};
use tandem_coding::settings::LanguageServerSettings;

use super::spec::ServerTable;
use super::{LanguageServers, Limits};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A copy of `fixtures/langservers/<name>` in a temp dir (its real path).
fn workspace(name: &str) -> (tempfile::TempDir, PathBuf) {
    let temp = tempfile::tempdir().expect("temp dir");
    let root = temp.path().canonicalize().expect("real path").join(name);
    copy_dir(&repo().join("fixtures/langservers").join(name), &root);
    (temp, root)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("fixture dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// `settings.json`'s `languageServers` as typed.
fn configured(json: Value) -> BTreeMap<String, Option<LanguageServerSettings>> {
    serde_json::from_value(json).expect("languageServers entries")
}

/// The servers for `root` with the built-ins (found with the installed servers first on
/// PATH) and `settings` over them.
fn servers(root: &Path, settings: Value, limits: Limits) -> Arc<LanguageServers> {
    let path = tandem_tests::langservers::search_path();
    let configured = configured(settings);
    let table = ServerTable::new(Some(&configured), &path);
    Arc::new(LanguageServers::new(
        root.to_path_buf(),
        table,
        path,
        limits,
    ))
}

/// The document at `path` with its text on disk.
fn document(path: &Path) -> Document {
    Document {
        path: path.to_path_buf(),
        text: std::fs::read_to_string(path).expect("read fixture file"),
    }
}

/// Where the `nth` (0-based) `needle` starts in `text`.
fn pos_of(text: &str, needle: &str, nth: usize) -> Pos {
    let offset = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle:?} #{nth} not in the text"))
        .0;
    let before = &text[..offset];
    let line = before.matches('\n').count() as u32;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    Pos {
        line,
        character: text[start..offset].encode_utf16().count() as u32,
    }
}
