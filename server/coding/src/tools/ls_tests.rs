//! Tests of the `ls` tool: pi's order, suffixes, notices and errors, symlinks, permissions.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, ToolError, ToolInvocation, ToolOutput, ToolUpdates};
use tandem_ai::UserBlock;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use super::{collation_key, LsTool};
use crate::env::ToolEnv;
use crate::workspace::{PermissionDecision, PermissionRequest, ScriptedWorkspace};

struct Fixture {
    _dir: TempDir,
    root: PathBuf,
    workspace: Arc<ScriptedWorkspace>,
    tool: LsTool,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical root");
    let workspace = Arc::new(ScriptedWorkspace::new(&root));
    let env = Arc::new(ToolEnv::new(workspace.clone(), &root));
    Fixture {
        _dir: dir,
        root,
        workspace,
        tool: LsTool::new(env),
    }
}

impl Fixture {
    fn files(&self, names: &[&str]) {
        for name in names {
            std::fs::write(self.root.join(name), "x").expect("write fixture");
        }
    }

    fn dirs(&self, names: &[&str]) {
        for name in names {
            std::fs::create_dir_all(self.root.join(name)).expect("mkdir");
        }
    }

    async fn call(&self, args: Value) -> Result<ToolOutput, ToolError> {
        self.tool
            .execute(ToolInvocation {
                call_id: "call-1".into(),
                args,
                cancel: CancellationToken::new(),
                updates: ToolUpdates::discard(),
            })
            .await
    }

    async fn text(&self, args: Value) -> String {
        text_of(&self.call(args).await.expect("ls succeeds"))
    }
}

fn text_of(out: &ToolOutput) -> String {
    match out.content.as_slice() {
        [UserBlock::Text(t)] => t.text.clone(),
        other => panic!("expected one text block, got {other:?}"),
    }
}

#[tokio::test]
async fn lists_dotfiles_and_marks_directories() {
    let f = fixture();
    f.files(&[".hidden-file", "b.txt", "A.txt"]);
    f.dirs(&[".hidden-dir", "c", "c/inner"]);
    let out = f.call(json!({})).await.expect("ls");
    assert_eq!(
        text_of(&out),
        ".hidden-dir/\n.hidden-file\nA.txt\nb.txt\nc/"
    );
    assert_eq!(out.details, None);
    assert_eq!(f.text(json!({"path": "@c"})).await, "inner/");
    assert_eq!(
        f.text(json!({"path": ""})).await,
        f.text(json!({"path": "."})).await
    );
}

#[tokio::test]
async fn an_empty_directory_says_so() {
    let f = fixture();
    f.dirs(&["empty"]);
    let out = f.call(json!({"path": "empty"})).await.expect("ls");
    assert_eq!(text_of(&out), "(empty directory)");
    assert_eq!(out.details, None);
}

#[tokio::test]
async fn the_entry_limit_has_pi_notice_and_details() {
    let f = fixture();
    f.files(&["a", "b", "c", "d", "e"]);
    let out = f.call(json!({"limit": 2})).await.expect("ls");
    assert_eq!(
        text_of(&out),
        "a\nb\n\n[2 entries limit reached. Use limit=4 for more]"
    );
    assert_eq!(out.details, Some(json!({"entryLimitReached": 2})));
    let out = f.call(json!({"limit": 5})).await.expect("ls");
    assert_eq!(text_of(&out), "a\nb\nc\nd\ne");
    assert_eq!(out.details, None);
    // pi would answer "(empty directory)" for limit 0; one entry is more useful.
    assert_eq!(
        f.text(json!({"limit": 0})).await,
        "a\n\n[1 entries limit reached. Use limit=2 for more]"
    );
}

#[tokio::test]
async fn the_default_limit_is_500() {
    let f = fixture();
    let names: Vec<String> = (0..501).map(|i| format!("f{i:03}")).collect();
    f.files(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let got = f.text(json!({})).await;
    assert!(
        got.ends_with("f499\n\n[500 entries limit reached. Use limit=1000 for more]"),
        "{}",
        &got[got.len() - 80..]
    );
    assert!(!got.contains("f500"));
}

#[tokio::test]
async fn long_listings_stop_at_50kb() {
    let f = fixture();
    let names: Vec<String> = (0..250)
        .map(|i| format!("{i:03}{}", "n".repeat(237)))
        .collect();
    f.files(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let all = names.join("\n");
    let kept = crate::tools::truncate::truncate_head(&all, usize::MAX, 51200);
    let out = f.call(json!({})).await.expect("ls");
    assert_eq!(
        text_of(&out),
        format!("{}\n\n[50.0KB limit reached]", kept.content)
    );
    let details = out.details.expect("details");
    assert_eq!(
        details["truncation"]["maxLines"],
        json!(9_007_199_254_740_991u64)
    );
    assert_eq!(details["truncation"]["truncatedBy"], json!("bytes"));
    assert_eq!(
        details["truncation"]["outputLines"],
        json!(kept.output_lines)
    );
    assert!(details.get("entryLimitReached").is_none());

    let out = f.call(json!({"limit": 230})).await.expect("ls");
    assert!(text_of(&out).ends_with(
        "\n\n[230 entries limit reached. Use limit=460 for more. 50.0KB limit reached]"
    ));
    let keys: Vec<&String> = out
        .details
        .as_ref()
        .expect("details")
        .as_object()
        .expect("object")
        .keys()
        .collect();
    assert_eq!(keys, ["entryLimitReached", "truncation"]);
}

#[tokio::test]
async fn missing_paths_and_files_get_pi_errors() {
    let f = fixture();
    f.files(&["file.txt"]);
    assert_eq!(
        f.call(json!({"path": "nope"})).await,
        Err(ToolError::new(format!(
            "Path not found: {}",
            f.root.join("nope").display()
        )))
    );
    assert_eq!(
        f.call(json!({"path": "file.txt"})).await,
        Err(ToolError::new(format!(
            "Not a directory: {}",
            f.root.join("file.txt").display()
        )))
    );
}

#[tokio::test]
async fn symlinks_show_what_they_point_to_and_dangling_ones_are_left_out() {
    let f = fixture();
    f.files(&["target.txt"]);
    f.dirs(&["target-dir"]);
    let link = |to: &str, name: &str| {
        std::os::unix::fs::symlink(f.root.join(to), f.root.join(name)).expect("symlink")
    };
    link("target-dir", "link-dir");
    link("target.txt", "link-file");
    link("missing", "link-dangling");
    assert_eq!(
        f.text(json!({})).await,
        "link-dir/\nlink-file\ntarget-dir/\ntarget.txt"
    );
}

#[tokio::test]
async fn directories_outside_the_workspace_need_permission() {
    let f = fixture();
    let outside = tempfile::tempdir().expect("temp dir");
    let real = std::fs::canonicalize(outside.path()).expect("canonical");
    std::fs::write(real.join("x"), "x").expect("write");
    let arg = json!({"path": real.to_string_lossy()});
    assert_eq!(f.text(arg.clone()).await, "x");
    assert_eq!(
        f.workspace.permission_requests(),
        vec![PermissionRequest::OutsideWorkspace {
            path: real.clone(),
            write: false
        }]
    );
    f.workspace
        .answer_permissions([PermissionDecision::Reject { reason: None }]);
    assert_eq!(
        f.call(arg).await,
        Err(ToolError::new(format!(
            "Access to {} was denied: it is outside the workspace",
            real.display()
        )))
    );
}

/// `names` ordered as the tool orders them (ties in byte order, as `readdir` gives them to pi).
fn ordered(names: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    names.sort_by_cached_key(|n| (collation_key(n), n.as_bytes().to_vec()));
    names
}

#[test]
#[rustfmt::skip]
fn order_matches_javascript_locale_compare() {
    // Expected orders printed by Node 20 (ICU 78) for names in readdir's byte order:
    // names.sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())).
    let names = [
        "README.md", "readme.txt", "Cargo.toml", "Cargo.lock", ".gitignore", ".github", "_build",
        "-flag", "build.rs", "build-script", "build_script", "build.sh", "src", "Src2",
        "10-intro.md", "9-setup.md", "1.txt", "a b.txt", "ab.txt", "a-b.txt", "a_b.txt", "a.b.txt",
        "éclair.txt", "eclair.txt", "Ecole", "zeta", "Ærø", "aero", "straße", "strasse", "strasze",
        "~backup", "$HOME", "#notes", "node_modules", "Makefile", "makefile", "@types",
    ];
    let node = [
        "_build", "-flag", ".github", ".gitignore", "@types", "#notes", "~backup", "$HOME", "1.txt",
        "10-intro.md", "9-setup.md", "a b.txt", "a_b.txt", "a-b.txt", "a.b.txt", "ab.txt", "aero",
        "Ærø", "build_script", "build-script", "build.rs", "build.sh", "Cargo.lock", "Cargo.toml",
        "eclair.txt", "éclair.txt", "Ecole", "Makefile", "makefile", "node_modules", "README.md",
        "readme.txt", "src", "Src2", "strasse", "straße", "strasze", "zeta",
    ];
    assert_eq!(ordered(&names), node);
    let more = [
        "ø", "o", "p", "oz", "đ", "d", "e", "ł", "l", "m", "t", "u", "ð", "ı", "i", "j", "0", "a",
        "_", "$", "ǆ", "ﬁ", "fi", "fj", "ﬀ", "Å", "å", "b", "ä", "aa", "az", "ñ", "n", "a\tb",
        "a b", "١", "2",
    ];
    let node = [
        "_", "$", "0", "١", "2", "a", "Å", "å", "ä", "a\tb", "a b", "aa", "az", "b", "d", "đ", "ð",
        "ǆ", "e", "ﬀ", "fi", "ﬁ", "fj", "i", "ı", "j", "l", "ł", "m", "n", "ñ", "o", "ø", "oz", "p",
        "t", "u",
    ];
    assert_eq!(ordered(&more), node);
    let accents = [
        "ø", "ö", "ó", "ō", "õ", "ő", "ǒ", "ô", "ŏ", "ò", "ȯ", "ǫ", "ọ", "ð", "đ", "ď", "ḑ", "ḍ",
        "ł", "ľ", "ļ", "ç", "ć", "ċ", "č", "ĉ", "ß", "ss", "æ", "ae", "ǽ", "ı", "i", "í", "ï", "ī",
    ];
    let node = [
        "ae", "æ", "ǽ", "ć", "ĉ", "č", "ċ", "ç", "ď", "ḑ", "đ", "ḍ", "ð", "i", "í", "ï", "ī", "ı",
        "ľ", "ļ", "ł", "ó", "ò", "ŏ", "ô", "ǒ", "ö", "ő", "õ", "ȯ", "ø", "ǫ", "ō", "ọ", "ss", "ß",
    ];
    assert_eq!(ordered(&accents), node);
    let symbols = [
        "it’s.txt", "it's.txt", "its.txt", "“quoted”", "\"plain\"", "notes…", "notes...",
        "notes.md", "™mark", "tm", "Tk", "😀.png", "#tag", "€uro", "$dollar", "１２.txt", "12.txt",
        "Ωmega", "жук", "中文", "−minus", "–dash", "—em", "a·b", "a•b", "©2024", "(1)", "[draft]",
        "{x}",
    ];
    let node = [
        "–dash", "—em", "\"plain\"", "“quoted”", "(1)", "[draft]", "{x}", "#tag", "©2024", "−minus",
        "😀.png", "$dollar", "€uro", "12.txt", "１２.txt", "a·b", "a•b", "it's.txt", "it’s.txt",
        "its.txt", "notes...", "notes…", "notes.md", "Tk", "tm", "™mark", "Ωmega", "жук", "中文",
    ];
    assert_eq!(ordered(&symbols), node);
}

#[tokio::test]
async fn unsaved_new_documents_show_as_entries() {
    let f = fixture();
    f.files(&["b.txt"]);
    f.dirs(&["src"]);
    f.workspace.open_buffer(f.root.join("a.txt"), "unsaved");
    f.workspace
        .open_buffer(f.root.join("b.txt"), "open and on disk: listed once");
    f.workspace.open_buffer(
        f.root.join("docs/guide.md"),
        "its folder does not exist yet",
    );
    f.workspace
        .open_buffer(f.root.join("src/new.rs"), "inside src");
    assert_eq!(f.text(json!({})).await, "a.txt\nb.txt\ndocs/\nsrc/");
    assert_eq!(f.text(json!({"path": "src"})).await, "new.rs");
}

#[tokio::test]
async fn a_folder_only_unsaved_documents_hold_can_be_listed() {
    let f = fixture();
    f.workspace.open_buffer(
        f.root.join("docs/guide.md"),
        "its folder does not exist yet",
    );
    f.workspace
        .open_buffer(f.root.join("docs/api/index.md"), "deeper");
    assert_eq!(f.text(json!({"path": "docs"})).await, "api/\nguide.md");
    let err = f
        .call(json!({"path": "docs/guide.md"}))
        .await
        .expect_err("a document is not a folder");
    assert!(err.to_string().contains("Path not found"), "{err}");
}
