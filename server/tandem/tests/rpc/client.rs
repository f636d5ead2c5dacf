//! A client of our own for `tandem --mode rpc`: the real binary as a child in a sandbox, each
//! stdout line read by a thread and parsed, requests with ids, and the lines that came before
//! each response kept so a test can assert the events a command caused.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ExitStatus};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};

use serde_json::{json, Value};

use crate::support::process::{command, wait_or_fail, HANG_GUARD};
use crate::support::{Sandbox, MODEL};

/// `tandem --mode rpc` running in a sandbox.
pub struct Rpc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
    stderr_path: std::path::PathBuf,
    /// Every line read so far, for the failure messages.
    seen: Vec<String>,
}

impl Rpc {
    /// Starts `tandem --mode rpc --model mock/mock-model <args>`.
    pub fn start(sandbox: &Sandbox, args: &[&str]) -> Rpc {
        let mut all = vec!["--mode", "rpc", "--model", MODEL];
        all.extend_from_slice(args);
        Rpc::start_raw(sandbox, &all, &[])
    }

    /// Starts `tandem <args>` exactly as given, with extra environment variables.
    pub fn start_raw(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Rpc {
        let mut cmd = command(sandbox, args, "rpc-stderr.txt");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawns tandem --mode rpc");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout pipe");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            // Split on LF only, as a strict JSONL client must.
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if line.last() == Some(&b'\n') {
                            line.pop();
                        }
                        let text = String::from_utf8(line).expect("stdout is UTF-8");
                        if tx.send(text).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Rpc {
            child,
            stdin,
            lines,
            next_id: 0,
            stderr_path: sandbox.home.join("rpc-stderr.txt"),
            seen: Vec::new(),
        }
    }

    /// Writes raw bytes to stdin.
    pub fn write_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("writes stdin");
        stdin.flush().expect("flushes stdin");
    }

    /// Sends one JSON line.
    pub fn send(&mut self, value: &Value) {
        let mut line = serde_json::to_vec(value).expect("encodes");
        line.push(b'\n');
        self.write_raw(&line);
    }

    /// The next stdout line, parsed; fails the test when none comes in time.
    pub fn next(&mut self) -> Value {
        match self.lines.recv_timeout(HANG_GUARD) {
            Ok(line) => {
                self.seen.push(line.clone());
                serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"))
            }
            Err(RecvTimeoutError::Timeout) => panic!(
                "no stdout line within {HANG_GUARD:?}; the lines so far:\n{}\nstderr:\n{}",
                self.seen.join("\n"),
                self.stderr()
            ),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("stdout closed; stderr:\n{}", self.stderr())
            }
        }
    }

    /// Sends `command` with a fresh string id and returns the lines before its response, and
    /// the response.
    pub fn request(&mut self, mut command: Value) -> (Vec<Value>, Value) {
        self.next_id += 1;
        let id = format!("req-{}", self.next_id);
        command["id"] = json!(id);
        self.send(&command);
        self.response_to(&json!(id))
    }

    /// Like [`Rpc::request`], only the response.
    pub fn call(&mut self, command: Value) -> Value {
        self.request(command).1
    }

    /// The `data` of a successful response to `command`; fails the test on an error.
    pub fn data(&mut self, command: Value) -> Value {
        let response = self.call(command.clone());
        assert_eq!(
            response["success"],
            true,
            "{command} failed: {response}; stderr:\n{}",
            self.stderr()
        );
        response.get("data").cloned().unwrap_or(Value::Null)
    }

    /// Reads until the response with `id`; the lines before it and the response.
    pub fn response_to(&mut self, id: &Value) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        loop {
            let line = self.next();
            if line["type"] == "response" && &line["id"] == id {
                return (before, line);
            }
            before.push(line);
        }
    }

    /// Reads until a line of type `kind`; the lines up to and including it.
    pub fn until(&mut self, kind: &str) -> Vec<Value> {
        let mut lines = Vec::new();
        loop {
            let line = self.next();
            let done = line["type"] == kind;
            lines.push(line);
            if done {
                return lines;
            }
        }
    }

    /// Closes stdin and waits for the exit.
    pub fn finish(mut self) -> ExitStatus {
        drop(self.stdin.take());
        wait_or_fail(
            &mut self.child,
            HANG_GUARD,
            "tandem --mode rpc at stdin EOF",
        )
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn terminate(mut self) -> ExitStatus {
        let pid = libc::pid_t::try_from(self.child.id()).expect("pid");
        // SAFETY: signalling our own child by its pid.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        wait_or_fail(
            &mut self.child,
            HANG_GUARD,
            "tandem --mode rpc after SIGTERM",
        )
    }

    /// What the process wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `type`s of `lines`, with an assistant or user `message_*` marked by its role.
pub fn kinds(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            let kind = l["type"].as_str().unwrap_or_default();
            match l["message"]["role"].as_str() {
                Some(role) => format!("{kind}:{role}"),
                None => kind.to_string(),
            }
        })
        .collect()
}

/// Sends `message` as a prompt whose answer runs `sleep 30` through the bash tool, and waits
/// until the tool runs: a turn that lasts until it is aborted.
pub fn start_a_long_turn(sandbox: &Sandbox, rpc: &mut Rpc, message: &str) {
    sandbox.answer(&tandem_tests::wire::Turn::tool_call(
        "call_1",
        "bash",
        json!({"command": "sleep 30"}),
    ));
    let started = rpc.data(json!({"type": "prompt", "message": message}));
    assert_eq!(started, json!({"disposition": "started"}));
    rpc.until("tool_execution_start");
}
