use std::os::unix::fs::PermissionsExt;

use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

fn sources<'a>(root: &'a Path, cli: &'a [String], trusted: bool) -> Sources<'a> {
    Sources {
        cli,
        no_discovery: false,
        agent_dir: root.join("agent").leak(),
        cwd: root.join("project").leak(),
        trusted,
        user_settings: &[],
        project_settings: &[],
    }
}

#[test]
fn files_directories_and_manifests_are_found_in_load_order() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = std::fs::canonicalize(dir.path()).expect("root");
    write(&root.join("agent/extensions/b.ts"), "");
    write(&root.join("agent/extensions/a.js"), "");
    write(&root.join("agent/extensions/notes.md"), "");
    write(&root.join("agent/extensions/dir/index.ts"), "");
    write(
        &root.join("agent/extensions/pkg/package.json"),
        r#"{"pi": {"extensions": ["./src/main.ts"]}}"#,
    );
    write(&root.join("agent/extensions/pkg/src/main.ts"), "");
    write(&root.join("project/.pi/extensions/local.ts"), "");
    write(&root.join("project/cli.ts"), "");
    let cli = vec!["cli.ts".to_string()];
    let (found, problems) = discover(&sources(&root, &cli, true));
    assert!(problems.is_empty(), "{problems:?}");
    let rel: Vec<String> = found
        .iter()
        .map(|f| {
            f.path
                .strip_prefix(&root)
                .expect("under root")
                .display()
                .to_string()
        })
        .collect();
    assert_eq!(
        rel,
        [
            "project/cli.ts",
            "agent/extensions/a.js",
            "agent/extensions/b.ts",
            "agent/extensions/dir/index.ts",
            "agent/extensions/pkg/src/main.ts",
            "project/.pi/extensions/local.ts",
        ]
    );
    assert_eq!(found[0].scope, Scope::Cli);
    assert_eq!(found[5].scope, Scope::Project);
    assert!(found.iter().all(|f| f.runner == Runner::Node));
}

#[test]
fn an_untrusted_folders_extensions_are_not_loaded_and_no_discovery_keeps_only_cli_paths() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = std::fs::canonicalize(dir.path()).expect("root");
    write(&root.join("agent/extensions/user.ts"), "");
    write(&root.join("project/.pi/extensions/evil.ts"), "");
    let (found, _) = discover(&sources(&root, &[], false));
    assert_eq!(found.len(), 1);
    assert!(found[0].path.ends_with("agent/extensions/user.ts"));

    write(&root.join("project/mine.ts"), "");
    let cli = vec!["mine.ts".to_string()];
    let mut s = sources(&root, &cli, true);
    s.no_discovery = true;
    let (found, _) = discover(&s);
    assert_eq!(found.len(), 1);
    assert!(found[0].path.ends_with("project/mine.ts"));
}

#[test]
fn an_executable_is_its_own_host_and_a_plain_file_or_missing_path_is_reported() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = std::fs::canonicalize(dir.path()).expect("root");
    let exe = root.join("project/ext.py");
    write(&exe, "#!/usr/bin/env python3\n");
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    write(&root.join("project/data.txt"), "");
    let cli = vec!["ext.py".into(), "data.txt".into(), "missing.ts".into()];
    let (found, problems) = discover(&sources(&root, &cli, true));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].runner, Runner::Executable);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("data.txt") && problems[0].contains("neither"));
    assert!(problems[1].contains("missing.ts"));
}

#[test]
fn package_extensions_load_after_their_scope_and_the_projects_only_when_trusted() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = std::fs::canonicalize(dir.path()).expect("root");
    write(&root.join("agent/extensions/user.ts"), "");
    write(&root.join("project/cli.ts"), "");
    write(&root.join("pkgs/cli.ts"), "");
    write(&root.join("pkgs/project.ts"), "");
    write(&root.join("pkgs/user.ts"), "");
    let packages = [
        (root.join("pkgs/project.ts"), Scope::Project),
        (root.join("pkgs/user.ts"), Scope::User),
        (root.join("pkgs/cli.ts"), Scope::Cli),
    ];
    let cli = vec!["cli.ts".to_string()];
    let names = |found: &[Found]| -> Vec<String> {
        found
            .iter()
            .map(|f| {
                f.path
                    .strip_prefix(&root)
                    .expect("under root")
                    .display()
                    .to_string()
            })
            .collect()
    };
    let (found, problems) = discover_with(&sources(&root, &cli, true), &packages);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        names(&found),
        [
            "project/cli.ts",
            "pkgs/cli.ts",
            "agent/extensions/user.ts",
            "pkgs/project.ts",
            "pkgs/user.ts"
        ]
    );
    let (found, _) = discover_with(&sources(&root, &cli, false), &packages);
    assert!(!names(&found).contains(&"pkgs/project.ts".to_string()));
    let mut s = sources(&root, &cli, true);
    s.no_discovery = true;
    let (found, _) = discover_with(&s, &packages);
    assert_eq!(names(&found), ["project/cli.ts", "pkgs/cli.ts"]);
}
