//! pi 1.6's mcp.json through the real binary (`tandem --mode json -p`, a scripted model): the
//! agent directory's and the project's files, merged by pi's rules; the project's read only for
//! a trusted folder; `${VAR}` values; bad entries; streamable-HTTP servers (the fixture's
//! http-server.mjs on loopback); tool names; exposure. And the real pi 1.6 (`pi mcp list`,
//! `scripts/install-pi16`) on the same files: both start the same servers and refuse the same
//! entries.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::support::mcp::{fixtures, HttpFixture};

/// A stdio entry running the fixture server, with `env`.
fn stdio(env: Value) -> Value {
    json!({"command": "node", "args": [fixtures().join("server.mjs")], "env": env})
}

/// An agent directory, a project folder and a scripted model.
struct Run {
    _dir: tempfile::TempDir,
    home: PathBuf,
    agent: PathBuf,
    project: PathBuf,
}

/// What a run printed.
struct Output {
    stderr: String,
    /// `(tool name, is error, first text)` of each tool call, in call order.
    results: Vec<(String, bool, String)>,
}

impl Output {
    fn result(&self, tool: &str) -> (bool, String) {
        let found = self.results.iter().find(|(name, _, _)| name == tool);
        let (_, error, text) =
            found.unwrap_or_else(|| panic!("no call of {tool}: {}", self.stderr));
        (*error, text.clone())
    }

    /// The text of a successful call.
    fn ok(&self, tool: &str) -> String {
        let (error, text) = self.result(tool);
        assert!(!error, "{tool} failed: {text}\n{}", self.stderr);
        text
    }

    /// Asserts that the model was told the tool does not exist.
    fn missing(&self, tool: &str) {
        let (error, text) = self.result(tool);
        assert!(error && text.contains("not found"), "{tool}: {text}");
    }

    /// The stderr lines mentioning all of `words`.
    fn lines_with(&self, words: &[&str]) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|line| words.iter().all(|w| line.contains(w)))
            .collect()
    }
}

impl Run {
    fn new() -> Run {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        let agent = home.join("agent");
        let project = home.join("project");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(project.join(".pi")).unwrap();
        Run {
            _dir: dir,
            home,
            agent,
            project,
        }
    }

    fn user_mcp(&self, servers: Value) -> &Run {
        let text = json!({"mcpServers": servers}).to_string();
        std::fs::write(self.agent.join("mcp.json"), text).unwrap();
        self
    }

    fn project_mcp(&self, servers: Value) -> &Run {
        let text = json!({"mcpServers": servers}).to_string();
        std::fs::write(self.project.join(".pi/mcp.json"), text).unwrap();
        self
    }

    /// Runs one prompt whose scripted model calls `calls` (tool name, arguments) at once, with
    /// `trust` (`--approve` / `--no-approve`) and extra environment variables.
    fn run(&self, calls: &[(&str, Value)], trust: &str, env: &[(&str, &str)]) -> Output {
        let calls: Vec<Value> = calls
            .iter()
            .map(|(name, args)| json!({"name": name, "arguments": args}))
            .collect();
        let script = json!({"turns": [{"toolCalls": calls}, {"text": "done"}]});
        std::fs::write(self.agent.join("script.json"), script.to_string()).unwrap();
        std::fs::write(
            self.agent.join("models.json"),
            json!({"providers": {"script": {"api": "scripted", "apiKey": "none",
                "baseUrl": self.agent.join("script.json"), "models": [{"id": "t"}]}}})
            .to_string(),
        )
        .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["--mode", "json", "--model", "script/t", trust, "-p", "go"])
            .current_dir(&self.project)
            .env("PI_CODING_AGENT_DIR", &self.agent)
            .env("HOME", &self.home)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{stderr}");
        let results = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["type"] == "tool_execution_end")
            .map(|e| {
                (
                    e["toolName"].as_str().unwrap_or("").to_string(),
                    e["isError"] == true,
                    e["result"]["content"][0]["text"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                )
            })
            .collect();
        Output { stderr, results }
    }
}

fn echo(name: &str) -> Value {
    json!({"name": name})
}

#[test]
fn user_and_project_files_merge_by_pi_rules() {
    let run = Run::new();
    run.user_mcp(json!({
        "fixture": stdio(json!({"FIXTURE_GREETING": "user"})),
        "keep": stdio(json!({"FIXTURE_GREETING": "user keep"})),
        "off": stdio(json!({})),
        "tuned": stdio(json!({"FIXTURE_GREETING": "user secret"})),
    }));
    run.project_mcp(json!({
        // Replaces the user's entry whole.
        "fixture": stdio(json!({"FIXTURE_GREETING": "project"})),
        // Only enabled/exposure/toolExposure: the user's command and env stay.
        "off": {"enabled": false},
        "tuned": {"toolExposure": {"add": "hidden"}},
        "local": stdio(json!({"FIXTURE_GREETING": "project only"})),
    }));
    let calls = [
        ("mcp__fixture__echo_env", echo("FIXTURE_GREETING")),
        ("mcp__keep__echo_env", echo("FIXTURE_GREETING")),
        ("mcp__off__add", json!({"a": 1, "b": 2})),
        ("mcp__tuned__echo_env", echo("FIXTURE_GREETING")),
        ("mcp__tuned__add", json!({"a": 1, "b": 2})),
        ("mcp__local__echo_env", echo("FIXTURE_GREETING")),
    ];
    let out = run.run(&calls, "--approve", &[]);
    assert_eq!(out.ok("mcp__fixture__echo_env"), "project");
    assert_eq!(out.ok("mcp__keep__echo_env"), "user keep");
    out.missing("mcp__off__add");
    assert_eq!(out.ok("mcp__tuned__echo_env"), "user secret");
    out.missing("mcp__tuned__add");
    assert_eq!(out.ok("mcp__local__echo_env"), "project only");
    assert!(out.lines_with(&["mcp.json"]).is_empty(), "{}", out.stderr);
}

#[test]
fn an_untrusted_projects_servers_never_start() {
    let run = Run::new();
    let marker = run.home.join("project-server-started");
    let planted = stdio(json!({"FIXTURE_STARTED_FILE": marker}));
    run.user_mcp(json!({"mine": stdio(json!({"FIXTURE_GREETING": "mine"}))}));
    // Also an override that would switch the user's server off.
    run.project_mcp(json!({"planted": planted, "mine": {"enabled": false}}));
    let calls = [
        ("mcp__planted__pid", json!({})),
        ("mcp__mine__echo_env", echo("FIXTURE_GREETING")),
    ];
    let out = run.run(&calls, "--no-approve", &[]);
    out.missing("mcp__planted__pid");
    assert_eq!(out.ok("mcp__mine__echo_env"), "mine");
    assert!(!marker.exists(), "the untrusted project's server ran");

    // The same folder trusted: the server starts (so the marker does show a start).
    let out = run.run(&calls, "--approve", &[]);
    out.ok("mcp__planted__pid");
    out.missing("mcp__mine__echo_env");
    assert!(marker.exists());
}

#[test]
fn env_values_expand_variables_and_an_unset_one_is_named() {
    let run = Run::new();
    run.user_mcp(json!({
        "expanded": stdio(json!({"FIXTURE_GREETING": "hi ${TANDEM_TEST_NAME}, $$5"})),
        "unset": stdio(json!({"TOKEN": "${TANDEM_TEST_UNSET_VARIABLE}"})),
    }));
    let calls = [
        ("mcp__expanded__echo_env", echo("FIXTURE_GREETING")),
        ("mcp__unset__add", json!({"a": 1, "b": 2})),
    ];
    let out = run.run(&calls, "--approve", &[("TANDEM_TEST_NAME", "bob")]);
    assert_eq!(out.ok("mcp__expanded__echo_env"), "hi bob, $5");
    out.missing("mcp__unset__add");
    let lines = out.lines_with(&[
        "`unset`",
        "env `TOKEN`",
        "TANDEM_TEST_UNSET_VARIABLE is not set",
    ]);
    assert_eq!(lines.len(), 1, "{}", out.stderr);
}

#[test]
fn bad_entries_are_reported_and_the_others_start() {
    let run = Run::new();
    let good = stdio(json!({}));
    run.user_mcp(json!({
        "good": good,
        "bad name": good,
        "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
        "odd": {"type": "websocket", "command": "node"},
        "both": {"command": "node", "url": "http://127.0.0.1:1/mcp"},
        "dash-name": good,
        "dash_name": good,
        "signin": {"url": "https://example.com/mcp", "oauth": {"clientId": "x"}},
        "shell": {"command": "node server.mjs --flag"},
        "nothing": {"enabled": true},
    }));
    let out = run.run(
        &[("mcp__good__add", json!({"a": 2, "b": 3}))],
        "--approve",
        &[],
    );
    assert_eq!(out.ok("mcp__good__add"), "5");
    let expect = [
        ("mcpServers.bad name", "invalid server name"),
        ("mcpServers.old", "legacy SSE transport is not supported"),
        (
            "mcpServers.odd",
            "it must be \"stdio\", \"http\" or \"streamable-http\"",
        ),
        ("mcpServers.both", "has both \"command\" and \"url\""),
        (
            "mcpServers.dash_name",
            "conflicts with server \"dash-name\"",
        ),
        (
            "mcpServers.signin",
            "OAuth sign-in is not supported by Tandem",
        ),
        ("mcpServers.nothing", "needs either \"command\""),
    ];
    for (key, problem) in expect {
        assert_eq!(
            out.lines_with(&[key, problem]).len(),
            1,
            "{key}: {}",
            out.stderr
        );
    }
    // `command` is one program, not a shell line: that entry starts nothing and says so.
    assert_eq!(
        out.lines_with(&["`shell`", "`node server.mjs --flag` was not found"])
            .len(),
        1,
        "{}",
        out.stderr
    );
}

#[test]
fn colliding_tool_names_get_pis_hash_suffix() {
    let run = Run::new();
    run.user_mcp(json!({"fix": stdio(json!({"FIXTURE_EXTRA_TOOLS": "a-b,a_b,c-d"}))}));
    // SHA-256 of "fix\0a-b" and "fix\0a_b", first 8 hex digits, as pi computes them.
    let calls = [
        ("mcp__fix__a_b_cd38b01b", json!({})),
        ("mcp__fix__a_b_8ab14be7", json!({})),
        ("mcp__fix__c_d", json!({})),
        ("mcp__fix__a_b", json!({})),
    ];
    let out = run.run(&calls, "--approve", &[]);
    assert_eq!(out.ok("mcp__fix__a_b_cd38b01b"), "a-b");
    assert_eq!(out.ok("mcp__fix__a_b_8ab14be7"), "a_b");
    assert_eq!(out.ok("mcp__fix__c_d"), "c-d");
    out.missing("mcp__fix__a_b");
}

#[test]
fn exposure_hides_tools_and_unsupported_values_are_reported_once() {
    let run = Run::new();
    let with = |extra: Value| {
        let mut entry = stdio(json!({}));
        if let (Some(entry), Value::Object(extra)) = (entry.as_object_mut(), extra) {
            entry.extend(extra);
        }
        entry
    };
    run.user_mcp(json!({
        "gone": with(json!({"exposure": "hidden", "toolExposure": {"add": "direct"}})),
        "deferred": with(json!({"exposure": "deferred", "toolExposure": {"p*": "hidden"}})),
        "code": with(json!({"exposure": "codemode-deferred"})),
        "plain": with(json!({"exposure": "direct"})),
        "wrong": with(json!({"exposure": "sometimes"})),
    }));
    let calls = [
        ("mcp__gone__add", json!({"a": 1, "b": 1})),
        ("mcp__gone__echo_env", echo("X")),
        ("mcp__deferred__add", json!({"a": 1, "b": 2})),
        ("mcp__deferred__pid", json!({})),
        ("mcp__code__add", json!({"a": 1, "b": 3})),
        ("mcp__plain__add", json!({"a": 1, "b": 4})),
    ];
    let out = run.run(&calls, "--approve", &[]);
    assert_eq!(out.ok("mcp__gone__add"), "2");
    out.missing("mcp__gone__echo_env");
    assert_eq!(out.ok("mcp__deferred__add"), "3");
    out.missing("mcp__deferred__pid");
    assert_eq!(out.ok("mcp__code__add"), "4");
    assert_eq!(out.ok("mcp__plain__add"), "5");
    for (server, value) in [("deferred", "\"deferred\""), ("code", "\"codemode\"")] {
        let lines = out.lines_with(&[&format!(
            "MCP server `{server}`: exposure {value} is not supported"
        )]);
        assert_eq!(lines.len(), 1, "{server}: {}", out.stderr);
    }
    assert!(out.lines_with(&["`plain`"]).is_empty(), "{}", out.stderr);
    assert_eq!(
        out.lines_with(&["mcpServers.wrong", "exposure: expected \"codemode\""])
            .len(),
        1,
        "{}",
        out.stderr
    );
}

/// pi 1.6's resource tools, through the real binary: a server offering resources is listed
/// and read; one that offers none is not among them.
#[test]
fn resources_are_listed_and_read_through_pis_resource_tools() {
    let run = Run::new();
    run.user_mcp(json!({
        "docs": stdio(json!({"FIXTURE_RESOURCES": "1"})),
        "plain": stdio(json!({})),
    }));
    let calls = [
        ("list_mcp_resources", json!({})),
        (
            "read_mcp_resource",
            json!({"server": "docs", "uri": "fixture://notes/readme"}),
        ),
        (
            "read_mcp_resource",
            json!({"server": "plain", "uri": "fixture://notes/readme"}),
        ),
    ];
    let out = run.run(&calls, "--approve", &[]);
    // Calls end in any order.
    let listing: Value = serde_json::from_str(&out.ok("list_mcp_resources")).unwrap();
    let servers: Vec<&str> = listing["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["server"].as_str().unwrap())
        .collect();
    assert_eq!(servers, ["docs", "docs", "docs"], "{listing}");
    let mut reads: Vec<(bool, &str)> = out
        .results
        .iter()
        .filter(|(name, _, _)| name == "read_mcp_resource")
        .map(|(_, error, text)| (*error, text.as_str()))
        .collect();
    reads.sort();
    assert_eq!(
        reads,
        [
            (false, "The fixture's notes."),
            (
                true,
                "MCP server `plain` offers no resources. Servers with resources: docs."
            )
        ]
    );
}

#[test]
fn streamable_http_servers_with_a_bearer_token_and_failing_ones() {
    let good = HttpFixture::start(&[("FIXTURE_TOKEN", "s3cret")]);
    let broken = HttpFixture::start(&[("FIXTURE_STATUS", "500")]);
    // A port nothing listens on: the one a stopped server had.
    let gone = HttpFixture::start(&[]);
    let gone_url = gone.url.clone();
    drop(gone);
    let run = Run::new();
    run.user_mcp(json!({
        "remote": {"url": good.url, "headers": {"Authorization": "Bearer ${TANDEM_TEST_TOKEN}"},
                   "type": "streamable-http"},
        "anonymous": {"url": good.url},
        "broken": {"type": "http", "url": broken.url},
        "gone": {"url": gone_url},
        "tokenless": {"url": good.url, "headers": {"Authorization": "Bearer ${TANDEM_TEST_NO_TOKEN}"}},
    }));
    let calls = [
        ("mcp__remote__add", json!({"a": 40, "b": 2})),
        ("mcp__remote__fail", json!({})),
        ("mcp__anonymous__add", json!({"a": 1, "b": 1})),
    ];
    let out = run.run(&calls, "--approve", &[("TANDEM_TEST_TOKEN", "s3cret")]);
    assert_eq!(out.ok("mcp__remote__add"), "42");
    let (error, text) = out.result("mcp__remote__fail");
    assert!(
        error && text.contains("the fixture failed on purpose"),
        "{text}"
    );
    out.missing("mcp__anonymous__add");
    let expect: [&[&str]; 4] = [
        &[
            "`anonymous`",
            "401 Unauthorized",
            "OAuth sign-in is not supported",
        ],
        &["`broken`", "500"],
        &["`gone`", &gone_url],
        &[
            "`tokenless`",
            "header `Authorization`",
            "TANDEM_TEST_NO_TOKEN is not set",
        ],
    ];
    for words in expect {
        assert_eq!(out.lines_with(words).len(), 1, "{words:?}: {}", out.stderr);
    }
}

#[test]
fn servers_that_hang_or_die_end_in_errors_not_a_hung_run() {
    let hanging = HttpFixture::start(&[("FIXTURE_HANG", "1")]);
    let dying = HttpFixture::start(&[]);
    let run = Run::new();
    // The timeout bounds `initialize` too: generous enough for node to start on a busy machine.
    let mut slow = stdio(json!({}));
    slow["timeout"] = json!(10);
    run.user_mcp(json!({
        "hanging": {"url": hanging.url, "timeout": 1},
        "dying": {"url": dying.url},
        "slow": slow,
    }));
    let calls = [
        ("mcp__dying__crash", json!({})),
        ("mcp__slow__slow", json!({"ms": 600000})),
        ("mcp__hanging__add", json!({"a": 1, "b": 1})),
    ];
    let out = run.run(&calls, "--approve", &[]);
    out.missing("mcp__hanging__add");
    assert_eq!(
        out.lines_with(&["`hanging`", "did not complete `initialize`", "within 1 s"])
            .len(),
        1,
        "{}",
        out.stderr
    );
    let (error, text) = out.result("mcp__dying__crash");
    assert!(error && text.contains("MCP server `dying`"), "{text}");
    let (error, text) = out.result("mcp__slow__slow");
    assert!(
        error && text.contains("did not answer the call to `slow` within 10 s"),
        "{text}"
    );
}

/// pi 1.6 (`scripts/install-pi16`), or a failure saying how to install it.
fn pi16() -> PathBuf {
    let pi = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/pi16/bin/pi");
    assert!(pi.is_file(), "pi 1.6 is missing: run scripts/install-pi16");
    pi
}

#[test]
fn pi_16_and_tandem_start_the_same_servers_from_the_same_files() {
    let run = Run::new();
    run.user_mcp(json!({
        "fix": stdio(json!({})),
        "tuned": stdio(json!({})),
        "unset": stdio(json!({"T": "${TANDEM_TEST_UNSET_VARIABLE}"})),
        "bad name": stdio(json!({})),
        "dash-name": stdio(json!({})),
        "dash_name": stdio(json!({})),
    }));
    run.project_mcp(json!({
        "tuned": {"enabled": false},
        "ghost": {"enabled": true},
        "local": stdio(json!({})),
        "fix": {"enabled": true, "cwd": "elsewhere"},
    }));
    // Trusted the way both read it: trust.json, written by `tandem trust`.
    let trusted = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("trust")
        .arg(&run.project)
        .env("PI_CODING_AGENT_DIR", &run.agent)
        .env("HOME", &run.home)
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{trusted:?}");
    // (`dash_name` is left out here: its tools would have `dash-name`'s names.)
    let names = ["fix", "tuned", "unset", "dash-name", "ghost", "local"];

    let pi = Command::new(pi16())
        .args(["mcp", "list"])
        .current_dir(&run.project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &run.home)
        .env("PI_CODING_AGENT_DIR", &run.agent)
        .env("PI_OFFLINE", "1")
        .output()
        .unwrap();
    let listed =
        String::from_utf8_lossy(&pi.stdout).to_string() + &String::from_utf8_lossy(&pi.stderr);
    let pi_connected: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| {
            listed
                .lines()
                .any(|l| l.starts_with(&format!("{name}: connected")))
        })
        .collect();
    // The entries pi reports as configuration errors, by the name its message quotes.
    let pi_invalid: Vec<&str> = ["bad name", "dash_name", "ghost", "fix"]
        .into_iter()
        .filter(|name| {
            listed
                .lines()
                .any(|l| l.starts_with("config error:") && l.contains(&format!("\"{name}\"")))
        })
        .collect();

    let calls: Vec<(String, Value)> = names
        .iter()
        .map(|name| {
            (
                format!("mcp__{}__add", name.replace('-', "_")),
                json!({"a": 1, "b": 1}),
            )
        })
        .collect();
    let calls: Vec<(&str, Value)> = calls.iter().map(|(n, a)| (n.as_str(), a.clone())).collect();
    let out = run.run(&calls, "--approve", &[]);
    let tandem_connected: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| {
            let tool = format!("mcp__{}__add", name.replace('-', "_"));
            out.results.iter().any(|(n, error, _)| *n == tool && !error)
        })
        .collect();
    let tandem_invalid: Vec<&str> = ["bad name", "dash_name", "ghost", "fix"]
        .into_iter()
        .filter(|name| {
            !out.lines_with(&[&format!("mcpServers.{name}: ")])
                .is_empty()
        })
        .collect();

    assert_eq!(
        pi_connected,
        ["fix", "dash-name", "local"],
        "pi 1.6 said:\n{listed}"
    );
    assert_eq!(tandem_connected, pi_connected, "{}", out.stderr);
    assert_eq!(
        pi_invalid,
        ["bad name", "dash_name", "ghost", "fix"],
        "pi 1.6 said:\n{listed}"
    );
    assert_eq!(tandem_invalid, pi_invalid, "{}", out.stderr);
}

#[test]
fn home_and_relative_paths_resolve_like_pi() {
    let run = Run::new();
    std::fs::create_dir_all(run.home.join("work")).unwrap();
    std::fs::create_dir_all(run.project.join("sub")).unwrap();
    std::os::unix::fs::symlink(fixtures().join("server.mjs"), run.home.join("fixture.mjs"))
        .unwrap();
    run.user_mcp(json!({
        "home": {"command": "node", "args": ["~/fixture.mjs"], "cwd": "~/work"},
        "rel": {"command": "node", "args": [fixtures().join("server.mjs")], "cwd": "sub"},
        "plain": {"command": "node", "args": [fixtures().join("server.mjs")]},
    }));
    let calls = [
        ("mcp__home__read_cwd", json!({})),
        ("mcp__rel__read_cwd", json!({})),
        ("mcp__plain__read_cwd", json!({})),
    ];
    let out = run.run(&calls, "--approve", &[]);
    let canonical = |p: PathBuf| p.canonicalize().unwrap().display().to_string();
    assert_eq!(
        out.ok("mcp__home__read_cwd"),
        canonical(run.home.join("work"))
    );
    assert_eq!(
        out.ok("mcp__rel__read_cwd"),
        canonical(run.project.join("sub"))
    );
    assert_eq!(
        out.ok("mcp__plain__read_cwd"),
        canonical(run.project.clone())
    );
}

/// Issue 29: a server that writes hundreds of megabytes to stderr. What it writes is handed on
/// to Tandem's stderr only up to a budget, then summarised (one line saying more is not shown,
/// one counting it at the end), and its calls still work; the escapes in it are stand-ins.
#[test]
fn a_servers_flood_of_stderr_is_capped_and_summarised() {
    let run = Run::new();
    // 30 MB of 100-character lines on stderr, an escape sequence first, then the fixture.
    let script = format!(
        "printf 'flood \\033]0;title\\007 starts\\n' >&2; \
         head -c 30000000 /dev/zero | tr '\\0' x | fold -w 100 >&2; \
         exec node '{}'",
        fixtures().join("server.mjs").display()
    );
    run.user_mcp(json!({"noisy": {"command": "sh", "args": ["-c", script]}}));
    let out = run.run(
        &[("mcp__noisy__add", json!({"a": 2, "b": 3}))],
        "--approve",
        &[],
    );
    assert_eq!(out.ok("mcp__noisy__add"), "5");
    let noisy: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("[mcp noisy]"))
        .collect();
    let shown: usize = noisy.iter().map(|l| l.len() + 1).sum();
    assert!(
        shown < 200 * 1024,
        "{shown} bytes of the server's stderr were copied"
    );
    assert!(
        noisy[0].contains("flood \u{241b}]0;title\u{2407} starts"),
        "{:?}",
        noisy[0]
    );
    assert!(
        noisy.iter().any(|l| l.contains("more stderr is not shown")),
        "{noisy:?}"
    );
    assert!(
        noisy
            .iter()
            .any(|l| l.contains("more lines") && l.contains("were not shown")),
        "{:?}",
        &noisy[noisy.len().saturating_sub(3)..]
    );
}
