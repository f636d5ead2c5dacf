use super::*;

fn temp_root() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(tmp.path()).expect("canon");
    (tmp, root)
}

#[test]
fn at_prefix_tilde_dots_and_unicode_spaces() {
    let cwd = Path::new("/work/project");
    let roots = vec![PathBuf::from("/work/project")];
    let r = resolve("@src/./lib/../main.rs", cwd, &roots).expect("resolves");
    assert_eq!(r.absolute, PathBuf::from("/work/project/src/main.rs"));
    assert!(r.inside);
    let r = resolve("../other/x.txt", cwd, &roots).expect("resolves");
    assert_eq!(r.absolute, PathBuf::from("/work/other/x.txt"));
    assert!(!r.inside);
    assert_eq!(expand("a\u{202F}b"), PathBuf::from("a b"));
    if let Some(home) = std::env::var_os("HOME") {
        assert_eq!(expand("~/x"), PathBuf::from(home).join("x"));
    }
}

#[test]
fn symlinks_that_escape_are_outside() {
    let (_root_tmp, root) = temp_root();
    let (_out_tmp, outside) = temp_root();
    std::os::unix::fs::symlink(&outside, root.join("link")).expect("symlink");
    let roots = vec![root.clone()];
    let r = resolve("link/secret.txt", &root, &roots).expect("resolves");
    assert!(!r.inside, "{r:?}");
    assert_eq!(r.real, outside.join("secret.txt"));
    let r = resolve("new/dir/file.txt", &root, &roots).expect("resolves");
    assert!(r.inside);
    assert_eq!(display(&r.absolute, &root), "new/dir/file.txt");
}

#[test]
fn a_dangling_symlink_is_followed_to_where_it_points() {
    let (_root_tmp, root) = temp_root();
    let (_out_tmp, outside) = temp_root();
    // The target does not exist yet: writing through the link would create it outside.
    std::os::unix::fs::symlink(outside.join("planted.txt"), root.join("innocent.txt"))
        .expect("symlink");
    let r = resolve("innocent.txt", &root, std::slice::from_ref(&root)).expect("resolves");
    assert_eq!(r.real, outside.join("planted.txt"));
    assert!(!r.inside, "{r:?}");
    // A dangling directory link, with the rest of the path below it.
    std::os::unix::fs::symlink(outside.join("nowhere/deeper"), root.join("dir")).expect("symlink");
    let r = resolve("dir/a/b.txt", &root, std::slice::from_ref(&root)).expect("resolves");
    assert_eq!(r.real, outside.join("nowhere/deeper/a/b.txt"));
    assert!(!r.inside);
    // A relative link inside the workspace stays inside.
    std::fs::create_dir(root.join("real")).expect("mkdir");
    std::os::unix::fs::symlink("real/new.txt", root.join("alias.txt")).expect("symlink");
    let r = resolve("alias.txt", &root, std::slice::from_ref(&root)).expect("resolves");
    assert_eq!(r.real, root.join("real/new.txt"));
    assert!(r.inside);
}

#[test]
fn dot_dot_in_a_link_target_is_resolved_physically() {
    let (_root_tmp, root) = temp_root();
    std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
    std::os::unix::fs::symlink("../../..", root.join("a/b/up")).expect("symlink");
    let r = resolve("a/b/up/x.txt", &root, std::slice::from_ref(&root)).expect("resolves");
    assert_eq!(r.real, root.parent().expect("parent").join("x.txt"));
    assert!(!r.inside);
}

#[test]
fn link_loops_are_an_error() {
    let (_root_tmp, root) = temp_root();
    std::os::unix::fs::symlink(root.join("b"), root.join("a")).expect("symlink");
    std::os::unix::fs::symlink(root.join("a"), root.join("b")).expect("symlink");
    let err = resolve("a/x", &root, std::slice::from_ref(&root)).unwrap_err();
    assert!(matches!(err, PathError::LinkLoop(_)), "{err}");
}

#[test]
fn nul_bytes_and_control_characters_are_refused() {
    let root = PathBuf::from("/w");
    let err = resolve("notes.txt\0.sh", &root, std::slice::from_ref(&root)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "The path \"notes.txt\\0.sh\" contains a NUL byte at character 10, which no file name \
         may contain; the path was not used. Give the file's real name."
    );
    for bad in ["a\nb", "x\u{1b}[31m", "tab\there", "del\u{7f}", "c1\u{85}"] {
        assert!(
            matches!(
                resolve(bad, &root, std::slice::from_ref(&root)),
                Err(PathError::InvalidCharacter { .. })
            ),
            "{bad:?}"
        );
    }
    assert_eq!(
        resolve("", &root, std::slice::from_ref(&root)),
        Err(PathError::Empty)
    );
    assert!(resolve("ünïcödé file.txt", &root, std::slice::from_ref(&root)).is_ok());
}

#[test]
fn protected_paths_name_their_risk() {
    let root = PathBuf::from("/w/project");
    let roots = std::slice::from_ref(&root);
    let why = |p: &str| protected_reason(&root.join(p), roots);
    assert!(why(".git/config")
        .expect("protected")
        .contains("core.fsmonitor"));
    assert!(why(".git/hooks/pre-commit").is_some());
    assert!(why(".GIT/config").is_some(), "case-insensitive");
    assert!(
        why("sub/module/.git").is_some(),
        "a .git file redirects git"
    );
    assert!(why(".pi/settings.json")
        .expect("protected")
        .contains("MCP servers"));
    assert!(why(".pi/mcp.json").is_some());
    assert!(why(".agents/skills/x/SKILL.md").is_some());
    assert!(why(".vscode/tasks.json").is_some());
    assert!(why(".tandem/anything").is_some());
    assert!(why("deep/dir/.envrc").is_some());
    assert!(why(".nvim.lua").is_some());
    // Configuration that makes the next build, install or shell run code (issue 29).
    for path in [
        ".cargo/config.toml",
        "mise.toml",
        ".mise.toml",
        ".yarnrc.yml",
        ".npmrc",
        "web/.npmrc",
        ".gemini/settings.json",
        ".github/workflows/ci.yml",
        ".GitHub/Workflows/release.yaml",
    ] {
        assert!(why(path).is_some(), "{path}");
    }
    assert_eq!(why(".github/ISSUE_TEMPLATE/bug.md"), None);
    assert_eq!(why("docs/workflows/ci.yml"), None);
    assert_eq!(why("src/main.rs"), None);
    assert_eq!(why("docs/git/config"), None);
    assert_eq!(why("pi/settings.json"), None);
    // A workspace that itself lives below a `.git` or `.pi` directory is not all protected.
    let nested = PathBuf::from("/home/u/.pi/agent/work");
    assert_eq!(
        protected_reason(&nested.join("notes.md"), std::slice::from_ref(&nested)),
        None
    );
}

#[test]
fn a_target_that_changed_after_approval_is_refused() {
    let (_root_tmp, root) = temp_root();
    let (_out_tmp, outside) = temp_root();
    std::fs::create_dir(root.join("sub")).expect("mkdir");
    let approved = real_path(&root.join("sub/file.txt")).expect("real");
    assert_eq!(verify_target(&root.join("sub/file.txt"), &approved), Ok(()));
    // The folder is swapped for a symlink while the user is asked.
    std::fs::remove_dir(root.join("sub")).expect("rmdir");
    std::os::unix::fs::symlink(&outside, root.join("sub")).expect("symlink");
    let err = verify_target(&root.join("sub/file.txt"), &approved).unwrap_err();
    assert!(
        err.contains("changed while the change was being confirmed"),
        "{err}"
    );
    assert!(err.contains(&outside.display().to_string()), "{err}");
}
