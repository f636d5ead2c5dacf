//! Which servers a session may start: built-ins found on PATH, settings over them, roots,
//! the client's capabilities, and trust.

use std::ffi::OsString;
use std::path::Path;

use serde_json::json;
use tandem_coding::intel::{Document, LanguageIntel};

use super::configured;
use crate::langserver::client::client_capabilities_for_tests;
use crate::langserver::spec::{root_for, ServerTable};
use crate::langserver::LanguageServers;

/// A PATH of one folder holding executables named `names`.
fn path_with(dir: &Path, names: &[&str]) -> OsString {
    for name in names {
        let file = dir.join(name);
        std::fs::write(&file, "#!/bin/sh\n").expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    dir.as_os_str().to_os_string()
}

fn names(table: &ServerTable) -> Vec<&str> {
    table.specs.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn built_in_servers_count_only_when_their_program_is_found() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = path_with(temp.path(), &["ruff", "pyright-langserver", "gopls"]);
    let table = ServerTable::new(None, &path);
    // pyright stands in for the missing basedpyright.
    assert_eq!(names(&table), ["pyright", "ruff", "gopls"]);
    assert_eq!(table.for_type("py"), [0, 1]);
    assert!(
        table
            .hint("ts")
            .contains("install typescript-language-server"),
        "{}",
        table.hint("ts")
    );
    assert!(
        table.hint("zig").contains("\"languageServers\""),
        "{}",
        table.hint("zig")
    );

    let path = path_with(temp.path(), &["basedpyright-langserver"]);
    let table = ServerTable::new(None, &path);
    assert_eq!(names(&table), ["basedpyright", "ruff", "gopls"]);
    assert_eq!(
        table.specs[0].command_line(),
        "basedpyright-langserver --stdio"
    );
}

#[test]
fn a_rustup_proxy_without_the_component_does_not_count() {
    let temp = tempfile::tempdir().expect("temp dir");
    let bin = temp.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    path_with(&bin, &["rustup"]);
    std::os::unix::fs::symlink(bin.join("rustup"), bin.join("rust-analyzer")).expect("symlink");
    // HOME/.rustup has no toolchain with rust-analyzer here (RUSTUP_HOME, when set, neither).
    let table = ServerTable::new(None, bin.as_os_str());
    let has = crate::langserver::spec::find_program("rust-analyzer", bin.as_os_str()).is_some();
    assert_eq!(names(&table).contains(&"rust-analyzer"), has);
    if std::env::var_os("RUSTUP_HOME").is_none() {
        let home = std::env::var_os("HOME").unwrap_or_default();
        let toolchains = Path::new(&home).join(".rustup/toolchains");
        let installed = std::fs::read_dir(toolchains)
            .map(|d| {
                d.flatten()
                    .any(|t| t.path().join("bin/rust-analyzer").is_file())
            })
            .unwrap_or(false);
        assert_eq!(has, installed);
    }
}

#[test]
fn settings_entries_add_replace_and_remove_servers_by_name() {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = path_with(temp.path(), &["ruff", "basedpyright-langserver", "gopls"]);
    let settings = configured(json!({
        "ruff": {"command": "/opt/ruff", "args": ["server", "--preview"]},
        "basedpyright": {"settings": {"basedpyright": {"analysis": {"typeCheckingMode": "strict"}}}},
        "typescript": {"command": "/opt/tsls"},
        "gopls": {"command": "gopls", "enabled": false},
        "zls": {"command": "zls", "fileTypes": [".ZIG"]},
        "broken": {"command": "x"},
    }));
    let table = ServerTable::new(Some(&settings), &path);
    assert_eq!(names(&table), ["basedpyright", "ruff", "typescript", "zls"]);
    let ruff = &table.specs[1];
    assert_eq!(ruff.command_line(), "/opt/ruff server --preview");
    assert_eq!(ruff.file_types, ["py", "pyi"]);
    assert!(ruff.program.is_none() && ruff.configured);
    let based = &table.specs[0];
    assert_eq!(based.command_line(), "basedpyright-langserver --stdio");
    assert!(based.settings.is_some() && based.program.is_some());
    // Another path to a built-in's program keeps its arguments when they are left out.
    assert_eq!(table.specs[2].command_line(), "/opt/tsls --stdio");
    assert_eq!(table.specs[3].file_types, ["zig"]);
    assert_eq!(table.specs[3].command_line(), "zls");
    assert_eq!(
        table.problems,
        ["languageServers.broken: \"fileTypes\" is missing: list the file extensions the server \
          handles (\"py\", \"ts\")"]
    );
}

#[test]
fn a_server_root_is_the_nearest_marked_folder_inside_the_workspace() {
    let temp = tempfile::tempdir().expect("temp dir");
    let ws = temp.path().join("ws");
    std::fs::create_dir_all(ws.join("pkg/src/deep")).expect("mkdir");
    std::fs::write(ws.join("pkg/pyproject.toml"), "").expect("write");
    std::fs::write(temp.path().join("pyproject.toml"), "").expect("write");
    let markers = vec!["pyproject.toml".to_string()];
    let root = |p: &str| root_for(&ws.join(p), &ws, &markers);
    assert_eq!(root("pkg/src/deep/a.py"), Some(ws.join("pkg")));
    // The marker above the workspace does not count.
    assert_eq!(root("b.py"), Some(ws.clone()));
    assert_eq!(root_for(&temp.path().join("c.py"), &ws, &markers), None);
}

#[test]
fn the_client_offers_utf16_positions_only_and_the_requests_it_makes() {
    let capabilities = client_capabilities_for_tests();
    assert_eq!(
        capabilities["general"]["positionEncodings"],
        json!(["utf-16"])
    );
    assert_eq!(
        capabilities["textDocument"]["publishDiagnostics"]["versionSupport"],
        json!(true)
    );
    assert_eq!(
        capabilities["textDocument"]["documentSymbol"]["hierarchicalDocumentSymbolSupport"],
        json!(true)
    );
    // Pull diagnostics are not announced: servers push.
    assert!(capabilities["textDocument"].get("diagnostic").is_none());
    assert_eq!(capabilities["workspace"]["configuration"], json!(true));
}

#[tokio::test]
async fn an_untrusted_folder_gets_no_server_and_a_note_and_a_planted_entry_never_runs() {
    let temp = tempfile::tempdir().expect("temp dir");
    let root = temp.path().canonicalize().expect("real path");
    let (agent, project) = (root.join("agent"), root.join("project"));
    std::fs::create_dir_all(project.join(".pi")).expect("mkdir");
    std::fs::create_dir_all(&agent).expect("mkdir");
    std::fs::write(
        agent.join("settings.json"),
        json!({"languageServers": {"mine": {"command": "true", "fileTypes": ["mine"]}}})
            .to_string(),
    )
    .expect("write");
    let marker = root.join("planted-server-ran");
    std::fs::write(
        project.join(".pi/settings.json"),
        json!({"languageServers": {"planted": {
            "command": "sh",
            "args": ["-c", format!("touch '{}'", marker.display())],
            "fileTypes": ["py"],
        }}})
        .to_string(),
    )
    .expect("write");
    std::fs::write(project.join("a.py"), "x = 1\n").expect("write");
    let document = Document {
        path: project.join("a.py"),
        text: "x = 1\n".to_string(),
    };

    let settings = tandem_coding::settings::load(&agent, &project, false);
    let own = LanguageServers::for_session(&settings, &project, false);
    assert!(own.servers.is_none());
    let note = own.problems.last().expect("a note");
    assert!(note.contains("mine") && !note.contains("planted"), "{note}");
    assert!(note.contains("is not trusted"), "{note}");
    assert!(!marker.exists());

    // Trusted, the project's entry is used: the control that the marker would show a start.
    let settings = tandem_coding::settings::load(&agent, &project, true);
    let own = LanguageServers::for_session(&settings, &project, true);
    let servers = own.servers.expect("servers");
    assert!(
        servers.names().contains(&"planted"),
        "{:?}",
        servers.names()
    );
    let _ = servers.diagnostics(Some(vec![document]), None).await;
    assert!(marker.exists());
}
