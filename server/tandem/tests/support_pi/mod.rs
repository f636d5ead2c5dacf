//! Helpers for running the real pi and the `tandem` binary side by side against one mock LLM.
//!
//! Each [`Sandbox`] is a fresh temporary world: a working directory holding `hello.txt`, an
//! agent directory (`PI_CODING_AGENT_DIR`) whose `models.json` defines the custom provider
//! `mock` (OpenAI chat completions at the mock's `/v1`), and an empty `HOME`, so neither program
//! sees the developer's own configuration, sessions or keys.
//!
//! pi is the pinned npm package installed by `scripts/install-pi` into `target/pi`. When it is
//! missing the tests fail with a message saying so: an interoperability test that silently
//! passes without the other program would prove nothing.

pub mod calls;
pub mod pi_rpc;
pub mod sse;
pub mod transcript;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use sse::Answer;
use tandem_tests::mock_llm::MockLlm;

/// The pi version the interoperability tests are written against.
pub const PI_VERSION: &str = "0.73.1";
/// The model both programs are told to use.
pub const MODEL: &str = "mock/mock-model";
/// The reference task: read `hello.txt`, edit it, answer.
pub const TASK: &str = "change world to there in hello.txt";
/// A task for a reasoning model: think, read `hello.txt`, think, answer.
pub const THINKING_TASK: &str = "what does hello.txt say?";
/// What `hello.txt` holds before the task.
pub const HELLO: &str = "hello world\nsecond line\n";

/// The workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// The installed pi executable; panics with instructions when it is absent or the wrong version.
pub fn pi_bin() -> PathBuf {
    let root = workspace_root();
    let bin = root.join("target/pi/node_modules/.bin/pi");
    let manifest = root.join("target/pi/node_modules/@mariozechner/pi-coding-agent/package.json");
    let version = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| v["version"].as_str().map(str::to_string));
    match version {
        Some(v) if v == PI_VERSION && bin.exists() => bin,
        Some(v) => panic!(
            "target/pi holds pi {v}, but these tests need pi {PI_VERSION}: run scripts/install-pi"
        ),
        None => panic!(
            "pi {PI_VERSION} is not installed at {}: run scripts/install-pi (needs node and npm) \
             before `cargo test -p tandem --test pi_interop`",
            bin.display()
        ),
    }
}

/// pi 1.6's launcher, installed by `scripts/install-pi16`; panics with instructions when it is
/// absent.
pub fn pi16_bin() -> PathBuf {
    let bin = workspace_root().join("target/pi16/bin/pi");
    assert!(
        bin.is_file(),
        "pi 1.6 is not installed at {}: run scripts/install-pi16",
        bin.display()
    );
    bin
}

/// Which program runs a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// The real pi 0.73.1 (Node.js).
    Pi,
    /// The real pi 1.6 (on its own Node 24).
    Pi16,
    /// The `tandem` binary built by this crate.
    Tandem,
}

/// A temporary cwd, agent dir and home, wired to one mock LLM.
pub struct Sandbox {
    _root: tempfile::TempDir,
    /// The working directory, canonicalized (both programs name session folders after it).
    pub cwd: PathBuf,
    /// `PI_CODING_AGENT_DIR`.
    pub agent_dir: PathBuf,
    /// `HOME`.
    pub home: PathBuf,
}

impl Sandbox {
    /// Creates the directories, `hello.txt` and a `models.json` pointing at `mock`.
    pub fn new(mock: &MockLlm) -> Sandbox {
        Sandbox::with_model(mock, serde_json::json!({ "id": "mock-model" }))
    }

    /// Like [`Sandbox::new`], with `model` as the provider's one model definition.
    pub fn with_model(mock: &MockLlm, model: serde_json::Value) -> Sandbox {
        let root = tempfile::tempdir().expect("temp dir");
        let base = std::fs::canonicalize(root.path()).expect("canonical temp dir");
        let (cwd, agent_dir, home) = (base.join("cwd"), base.join("agent"), base.join("home"));
        for dir in [&cwd, &agent_dir, &home] {
            std::fs::create_dir_all(dir).expect("create sandbox dir");
        }
        std::fs::write(cwd.join("hello.txt"), HELLO).expect("write hello.txt");
        let models = serde_json::json!({
            "providers": {
                "mock": {
                    "baseUrl": format!("{}/v1", mock.base_url()),
                    "api": "openai-completions",
                    "apiKey": "test-key",
                    "models": [model]
                }
            }
        });
        std::fs::write(
            agent_dir.join("models.json"),
            serde_json::to_vec_pretty(&models).expect("models.json"),
        )
        .expect("write models.json");
        Sandbox {
            _root: root,
            cwd,
            agent_dir,
            home,
        }
    }

    /// Runs `agent` with `args` in the sandbox (stdin null, a clean environment) and waits.
    pub async fn run(&self, agent: Agent, args: &[&str]) -> Output {
        let mut cmd = self.command(agent, args);
        cmd.output()
            .await
            .unwrap_or_else(|e| panic!("cannot run {agent:?}: {e}"))
    }

    /// The command that runs `agent` with `args` in the sandbox: a clean environment, stdin
    /// null, killed when dropped.
    pub fn command(&self, agent: Agent, args: &[&str]) -> tokio::process::Command {
        let program = match agent {
            Agent::Pi => pi_bin(),
            Agent::Pi16 => pi16_bin(),
            Agent::Tandem => PathBuf::from(env!("CARGO_BIN_EXE_tandem")),
        };
        let mut cmd = tokio::process::Command::new(&program);
        cmd.args(args)
            .current_dir(&self.cwd)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("PI_CODING_AGENT_DIR", &self.agent_dir)
            // No update checks, package installs or telemetry: the tests are offline.
            .env("PI_OFFLINE", "1")
            .env("PI_TELEMETRY", "0")
            .stdin(Stdio::null())
            .kill_on_drop(true);
        cmd
    }

    /// Like [`Sandbox::run`], asserting exit status 0 and returning stdout.
    pub async fn run_ok(&self, agent: Agent, args: &[&str]) -> String {
        let out = self.run(agent, args).await;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "{agent:?} {args:?} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
            out.status
        );
        stdout
    }

    /// Every session file under the agent dir, sorted.
    pub fn session_files(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        let sessions = self.agent_dir.join("sessions");
        for dir in std::fs::read_dir(&sessions).into_iter().flatten().flatten() {
            for file in std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if file.path().extension().is_some_and(|e| e == "jsonl") {
                    files.push(file.path());
                }
            }
        }
        files.sort();
        files
    }

    /// The single session file; panics when there is none or more than one.
    pub fn only_session_file(&self) -> PathBuf {
        let files = self.session_files();
        assert_eq!(
            files.len(),
            1,
            "expected one session file under {}, found {files:?}",
            self.agent_dir.join("sessions").display()
        );
        files.into_iter().next().expect("one file")
    }
}

/// Queues the reference task's three answers: read tool call, edit tool call, final text.
pub fn enqueue_reference_task(mock: &MockLlm) {
    let read = serde_json::json!({ "path": "hello.txt" });
    let edit = serde_json::json!({
        "path": "hello.txt",
        "edits": [{ "oldText": "hello world", "newText": "hello there" }]
    });
    mock.enqueue(
        Answer::new("chatcmpl-task-1")
            .text("Let me read the file.")
            .tool_call("call_read_1", "read", &read)
            .response(),
    );
    mock.enqueue(
        Answer::new("chatcmpl-task-2")
            .tool_call("call_edit_2", "edit", &edit)
            .response(),
    );
    mock.enqueue(sse::text(
        "chatcmpl-task-3",
        "Done: I changed world to there.",
    ));
}

/// Runs the reference task with `agent` in a fresh sandbox (three answers queued on `mock`)
/// and returns the sandbox and the session file it wrote.
pub async fn run_reference_task(mock: &MockLlm, agent: Agent) -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::new(mock);
    enqueue_reference_task(mock);
    let stdout = sandbox.run_ok(agent, &["-p", "--model", MODEL, TASK]).await;
    assert_eq!(stdout.trim_end(), "Done: I changed world to there.");
    let edited = std::fs::read_to_string(sandbox.cwd.join("hello.txt")).expect("hello.txt");
    assert_eq!(
        edited, "hello there\nsecond line\n",
        "{agent:?} did not edit"
    );
    let file = sandbox.only_session_file();
    (sandbox, file)
}

/// Runs [`THINKING_TASK`] with `agent` at thinking level `high`, in a fresh sandbox whose model
/// reasons, and returns the sandbox and the session file it wrote.
pub async fn run_thinking_task(mock: &MockLlm, agent: Agent) -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::with_model(
        mock,
        serde_json::json!({ "id": "mock-model", "reasoning": true }),
    );
    mock.enqueue(
        Answer::new("chatcmpl-think-1")
            .reasoning("I should read it.")
            .tool_call(
                "call_think_1",
                "read",
                &serde_json::json!({ "path": "hello.txt" }),
            )
            .response(),
    );
    mock.enqueue(
        Answer::new("chatcmpl-think-2")
            .reasoning("Now answer.")
            .text("It says hello world.")
            .response(),
    );
    let args = ["-p", "--model", MODEL, "--thinking", "high", THINKING_TASK];
    let stdout = sandbox.run_ok(agent, &args).await;
    assert_eq!(stdout.trim_end(), "It says hello world.");
    let file = sandbox.only_session_file();
    (sandbox, file)
}
