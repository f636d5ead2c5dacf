//! Every front door against a [`Sandbox`] whose agent dir holds recognizable fake secrets: CLI
//! runs, `tandem lsp` on tandem-tests' LSP client, and `tandem acp` through [`Acp`], a raw
//! newline-delimited JSON-RPC client. The security, consent and logging tests share them.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem_tests::lsp_client::{ClientError, Handler, LspClient};
use tandem_tests::wire::WireApi;

use super::lsp::{initialize, new_session};
use super::process::in_sandbox;
use super::Sandbox;

/// How long any wait may take before the test fails (a hang guard, never a timing assertion).
pub const GUARD: Duration = Duration::from_secs(90);

/// The key in models.json (`apiKey`, literal), provider `lit`.
pub const KEY_MODELS: &str = "sk-modelsjson-SECRET-5f1e2d3c4b";
/// The key in an environment variable that models.json names (provider `envp`).
pub const KEY_ENV: &str = "sk-envvar-SECRET-9a8b7c6d5e";
/// The key in auth.json (provider `authp`; models.json has another, unused one).
pub const KEY_AUTH: &str = "sk-authjson-SECRET-1122334455";
/// The key given with `--api-key`.
pub const KEY_FLAG: &str = "sk-cliflag-SECRET-6677889900";
/// The value of a custom auth header in models.json (provider `hdr`).
pub const HEADER_SECRET: &str = "hdr-SECRET-aabbccddee";
/// The environment variable holding [`KEY_ENV`].
pub const ENV_NAME: &str = "TANDEM_SECURITY_TEST_KEY";
/// Every secret, and the marker they all share (catches a partial print).
pub const SECRETS: [&str; 6] = [
    KEY_MODELS,
    KEY_ENV,
    KEY_AUTH,
    KEY_FLAG,
    HEADER_SECRET,
    "SECRET-",
];

/// A sandbox whose agent dir defines providers `lit`, `envp`, `authp`, `hdr` (all
/// openai-completions at the sandbox's mock, model `m`, keys as above) and `script` (the
/// scripted model replaying `script`), with fast retries.
pub fn sandbox(script: &Value) -> Sandbox {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let base = WireApi::OpenAiCompletions.base_url(&sandbox.mock.base_url());
    let script_path = sandbox.agent_dir.join("script.json");
    std::fs::write(&script_path, script.to_string()).unwrap();
    let provider = |key: &str| {
        json!({"baseUrl": base, "api": "openai-completions", "apiKey": key,
            "models": [{"id": "m"}]})
    };
    let mut hdr = provider(KEY_MODELS);
    hdr["headers"] = json!({"x-custom-auth": HEADER_SECRET});
    sandbox.write_models(json!({"providers": {
        "lit": provider(KEY_MODELS),
        "envp": provider(ENV_NAME),
        "authp": provider("sk-placeholder-overridden-by-auth-json"),
        "hdr": hdr,
        "script": {"api": "scripted", "apiKey": "none", "baseUrl": script_path,
                   "models": [{"id": "t"}]}
    }}));
    sandbox.write_agent_file(
        "auth.json",
        &json!({"authp": {"type": "api_key", "key": KEY_AUTH}}).to_string(),
    );
    sandbox.write_settings(json!({"retry": {"baseDelayMs": 1, "maxRetries": 1}}));
    sandbox
}

/// Panics naming `what` and the secret when `text` holds any secret.
pub fn assert_clean(what: &str, text: &str) {
    for secret in SECRETS {
        if let Some(at) = text.find(secret) {
            let from = at.saturating_sub(160);
            let to = (at + secret.len() + 80).min(text.len());
            let from = (0..=from)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            let to = (to..=text.len())
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(text.len());
            panic!("{what} holds the secret {secret:?}: …{}…", &text[from..to]);
        }
    }
}

/// The environment every front door gets: the sandbox, the most verbose logging settings that
/// exist anywhere (`TANDEM_LOG=trace` turns Tandem's own log all the way up; the others are set
/// to show that nothing changes), and the env-var key.
pub fn command(sandbox: &Sandbox, args: &[&str]) -> Command {
    let mut cmd = in_sandbox(sandbox, args);
    cmd.env("RUST_LOG", "trace")
        .env("RUST_BACKTRACE", "1")
        .env("TANDEM_LOG", "trace")
        .env("DEBUG", "*")
        .env(ENV_NAME, KEY_ENV);
    cmd
}

/// A CLI run: exit code, stdout, stderr.
pub struct CliRun {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub fn cli(sandbox: &Sandbox, args: &[&str]) -> CliRun {
    let output = command(sandbox, args)
        .stdin(Stdio::null())
        .output()
        .expect("runs tandem");
    CliRun {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `tandem lsp` initialized over the sandbox's project with `options` (agentDir added), server
/// requests answered by `handler`, stderr collected.
pub fn lsp(sandbox: &Sandbox, options: Value, handler: Handler) -> Result<LspClient, ClientError> {
    lsp_with(sandbox, options, handler, true)
}

/// [`lsp`] for a client that opts in to `tandem/event`s or not (then a command's answer or
/// error comes as `window/showMessage`).
pub fn lsp_with(
    sandbox: &Sandbox,
    options: Value,
    handler: Handler,
    events: bool,
) -> Result<LspClient, ClientError> {
    let mut cmd = command(sandbox, &["lsp"]);
    cmd.stderr(Stdio::piped());
    let mut client = LspClient::spawn(cmd)?
        .with_timeout(GUARD)
        .with_handler(handler);
    let mut options = options;
    options["agentDir"] = json!(sandbox.agent_dir);
    initialize(
        &mut client,
        &sandbox.cwd,
        json!({"general": {"positionEncodings": ["utf-16"]},
            "workspace": {"applyEdit": true},
            "window": {"showMessage": {"messageActionItem": {}}, "workDoneProgress": true},
            "experimental": {"tandem": {"events": events}}}),
        options,
    )?;
    Ok(client)
}

/// A session on `provider/model` that ran one prompt to `settled`; its id.
pub fn lsp_run(
    lsp: &mut LspClient,
    provider: &str,
    model: &str,
    text: &str,
) -> Result<String, ClientError> {
    let session = new_session(lsp)?;
    lsp.request(
        "tandem/models/set",
        json!({"session": session, "provider": provider, "id": model}),
    )?;
    lsp.request("tandem/prompt", json!({"session": session, "text": text}))?;
    lsp.wait_settled(&session, 1)?;
    Ok(session)
}

/// What the ACP client answers to an agent request (`method`, `params`) → `result`.
pub type AcpAnswer = Box<dyn FnMut(&str, &Value) -> Value>;

/// `tandem acp` over raw newline-delimited JSON-RPC; stderr to a file.
pub struct Acp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: i64,
    /// Every line the agent wrote, in order.
    pub wire: Vec<String>,
    /// Responses by id.
    pub responses: HashMap<i64, Value>,
    /// Requests the agent sent (method, params), in order.
    pub requests: Vec<(String, Value)>,
    answer: AcpAnswer,
    stderr: PathBuf,
}

impl Acp {
    /// Starts `tandem acp` and initializes it (no client fs or terminal: the agent uses the
    /// disk and runs commands itself, after asking).
    pub fn start(sandbox: &Sandbox, answer: AcpAnswer) -> Acp {
        Acp::start_with(sandbox, &[], answer)
    }

    /// [`Acp::start`] of `tandem acp <args>`.
    pub fn start_with(sandbox: &Sandbox, args: &[&str], answer: AcpAnswer) -> Acp {
        let stderr = sandbox.home.join("acp-stderr.log");
        let log = std::fs::File::create(&stderr).unwrap();
        let mut argv = vec!["acp"];
        argv.extend_from_slice(args);
        let mut child = command(sandbox, &argv)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut acp = Acp {
            child,
            stdin,
            lines,
            next_id: 0,
            wire: Vec::new(),
            responses: HashMap::new(),
            requests: Vec::new(),
            answer,
            stderr,
        };
        let init = acp.call(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        );
        assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
        acp
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn write(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and waits for its response, answering the agent's requests meanwhile.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + GUARD;
        while !self.responses.contains_key(&id) {
            let line = self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            self.wire.push(line.clone());
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            match (message.get("id"), message["method"].as_str()) {
                (Some(rid), Some(m)) => {
                    let result = (self.answer)(m, &message["params"]);
                    self.requests
                        .push((m.to_string(), message["params"].clone()));
                    let rid = rid.clone();
                    self.write(&json!({"jsonrpc": "2.0", "id": rid, "result": result}));
                }
                (Some(rid), None) => {
                    self.responses.insert(rid.as_i64().unwrap(), message);
                }
                _ => {}
            }
        }
        self.responses[&id].clone()
    }

    /// A new session in the sandbox's project; its id.
    pub fn new_session(&mut self, cwd: &Path) -> String {
        let r = self.call("session/new", json!({"cwd": cwd, "mcpServers": []}));
        r["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("session/new failed: {r}"))
            .to_string()
    }

    /// Runs one prompt to its answer.
    pub fn prompt(&mut self, session: &str, text: &str) -> Value {
        self.call(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// `session/update` notifications' `update`s, in order.
    pub fn updates(&self) -> Vec<Value> {
        self.wire
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|m| m["method"] == "session/update")
            .map(|m| m["params"]["update"].clone())
            .collect()
    }

    /// The permission requests the agent sent.
    pub fn permission_requests(&self) -> Vec<Value> {
        self.requests
            .iter()
            .filter(|(m, _)| m == "session/request_permission")
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// Closes stdin and waits for the agent to exit.
    pub fn close(&mut self) {
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            while let Ok(line) = self.lines.try_recv() {
                self.wire.push(line);
            }
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
    }
}

impl Drop for Acp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The ACP answer to a permission request: reject (the user says no).
pub fn acp_reject(method: &str, _params: &Value) -> Value {
    match method {
        "session/request_permission" => {
            json!({"outcome": {"outcome": "selected", "optionId": "reject_once"}})
        }
        _ => Value::Null,
    }
}

/// The LSP answer of an editor whose user says no to every question and applies every edit.
pub fn lsp_deny(method: &str, params: &Value) -> Value {
    match method {
        "window/showMessageRequest" => {
            let deny = params["actions"]
                .as_array()
                .and_then(|a| {
                    a.iter()
                        .find(|x| x["title"] == "Deny" || x["title"] == "Reject")
                })
                .cloned();
            deny.unwrap_or(Value::Null)
        }
        "workspace/applyEdit" => json!({"applied": true}),
        _ => Value::Null,
    }
}
