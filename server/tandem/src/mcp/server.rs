//! A configured MCP server across its connections: when the server dies (its process exits,
//! its HTTP connection closes), the next call starts it again, as pi 1.6 reconnects on the
//! next call, instead of leaving its tools broken until a new session.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tandem_ai::sync::lock;

use super::connection::Connection;
use super::{McpServerConfig, CONNECT_TIMEOUT};

/// One server: its configuration and the connection calls go through now.
pub(super) struct Server {
    config: McpServerConfig,
    cwd: PathBuf,
    current: Mutex<Arc<Connection>>,
    /// Held while a new connection is made, so that concurrent calls start one server.
    restarting: tokio::sync::Mutex<()>,
    /// Shut down with its session: never started again.
    closing: AtomicBool,
}

impl Server {
    pub(super) fn new(config: McpServerConfig, cwd: PathBuf, connection: Connection) -> Server {
        Server {
            config,
            cwd,
            current: Mutex::new(Arc::new(connection)),
            restarting: tokio::sync::Mutex::new(()),
            closing: AtomicBool::new(false),
        }
    }

    pub(super) fn name(&self) -> &str {
        &self.config.name
    }

    /// The connection now in use.
    pub(super) fn current(&self) -> Arc<Connection> {
        lock(&self.current).clone()
    }

    /// The connection to call through: the current one while it lives (or once the server is
    /// shut down: the call then says so), otherwise a new one, the server started again.
    /// `Err` says why it could not be started.
    pub(super) async fn connection(&self) -> Result<Arc<Connection>, String> {
        let current = self.current();
        if self.closing.load(Ordering::SeqCst) || !current.is_dead() {
            return Ok(current);
        }
        let _one_at_a_time = self.restarting.lock().await;
        // Another call may have started it meanwhile.
        let current = self.current();
        if self.closing.load(Ordering::SeqCst) || !current.is_dead() {
            return Ok(current);
        }
        let gone = current
            .death()
            .unwrap_or_else(|| "its connection closed".to_string());
        // The server's own `timeout`, when set, bounds the start instead (as at first).
        match Connection::start(&self.config, &self.cwd, CONNECT_TIMEOUT).await {
            Ok((connection, _tools)) => {
                let connection = Arc::new(connection);
                if self.closing.load(Ordering::SeqCst) {
                    // Shut down while starting: this one goes too.
                    connection.kill();
                    return Ok(current);
                }
                tracing::info!("MCP server `{}` started again ({gone})", self.config.name);
                let old = std::mem::replace(&mut *lock(&self.current), connection.clone());
                old.kill();
                Ok(connection)
            }
            Err(warning) => Err(format!(
                "MCP server `{}` stopped earlier ({gone}) and could not be started again: {warning}",
                self.config.name
            )),
        }
    }

    /// Kills the server at once (see [`Connection::kill`]); it is not started again.
    pub(super) fn kill(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.current().kill();
    }

    /// Stops the server politely (see [`Connection::shutdown`]); it is not started again.
    pub(super) async fn shutdown(&self) {
        self.closing.store(true, Ordering::SeqCst);
        // A start under way finishes first, so that its server is the one stopped.
        let _one_at_a_time = self.restarting.lock().await;
        self.current().shutdown().await;
    }
}
