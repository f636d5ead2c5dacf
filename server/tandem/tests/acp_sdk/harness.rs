//! Runs one scenario of `tests/acp-sdk/client.mjs` (the official ACP TypeScript SDK as the
//! client) against the real `tandem acp`, with its own home, agent directory, project directory
//! and mock LLM server, and reads back the scenario's JSON report.
//!
//! The report holds each step's result or error as sent over the wire, the `session/update`
//! notifications (tagged with the step they arrived in), the requests the agent made to the
//! client with the answers it got, every message on the wire, and the messages that failed the
//! SDK's JSON Schema. When a test panics, the report's summary goes to stderr and the whole
//! report is kept in `$CARGO_TARGET_TMPDIR/acp-sdk/<scenario>.json`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem_tests::mock_llm::MockLlm;

/// Hang guard for one node run (the driver has its own, shorter one); never a timing check.
const HANG_GUARD: Duration = Duration::from_secs(90);

/// The workspace root.
pub fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// A temp home, agent directory and project directory, plus a mock LLM server.
pub struct AcpSandbox {
    pub mock: MockLlm,
    pub home: PathBuf,
    pub agent_dir: PathBuf,
    /// The project directory: the agent's cwd and the sessions' cwd.
    pub cwd: PathBuf,
    // Dropped last: the mock's connections close before its runtime goes away.
    _temp: tempfile::TempDir,
    _runtime: tokio::runtime::Runtime,
}

impl AcpSandbox {
    /// models.json has one provider, `mock` (OpenAI chat completions at the mock server), with
    /// one model, `m`: the driver runs `tandem acp --model mock/m`.
    pub fn new() -> AcpSandbox {
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
        let models = json!({"providers": {"mock": {
            "api": "openai-completions",
            "baseUrl": format!("{}/v1", mock.base_url()),
            "apiKey": "test-key",
            // A window and a price of its own, for the usage updates.
            "models": [{"id": "m", "name": "Mock", "contextWindow": 64000,
                        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}],
        }}});
        std::fs::write(agent_dir.join("models.json"), models.to_string()).expect("models.json");
        AcpSandbox {
            mock,
            home,
            agent_dir,
            cwd,
            _temp: temp,
            _runtime: runtime,
        }
    }

    /// Queues the model's answers, one per request, from `fixtures/acp/<name>`.
    pub fn queue(&self, names: &[&str]) {
        for name in names {
            let path = repo_root().join("fixtures/acp").join(name);
            self.mock
                .enqueue_file(&path)
                .unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()));
        }
    }

    /// The absolute path of a project file.
    pub fn path(&self, name: &str) -> String {
        self.cwd.join(name).to_string_lossy().into_owned()
    }

    /// Writes a project file.
    pub fn write(&self, name: &str, content: &str) {
        std::fs::write(self.cwd.join(name), content).expect("write project file");
    }

    /// Reads a project file.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.cwd.join(name)).expect("read project file")
    }

    /// The JSON bodies of the requests the mock LLM received, in order.
    pub fn model_requests(&self) -> Vec<Value> {
        self.mock
            .requests()
            .iter()
            .map(|r| r.json().expect("JSON request body"))
            .collect()
    }

    /// The `usage` of every assistant message in the session files of the agent directory.
    pub fn assistant_usages(&self) -> Vec<Value> {
        fn files(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    files(&path, out);
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    out.push(path);
                }
            }
        }
        let mut found = Vec::new();
        files(&self.agent_dir.join("sessions"), &mut found);
        found
            .iter()
            .flat_map(|f| {
                std::fs::read_to_string(f)
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
            .filter(|e| e["type"] == "message" && e["message"]["role"] == "assistant")
            .map(|e| e["message"]["usage"].clone())
            .collect()
    }

    /// Runs `node tests/acp-sdk/client.mjs <scenario>` against the tandem binary.
    pub fn run(&self, scenario: &str) -> Report {
        let dir = repo_root().join("tests/acp-sdk");
        assert!(
            dir.join("node_modules/@agentclientprotocol/sdk").is_dir(),
            "{}/node_modules is missing: run scripts/install-node-deps",
            dir.display()
        );
        let mut child = Command::new("node")
            .arg(dir.join("client.mjs"))
            .arg(scenario)
            .arg("--agent")
            .arg(env!("CARGO_BIN_EXE_tandem"))
            .arg("--cwd")
            .arg(&self.cwd)
            .current_dir(&dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("PI_CODING_AGENT_DIR", &self.agent_dir)
            .env("RUST_BACKTRACE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run node ({e}): install Node.js 20 or newer"));
        let stdout = drain(child.stdout.take().expect("stdout pipe"));
        let stderr = drain(child.stderr.take().expect("stderr pipe"));
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("waits for node") {
                break status;
            }
            if started.elapsed() > HANG_GUARD {
                let _ = child.kill();
                panic!("hang guard: node client.mjs {scenario} still running after {HANG_GUARD:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stdout = stdout.join().expect("stdout reader");
        let stderr = stderr.join().expect("stderr reader");
        let json: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
            panic!("client.mjs {scenario} ({status}) printed no JSON report ({e});\nstdout:\n{stdout}\nstderr:\n{stderr}")
        });
        let saved = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("acp-sdk")
            .join(format!("{scenario}.json"));
        let _ = std::fs::create_dir_all(saved.parent().expect("report dir"));
        let _ = std::fs::write(&saved, &stdout);
        // Which fixture answered each model request (none: the queue was empty, HTTP 500).
        let model_requests = self
            .mock
            .requests()
            .iter()
            .map(|r| {
                let last_message = r
                    .json()
                    .ok()
                    .and_then(|b| b["messages"].as_array().and_then(|m| m.last().cloned()));
                format!(
                    "{} → {} (last message: {})",
                    r.summary(),
                    r.response
                        .as_deref()
                        .map_or("none, HTTP 500".into(), |name| {
                            Path::new(name)
                                .file_name()
                                .unwrap_or_default()
                                .to_string_lossy()
                        }),
                    clip(&last_message.unwrap_or_default().to_string(), 300)
                )
            })
            .collect();
        Report {
            json,
            node_stderr: stderr,
            saved,
            model_requests,
        }
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// A scenario's report.
pub struct Report {
    pub json: Value,
    node_stderr: String,
    saved: PathBuf,
    /// One line per request the mock LLM received.
    model_requests: Vec<String>,
}

/// What the updates of one tool call said, merged in arrival order.
#[derive(Debug, Default)]
pub struct ToolCall {
    pub id: String,
    /// True when the first update for this id was a `tool_call` (not a `tool_call_update`).
    pub announced: bool,
    pub kind: Option<String>,
    pub title: Option<String>,
    pub raw_input: Option<Value>,
    pub locations: Option<Value>,
    /// Every status, in order.
    pub statuses: Vec<String>,
    /// Every content item of every update, in order.
    pub content: Vec<Value>,
}

impl ToolCall {
    pub fn final_status(&self) -> &str {
        self.statuses.last().map(String::as_str).unwrap_or("")
    }

    /// Content items of type `kind` ("content", "diff", "terminal").
    pub fn items(&self, kind: &str) -> Vec<&Value> {
        self.content.iter().filter(|c| c["type"] == kind).collect()
    }

    /// The text of every `{type:"content", content:{type:"text"}}` item, joined.
    pub fn text(&self) -> String {
        self.items("content")
            .iter()
            .filter_map(|c| c["content"]["text"].as_str())
            .collect()
    }
}

impl Report {
    /// Panics unless the scenario ran to its end (the driver stopped on no error).
    pub fn expect_ran(&self) -> &Self {
        assert!(
            self.json["error"].is_null(),
            "the scenario stopped early: {}",
            self.json["error"].as_str().unwrap_or_default()
        );
        self
    }

    /// Panics unless every message in both directions passed the schema and every agent
    /// process exited with code 0 on its own once its stdin was closed.
    pub fn expect_valid(&self) -> &Self {
        let failures = self.json["validation"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            failures.is_empty(),
            "{} message(s) failed the ACP JSON Schema:\n{}",
            failures.len(),
            failures
                .iter()
                .map(|f| format!(
                    "- from {} ({}): {}\n  errors: {}",
                    f["sender"].as_str().unwrap_or_default(),
                    f["what"].as_str().unwrap_or_default(),
                    clip(&f["message"].to_string(), 1500),
                    clip(&f["errors"].to_string(), 1500)
                ))
                .collect::<Vec<_>>()
                .join("\n")
        );
        for (n, agent) in self.agents().iter().enumerate() {
            assert_eq!(
                agent["exit"],
                json!({"code": 0, "signal": null}),
                "agent process {n} did not exit cleanly after stdin closed"
            );
        }
        self.expect_turns_flushed();
        self
    }

    /// Panics when an update of a prompt turn (text, thinking, tool call, plan) arrives after
    /// the turn's `session/prompt` response: every update of a turn comes before it. The
    /// scenarios never run two turns of one process at once, so whatever the agent sends
    /// between a prompt's response and the client's next request is outside any turn.
    pub fn expect_turns_flushed(&self) {
        const TURN_UPDATES: [&str; 6] = [
            "agent_message_chunk",
            "agent_thought_chunk",
            "tool_call",
            "tool_call_update",
            "plan",
            "user_message_chunk",
        ];
        let wire = self.wire();
        let prompt_ids: Vec<(&Value, &Value)> = wire
            .iter()
            .filter(|w| w["sender"] == "client" && w["msg"]["method"] == "session/prompt")
            .map(|w| (&w["proc"], &w["msg"]["id"]))
            .collect();
        let mut after_response: Vec<Option<&Value>> = Vec::new(); // per proc: open prompt id
        for w in &wire {
            let proc = w["proc"].as_u64().unwrap_or_default() as usize;
            if after_response.len() <= proc {
                after_response.resize(proc + 1, None);
            }
            let msg = &w["msg"];
            if w["sender"] == "client" && msg.get("method").is_some() && msg.get("id").is_some() {
                after_response[proc] = None;
            } else if w["sender"] == "agent"
                && msg.get("method").is_none()
                && prompt_ids.contains(&(&w["proc"], &msg["id"]))
            {
                after_response[proc] = Some(&msg["id"]);
            } else if let Some(id) = after_response[proc] {
                let kind = msg["params"]["update"]["sessionUpdate"]
                    .as_str()
                    .unwrap_or_default();
                assert!(
                    msg["method"] != "session/update" || !TURN_UPDATES.contains(&kind),
                    "agent process {proc} sent a turn update after answering session/prompt \
                     (request id {id}): {msg}"
                );
            }
        }
    }

    pub fn agents(&self) -> Vec<Value> {
        self.json["agents"].as_array().cloned().unwrap_or_default()
    }

    fn step(&self, name: &str) -> &Value {
        let step = &self.json["steps"][name];
        assert!(!step.is_null(), "step {name} was not taken");
        step
    }

    /// The result of a step; panics with its error if it failed.
    pub fn result(&self, name: &str) -> &Value {
        let step = self.step(name);
        assert!(
            step.get("error").is_none(),
            "step {name} failed: {}",
            step["error"]
        );
        &step["result"]
    }

    /// The error of a step; panics with its result if it succeeded.
    pub fn error(&self, name: &str) -> &Value {
        let step = self.step(name);
        assert!(
            step.get("error").is_some(),
            "step {name} should have failed but answered {}",
            step["result"]
        );
        &step["error"]
    }

    /// The `stopReason` of a prompt step.
    pub fn stop_reason(&self, name: &str) -> &str {
        self.result(name)["stopReason"].as_str().unwrap_or_default()
    }

    /// Every update entry (`{proc, step, sessionId, update}`).
    pub fn update_entries(&self) -> Vec<&Value> {
        self.json["updates"]
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default()
    }

    /// The updates that arrived during `step`.
    pub fn updates(&self, step: &str) -> Vec<&Value> {
        self.update_entries()
            .into_iter()
            .filter(|e| e["step"] == step)
            .map(|e| &e["update"])
            .collect()
    }

    /// Updates of kind `kind` (their `sessionUpdate`), from any step.
    pub fn updates_of_kind(&self, kind: &str) -> Vec<&Value> {
        self.update_entries()
            .into_iter()
            .map(|e| &e["update"])
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// The text of the `kind` chunks (agent_message_chunk, agent_thought_chunk,
    /// user_message_chunk) of `step`, joined.
    pub fn text(&self, step: &str, kind: &str) -> String {
        self.updates(step)
            .iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .map(|u| {
                assert_eq!(u["content"]["type"], "text", "{kind} without text: {u}");
                u["content"]["text"].as_str().unwrap_or_default()
            })
            .collect()
    }

    /// The tool calls of `step`, in the order they were first seen.
    pub fn tool_calls(&self, step: &str) -> Vec<ToolCall> {
        let mut calls: Vec<ToolCall> = Vec::new();
        for u in self.updates(step) {
            let kind = u["sessionUpdate"].as_str().unwrap_or_default();
            if kind != "tool_call" && kind != "tool_call_update" {
                continue;
            }
            let id = u["toolCallId"].as_str().unwrap_or_default().to_string();
            let call = match calls.iter().position(|c| c.id == id) {
                Some(n) => &mut calls[n],
                None => {
                    calls.push(ToolCall {
                        id,
                        announced: kind == "tool_call",
                        ..ToolCall::default()
                    });
                    calls.last_mut().expect("just pushed")
                }
            };
            let set = |slot: &mut Option<String>, v: &Value| {
                if let Some(s) = v.as_str() {
                    *slot = Some(s.to_string());
                }
            };
            set(&mut call.kind, &u["kind"]);
            set(&mut call.title, &u["title"]);
            if !u["rawInput"].is_null() {
                call.raw_input = Some(u["rawInput"].clone());
            }
            if !u["locations"].is_null() {
                call.locations = Some(u["locations"].clone());
            }
            match u["status"].as_str() {
                Some(status) => call.statuses.push(status.to_string()),
                // A tool_call without a status is pending (the protocol's default).
                None if kind == "tool_call" => call.statuses.push("pending".to_string()),
                None => {}
            }
            if let Some(items) = u["content"].as_array() {
                call.content.extend(items.iter().cloned());
            }
        }
        calls
    }

    /// The only tool call of `step`.
    pub fn only_tool_call(&self, step: &str) -> ToolCall {
        let mut calls = self.tool_calls(step);
        assert_eq!(
            calls.len(),
            1,
            "tool calls in step {step}: {:?}",
            calls.iter().map(|c| &c.id).collect::<Vec<_>>()
        );
        calls.remove(0)
    }

    /// The requests the agent made to the client with method `method`, as
    /// `{proc, step, method, params, answer | error}`.
    pub fn calls(&self, method: &str) -> Vec<&Value> {
        self.json["calls"]
            .as_array()
            .map(|a| a.iter().filter(|c| c["method"] == method).collect())
            .unwrap_or_default()
    }

    /// The methods of every request the agent made to the client, in order.
    pub fn call_methods(&self) -> Vec<String> {
        self.json["calls"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|c| c["method"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The wire log: `{proc, sender, msg}` for every line, in order.
    pub fn wire(&self) -> Vec<&Value> {
        self.json["wire"]
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default()
    }

    /// The position in the wire log of the agent's response to the client's `nth` (from 0)
    /// `method` request of process `proc`.
    pub fn response_position(&self, proc: u64, method: &str, nth: usize) -> usize {
        let wire = self.wire();
        let request = wire
            .iter()
            .filter(|w| {
                w["proc"] == proc && w["sender"] == "client" && w["msg"]["method"] == method
            })
            .nth(nth)
            .unwrap_or_else(|| panic!("process {proc} sent no {method} request #{nth}"));
        let id = &request["msg"]["id"];
        wire.iter()
            .position(|w| {
                w["proc"] == proc
                    && w["sender"] == "agent"
                    && w["msg"]["id"] == *id
                    && w["msg"].get("method").is_none()
            })
            .unwrap_or_else(|| panic!("process {proc}: no response to {method}"))
    }

    /// A summary for a failed test: why it stopped, the steps, schema failures, the agents'
    /// stderr, and where the whole report is.
    pub fn summary(&self) -> String {
        let steps: Vec<String> = self.json["steps"]
            .as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| format!("  {k}: {}", clip(&v.to_string(), 600)))
                    .collect()
            })
            .unwrap_or_default();
        let updates: Vec<String> = self
            .update_entries()
            .iter()
            .map(|e| {
                format!(
                    "  [{}] {}",
                    e["step"].as_str().unwrap_or_default(),
                    clip(&e["update"].to_string(), 300)
                )
            })
            .collect();
        let agents: Vec<String> = self
            .agents()
            .iter()
            .enumerate()
            .map(|(n, a)| {
                format!(
                    "--- agent {n} exit {} stderr:\n{}",
                    a["exit"],
                    tail(a["stderr"].as_str().unwrap_or_default(), 3000)
                )
            })
            .collect();
        format!(
            "=== ACP SDK scenario {} (full report: {})\nerror: {}\nlast step: {}\nsteps:\n{}\nupdates:\n{}\nagent requests: {:?}\nmodel requests:\n  {}\nschema failures: {}\n{}\n--- node stderr:\n{}",
            self.json["scenario"].as_str().unwrap_or_default(),
            self.saved.display(),
            self.json["error"],
            self.json["lastStep"],
            steps.join("\n"),
            updates.join("\n"),
            self.call_methods(),
            self.model_requests.join("\n  "),
            clip(&self.json["validation"].to_string(), 3000),
            agents.join("\n"),
            tail(&self.node_stderr, 2000),
        )
    }
}

impl Drop for Report {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.summary());
        }
    }
}

fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
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

/// True when some string in `value` contains `needle`.
pub fn mentions(value: &Value, needle: &str) -> bool {
    strings(value).iter().any(|s| s.contains(needle))
}
