//! What the black-box tests share: a sandbox for running the real `tandem` binary against the
//! mock LLM server (here), the binary as a child process with a hang guard (`process`),
//! `tandem lsp` on tandem-tests' LSP client (`lsp`), every front door against a sandbox
//! holding recognizable secrets (`front_doors`), and a program in a real terminal, a private
//! tmux server, for the interactive mode (`tmux`).
//!
//! Each [`Sandbox`] owns a temp directory that is the child's `HOME`, holds its agent directory
//! (`PI_CODING_AGENT_DIR`, with a models.json whose `mock` provider points at the sandbox's own
//! mock server) and its working directory. The mock runs on a small tokio runtime owned by the
//! sandbox, so tests stay synchronous: the child runs through `std::process::Command` while the
//! runtime's worker thread answers its requests.

// Every test binary compiles this whole module (`mod support;`) and uses its own part of it.
#![allow(dead_code)]

pub mod front_doors;
pub mod lsp;
pub mod mcp;
pub mod process;
pub mod tmux;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};
use tandem_tests::mock_llm::{MockLlm, MockResponse, RecordedRequest};
use tandem_tests::wire::{self, Turn, WireApi};

/// The model every sandbox defines, as `--model` takes it.
pub const MODEL: &str = "mock/mock-model";

/// A temp home, agent directory and project directory, plus a mock provider.
pub struct Sandbox {
    /// The wire API the `mock` provider speaks.
    pub api: WireApi,
    /// The mock server.
    pub mock: MockLlm,
    /// `HOME` of the child.
    pub home: PathBuf,
    /// `PI_CODING_AGENT_DIR` of the child.
    pub agent_dir: PathBuf,
    /// The child's working directory.
    pub cwd: PathBuf,
    // Dropped last: the mock's connections close before its runtime goes away.
    _temp: tempfile::TempDir,
    _runtime: tokio::runtime::Runtime,
}

/// What a run of the binary did.
#[derive(Debug)]
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Every stdout line parsed as JSON; panics naming the line that does not parse.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .enumerate()
            .map(|(n, line)| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("stdout line {} is not JSON ({e}): {line}", n + 1))
            })
            .collect()
    }

    /// The `type` of every JSON line.
    pub fn types(&self) -> Vec<String> {
        self.json_lines().iter().map(type_of).collect()
    }

    /// Panics with the whole output unless the run exited with `code`.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "exit code; stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// The text of a message's `content` (a string, or blocks whose `text`s are joined by
/// `separator`).
pub fn content_text(content: &Value, separator: &str) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(separator),
        _ => String::new(),
    }
}

/// A JSON value's `type` field, or `""`.
pub fn type_of(value: &Value) -> String {
    value["type"].as_str().unwrap_or_default().to_string()
}

impl Sandbox {
    /// A sandbox whose `mock` provider speaks `api` with key `test-key` and has one model,
    /// `mock-model`, with models.json defaults.
    pub fn new(api: WireApi) -> Sandbox {
        Sandbox::with_model(api, json!({"id": "mock-model"}))
    }

    /// A sandbox whose `mock` provider speaks OpenAI Chat Completions, with retries a few
    /// milliseconds apart.
    pub fn with_quick_retries() -> Sandbox {
        let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
        sandbox.write_settings(json!({"retry": {"baseDelayMs": 5, "maxRetries": 2}}));
        sandbox
    }

    /// Like [`Sandbox::new`] with `model` as the provider's one model entry.
    pub fn with_model(api: WireApi, model: Value) -> Sandbox {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("test runtime");
        let mock = runtime.block_on(MockLlm::start()).expect("mock server");
        let temp = tempfile::tempdir().expect("temp dir");
        let home = temp.path().canonicalize().expect("canonical temp dir");
        let agent_dir = home.join("agent");
        let cwd = home.join("project");
        std::fs::create_dir_all(&agent_dir).expect("agent dir");
        std::fs::create_dir_all(&cwd).expect("project dir");
        let sandbox = Sandbox {
            api,
            mock,
            home,
            agent_dir,
            cwd,
            _temp: temp,
            _runtime: runtime,
        };
        sandbox.write_models(json!({"providers": {"mock": {
            "baseUrl": api.base_url(&sandbox.mock.base_url()),
            "api": api.name(),
            "apiKey": "test-key",
            "models": [model],
        }}}));
        sandbox
    }

    /// Replaces models.json.
    pub fn write_models(&self, models: Value) {
        self.write_agent_file("models.json", &models.to_string());
    }

    /// Writes settings.json in the agent directory.
    pub fn write_settings(&self, settings: Value) {
        self.write_agent_file("settings.json", &settings.to_string());
    }

    /// Writes a file in the agent directory.
    pub fn write_agent_file(&self, name: &str, content: &str) {
        std::fs::write(self.agent_dir.join(name), content).expect("write agent file");
    }

    /// Writes a file in the working directory.
    pub fn write(&self, name: &str, content: &str) {
        std::fs::write(self.cwd.join(name), content).expect("write project file");
    }

    /// Reads a file of the working directory.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.cwd.join(name)).expect("read project file")
    }

    /// Queues one assistant turn in the sandbox's wire API.
    pub fn answer(&self, turn: &Turn) {
        self.mock.enqueue(wire::response(self.api, turn));
    }

    /// Queues a raw response.
    pub fn enqueue(&self, response: MockResponse) {
        self.mock.enqueue(response);
    }

    /// Requests the mock received.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.mock.requests()
    }

    /// The names of the tools the model was offered in the mock's `index`th request (OpenAI
    /// Chat Completions' shape; `usize::MAX`: the last request).
    pub fn offered_tools(&self, index: usize) -> Vec<String> {
        let requests = self.requests();
        let request = match index {
            usize::MAX => requests.last(),
            n => requests.get(n),
        };
        let body = request
            .expect("the model was asked")
            .json()
            .expect("a JSON request");
        body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Runs `tandem --model mock/mock-model <args>` with stdin closed.
    pub fn run(&self, args: &[&str]) -> Run {
        let mut all = vec!["--model", MODEL];
        all.extend_from_slice(args);
        self.run_raw(&all, None)
    }

    /// Runs `tandem <args>` exactly as given; `stdin` is piped in when given, else closed.
    pub fn run_raw(&self, args: &[&str], stdin: Option<&str>) -> Run {
        self.run_with_env(args, stdin, &[])
    }

    /// [`Sandbox::run_raw`] with these environment variables set too.
    pub fn run_with_env(&self, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tandem"));
        cmd.args(args)
            .current_dir(&self.cwd)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("PI_CODING_AGENT_DIR", &self.agent_dir)
            .envs(extension_node().map(|n| ("TANDEM_NODE", n)))
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let output = match stdin {
            None => cmd.stdin(Stdio::null()).output().expect("runs tandem"),
            Some(text) => with_stdin(cmd, text),
        };
        Run {
            code: output.status.code().expect("tandem exited normally"),
            stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
            stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
        }
    }

    /// `<agentDir>/sessions/--<cwd>--`, where the working directory's sessions go.
    pub fn session_dir(&self) -> PathBuf {
        let encoded = self
            .cwd
            .to_string_lossy()
            .trim_start_matches('/')
            .replace('/', "-");
        self.agent_dir
            .join("sessions")
            .join(format!("--{encoded}--"))
    }

    /// The session files of the working directory, sorted by name (= by creation time).
    pub fn session_files(&self) -> Vec<PathBuf> {
        let Ok(dir) = std::fs::read_dir(self.session_dir()) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = dir.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        files
    }

    /// The only session file; panics unless there is exactly one.
    pub fn only_session(&self) -> PathBuf {
        let files = self.session_files();
        assert_eq!(files.len(), 1, "session files: {files:?}");
        files[0].clone()
    }
}

fn with_stdin(mut cmd: Command, text: &str) -> Output {
    use std::io::Write;
    let mut child = cmd.stdin(Stdio::piped()).spawn().expect("spawns tandem");
    let mut pipe = child.stdin.take().expect("stdin pipe");
    pipe.write_all(text.as_bytes()).expect("writes stdin");
    drop(pipe);
    child.wait_with_output().expect("waits for tandem")
}

/// The Node extension hosts run on in tests (Node 24, from `scripts/install-pi16`; the
/// system's may be too old), when it is installed. Only `tandem` reads `TANDEM_NODE`.
pub fn extension_node() -> Option<PathBuf> {
    let node = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/pi16/bin/node");
    node.exists().then_some(node)
}

/// [`extension_node`], or a panic saying what to install.
pub fn node() -> PathBuf {
    extension_node().unwrap_or_else(|| {
        panic!("Node 24 is not installed in target/pi16/bin: run scripts/install-pi16")
    })
}

/// The path of pi 1.6's shipped example extension `name` (`scripts/install-pi16`).
pub fn pi_example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/pi16/package/examples/extensions")
        .join(name);
    assert!(
        path.exists(),
        "pi 1.6's example {} is missing: run scripts/install-pi16",
        path.display()
    );
    path.display().to_string()
}

/// Each line of a JSONL file, parsed.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read session file")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line ({e}): {l}")))
        .collect()
}

/// The entry types of a session file, with the role for message entries:
/// `["session", "model_change", "message:user", ...]`.
pub fn entry_kinds(entries: &[Value]) -> Vec<String> {
    entries
        .iter()
        .map(|e| match e["message"]["role"].as_str() {
            Some(role) if type_of(e) == "message" => format!("message:{role}"),
            _ => type_of(e),
        })
        .collect()
}

/// Every string inside `value`, depth first.
pub fn strings(value: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    collect_strings(value, &mut out);
    out
}

fn collect_strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(fields) => fields.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// True when some string in the request's JSON body contains `needle`.
pub fn body_mentions(request: &RecordedRequest, needle: &str) -> bool {
    let body = request.json().expect("JSON request body");
    strings(&body).iter().any(|s| s.contains(needle))
}
