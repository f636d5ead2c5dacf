//! The MCP fixture (fixtures/mcp, the official MCP TypeScript SDK, installed by
//! scripts/install-node-deps): its directory, its stdio server, and its streamable-HTTP server
//! on loopback.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// fixtures/mcp, absolute; fails naming the install script when its packages are missing.
pub fn fixtures() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/mcp");
    assert!(
        dir.join("node_modules").is_dir(),
        "fixtures/mcp/node_modules is missing: run scripts/install-node-deps"
    );
    dir.canonicalize().unwrap()
}

/// The fixture's stdio server (`node <this>`).
pub fn fixture_server() -> PathBuf {
    fixtures().join("server.mjs")
}

/// The fixture's streamable-HTTP server (http-server.mjs), stopped when dropped.
pub struct HttpFixture {
    child: Child,
    /// Where it listens: `http://127.0.0.1:<port>/mcp`.
    pub url: String,
}

impl HttpFixture {
    /// Starts it with `env` (`FIXTURE_TOKEN`, `FIXTURE_STATUS`, `FIXTURE_HANG`,
    /// `FIXTURE_ECHO_AUTH`: see the script)
    /// and waits until it listens.
    pub fn start(env: &[(&str, &str)]) -> HttpFixture {
        let mut child = Command::new("node")
            .arg(fixtures().join("http-server.mjs"))
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("listening ")
            .unwrap_or("")
            .to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "{line}");
        HttpFixture { child, url }
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
