//! Tandem as a Helix user meets it, black-box: the real `tandem lsp` over stdio, started and
//! answered as Helix does ([`stand_in`]: Helix itself cannot be installed here), with the mock
//! LLM as the model. An "explain" answer too long for Helix's one status row arrives as a
//! read-only markdown file under `$XDG_CACHE_HOME/tandem/answers` that Helix is asked to open,
//! with a one-line message saying where it is; the settings of editors/helix/languages.toml
//! hold after Helix sends them a second time; and that file adds Tandem without taking any of
//! Helix's default servers away.

mod support;

#[path = "helix/stand_in.rs"]
mod stand_in;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use stand_in::{languages_toml, Helix, Opens, Version};
use support::lsp::file_uri;
use tandem_tests::wire::Turn;

/// An explanation as a model writes one: a heading, paragraphs, a list.
const LONG: &str = "## What `main` does\n\n`main` reads `totl` into `x` and prints it.\n\n\
- `totl` is not defined anywhere in this file, so this does not compile yet;\n\
- `println!` formats `x` with its `Display` implementation.\n\n\
Nothing else happens: no input is read and nothing is returned.";

/// What a one-line message says about [`LONG`] saved at `path`.
fn pointer(path: &Path) -> String {
    format!(
        "Tandem: What `main` does — full answer in {}",
        path.display()
    )
}

fn range(a: (u32, u32), b: (u32, u32)) -> Value {
    json!({"start": {"line": a.0, "character": a.1}, "end": {"line": b.0, "character": b.1}})
}

/// Runs "Ask Tandem to explain `main`" with the cursor inside `main`; the run's session.
fn explain(helix: &mut Helix) -> anyhow::Result<String> {
    let result = helix.run_code_action(range((1, 4), (1, 4)), json!([]), "tandem.explain")?;
    let session = result["session"].as_str();
    Ok(session
        .unwrap_or_else(|| panic!("no session: {result}"))
        .to_string())
}

/// Where the first answer of `session` is saved.
fn answer_file(helix: &Helix, session: &str) -> PathBuf {
    helix
        .cache
        .join("tandem/answers")
        .join(format!("{session}-1.md"))
}

#[test]
fn a_long_explain_answer_opens_in_helix_as_a_read_only_markdown_file() -> anyhow::Result<()> {
    // 25.07.1 does not declare window/showDocument but handles it; master declares it.
    for version in Version::ALL {
        let mut helix = Helix::start(version, Opens::Success(true))?;
        helix.sandbox.answer(&Turn::text(LONG));
        let session = explain(&mut helix)?;
        let shown = helix.message()?;
        let file = answer_file(&helix, &session);
        assert_eq!(
            helix.received("window/showDocument"),
            [json!({"uri": file_uri(&file), "external": false, "takeFocus": false})],
            "{version:?}"
        );
        assert_eq!(std::fs::read_to_string(&file)?, LONG, "{version:?}");
        assert!(std::fs::metadata(&file)?.permissions().readonly());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file)?.permissions().mode() & 0o777;
            assert_eq!(mode, 0o400, "{version:?}");
        }
        // One line, for Helix's one status row.
        assert_eq!(
            shown.params,
            json!({"type": 3, "message": pointer(&file)}),
            "{version:?}"
        );
        assert_eq!(helix.received("window/showMessage").len(), 1);
        assert!(helix.received("workspace/applyEdit").is_empty());
        let request = &helix.sandbox.requests()[0];
        assert!(support::body_mentions(request, "Explain the code above"));
    }
    Ok(())
}

#[test]
fn when_helix_does_not_open_the_file_the_message_carries_the_whole_answer() -> anyhow::Result<()> {
    // `success: false` (a path Helix cannot open), or MethodNotFound (Helix before 24.03).
    for opens in [Opens::Success(false), Opens::MethodNotFound] {
        let mut helix = Helix::start(Version::Release, opens)?;
        helix.sandbox.answer(&Turn::text(LONG));
        let session = explain(&mut helix)?;
        let shown = helix.message()?;
        let file = answer_file(&helix, &session);
        assert_eq!(helix.received("window/showDocument").len(), 1, "{opens:?}");
        // The pointer first: a status row cut short still shows where the file is.
        let whole = format!("{}\n\n{LONG}", pointer(&file));
        assert_eq!(
            shown.params,
            json!({"type": 3, "message": whole}),
            "{opens:?}"
        );
        assert_eq!(std::fs::read_to_string(&file)?, LONG, "{opens:?}");
        assert_eq!(helix.received("window/showMessage").len(), 1);
    }
    Ok(())
}

#[test]
fn a_short_answer_stays_one_message_and_no_file() -> anyhow::Result<()> {
    let mut helix = Helix::start(Version::Master, Opens::Success(true))?;
    helix
        .sandbox
        .answer(&Turn::text("`main` prints `totl`, which is not defined."));
    explain(&mut helix)?;
    let shown = helix.message()?;
    assert_eq!(
        shown.params,
        json!({"type": 3, "message": "Tandem: `main` prints `totl`, which is not defined."})
    );
    assert!(helix.received("window/showDocument").is_empty());
    assert!(!helix.cache.join("tandem").exists());
    Ok(())
}

#[test]
fn the_helix_settings_hold_after_helix_sends_them_again() -> anyhow::Result<()> {
    // Helix sends the `config` table as initializationOptions and again, right after start, as
    // didChangeConfiguration: editMode "auto" and bashPermission "deny" must still apply.
    let mut helix = Helix::start(Version::Release, Opens::Success(true))?;
    let sandbox = &helix.sandbox;
    sandbox.answer(&Turn::tool_call(
        "call_1",
        "bash",
        json!({"command": "cargo check"}),
    ));
    sandbox.answer(&Turn::tool_call(
        "call_2",
        "edit",
        json!({"path": "main.rs", "edits": [{"oldText": "totl", "newText": "total"}]}),
    ));
    sandbox.answer(&Turn::text("Fixed the typo."));
    let totl = json!({"range": range((1, 12), (1, 16)), "severity": 1, "code": "E0425",
        "source": "rustc", "message": "cannot find value `totl` in this scope"});
    let range = range((1, 13), (1, 13));
    helix.run_code_action(range, json!([totl]), "tandem.fixDiagnostic")?;
    let shown = helix.message()?;
    assert_eq!(shown.params["message"], "Tandem: Fixed the typo.");
    assert_eq!(helix.text(), stand_in::MAIN_RS.replace("totl", "total"));
    assert_eq!(helix.received("workspace/applyEdit").len(), 1);
    assert!(helix.received("window/showMessageRequest").is_empty());
    let requests = helix.sandbox.requests();
    let denied = "bash is disabled (bashPermission: deny)";
    assert!(
        support::body_mentions(&requests[1], denied),
        "the model was not told bash is denied"
    );
    Ok(())
}

/// Helix's default servers for the languages the file has a block for: release 25.07.1's
/// languages.toml (master at 079a789e adds "zuban" to python and "rumdl" to markdown; each of
/// those blocks says so).
const HELIX_DEFAULTS: &[(&str, &[&str])] = &[
    ("rust", &["rust-analyzer"]),
    ("python", &["ty", "ruff", "jedi", "pylsp"]),
    ("javascript", &["typescript-language-server"]),
    ("jsx", &["typescript-language-server"]),
    ("typescript", &["typescript-language-server"]),
    ("tsx", &["typescript-language-server"]),
    ("go", &["gopls", "golangci-lint-lsp"]),
    ("c", &["clangd"]),
    ("cpp", &["clangd"]),
    ("java", &["jdtls"]),
    ("ruby", &["ruby-lsp", "solargraph"]),
    ("lua", &["lua-language-server"]),
    ("bash", &["bash-language-server"]),
    ("markdown", &["marksman", "markdown-oxide"]),
];

/// The commented-out `[[language]]` blocks of editors/helix/languages.toml, uncommented once
/// (as Helix's `C-c` does), parsed.
fn language_blocks() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../editors/helix/languages.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let blocks: Vec<String> = text
        .split("\n\n")
        .filter(|b| b.starts_with("# [[language]]"))
        .map(|b| {
            let lines = b.lines().map(|l| l.strip_prefix("# ").unwrap_or(l));
            lines.collect::<Vec<_>>().join("\n")
        })
        .collect();
    blocks
        .iter()
        .map(|b| toml::from_str::<Value>(b).unwrap_or_else(|e| panic!("{e}:\n{b}")))
        .map(|v| v["language"][0].clone())
        .collect()
}

#[test]
fn pasting_the_helix_file_defines_tandem_and_changes_no_language() {
    let config = languages_toml();
    let server = &config["language-server"]["tandem"];
    assert_eq!(server["command"], "tandem");
    assert_eq!(server["args"], json!(["lsp"]));
    // Under `tandem`, so Helix's didChangeConfiguration carries them (see the test above).
    let parsed =
        tandem_protocol::config::TandemConfig::from_initialization_options(&server["config"]);
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    let settings = &server["config"]["tandem"];
    assert_eq!(settings["editMode"], "auto");
    assert_eq!(settings["bashPermission"], "deny");
    assert!(config.get("language").is_none(), "{config}");
}

#[test]
fn each_language_block_keeps_helix_defaults_and_adds_tandem_last() {
    let blocks = language_blocks();
    let names: Vec<&str> = blocks.iter().filter_map(|l| l["name"].as_str()).collect();
    let expected: Vec<&str> = HELIX_DEFAULTS.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, expected);
    for (language, (name, defaults)) in blocks.iter().zip(HELIX_DEFAULTS) {
        let servers = language["language-servers"].as_array().expect(name);
        let (last, first) = servers.split_last().expect(name);
        let first: Vec<&str> = first.iter().filter_map(Value::as_str).collect();
        assert_eq!(&first, defaults, "{name}: Helix's own servers come first");
        assert_eq!(last["name"], "tandem", "{name}");
        assert_eq!(
            last["only-features"],
            json!(["code-action", "workspace-command"]),
            "{name}"
        );
    }
}
