//! MCP (Model Context Protocol) client: the tools of stdio and streamable-HTTP MCP servers,
//! offered to the agent as ordinary [`AgentTool`]s.
//!
//! The servers come from pi 1.6's mcp.json files (and the deprecated settings.json
//! `mcpServers`), read as plain data by tandem-coding (a project's only once the folder is
//! trusted), and, for ACP, from `session/new`. [`McpTools::connect`] starts them all at once
//! (`${VAR}`/`!command` values resolved, spawn or HTTP connect, MCP `initialize`,
//! `tools/list`, under one deadline per server); a server that cannot start is left out with
//! a warning that names it and says why, never an error. Each of its tools becomes
//! `mcp__<server>__<tool>` ([`names`]), unless its `exposure` is `hidden`; a call is a
//! `tools/call` bounded by the server's `timeout` whose result is converted to the model's
//! content ([`tool`]). pi's `codemode` and `deferred` exposures need tools Tandem does not have
//! (codemode, tool_search): such tools are declared directly, with one warning per server.
//! HTTP goes through rmcp's streamable-HTTP transport on the workspace's reqwest ([`http`]).
//! Servers that offer resources (and are not `hidden`) are reached through pi 1.6's three
//! resource tools ([`resources`]).
//!
//! Tandem spawns the processes itself ([`connection`]) rather than through rmcp's child-process
//! transport: each server runs in its own process group so that stopping it also stops what it
//! started (`npx` and its node), its stderr is forwarded to ours with the server's name (never
//! to stdout, the protocol channel of LSP, ACP and JSON mode), and its exit is watched so that
//! a server dying mid-call ends the call with an error naming it; the next call starts it
//! again ([`server`]). Dropping [`McpTools`] kills
//! the servers; [`McpTools::shutdown`] first asks them to stop (stdin closed, then SIGTERM).

mod connection;
mod http;
mod names;
mod resources;
mod server;
mod tool;

#[cfg(test)]
mod tests;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tandem_agent::AgentTool;
use tandem_coding::settings::{LoadedSettings, McpExposure, McpServer};

use connection::Connection;
use server::Server;

/// How long a server may take to start, answer `initialize` and list its tools, when its
/// `timeout` does not say.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one request (a tool call) may take when the server's `timeout` does not say (pi's
/// default).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// One MCP server to start.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerConfig {
    /// The server's name: in tool names, warnings and errors.
    pub name: String,
    /// How to reach it, and its options.
    pub server: McpServer,
    /// Whether `env` and `headers` values are templates (`${VAR}`, `!command`; mcp.json's) or
    /// literal values (an ACP client's).
    pub templates: bool,
}

/// The enabled servers of the settings and mcp.json files, in name order.
pub fn servers_from_settings(settings: &LoadedSettings) -> Vec<McpServerConfig> {
    settings
        .enabled_mcp_servers()
        .map(|(name, server)| McpServerConfig {
            name: name.to_string(),
            server: server.clone(),
            templates: true,
        })
        .collect()
}

/// Servers from settings plus `extra` (ACP session/new gives some), connected. An `extra`
/// server replaces a settings server of the same name.
pub async fn connect_for_session(
    settings: &LoadedSettings,
    extra: &[McpServerConfig],
    cwd: &Path,
) -> McpTools {
    let mut servers = servers_from_settings(settings);
    servers.retain(|server| !extra.iter().any(|e| e.name == server.name));
    servers.extend(extra.iter().cloned());
    McpTools::connect(&servers, cwd).await
}

/// The one warning for a server whose tools are set to pi's `codemode` or `deferred`: Tandem has
/// neither codemode nor tool_search, so it declares them directly.
fn indirect_warning(server: &str, tools: &[(String, McpExposure)]) -> String {
    let mut values: Vec<&str> = tools.iter().map(|(_, e)| e.as_str()).collect();
    values.dedup();
    values.sort_unstable();
    values.dedup();
    let quoted: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
    let names: Vec<&str> = tools.iter().map(|(t, _)| t.as_str()).collect();
    format!(
        "MCP server `{server}`: exposure {} is not supported by Tandem (it needs pi's codemode \
         or tool_search); its tools {} are offered to the model directly, as with \"direct\". \
         Set \"exposure\" to \"direct\" or \"hidden\" to choose explicitly.",
        quoted.join(" and "),
        names.join(", ")
    )
}

/// Live connections to MCP servers and their tools. Dropping it kills the servers;
/// [`McpTools::shutdown`] closes them politely first.
#[derive(Default)]
pub struct McpTools {
    servers: Vec<Arc<Server>>,
    tools: Vec<Arc<dyn AgentTool>>,
    warnings: Vec<String>,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let servers: Vec<&str> = self.servers.iter().map(|c| c.name()).collect();
        let tools: Vec<&str> = self.tools.iter().map(|t| t.name()).collect();
        f.debug_struct("McpTools")
            .field("servers", &servers)
            .field("tools", &tools)
            .field("warnings", &self.warnings)
            .finish()
    }
}

impl Drop for McpTools {
    /// Kills the servers, even while calls are in flight (each call holds its server's
    /// connection until it ends).
    fn drop(&mut self) {
        for server in &self.servers {
            server.kill();
        }
    }
}

impl McpTools {
    /// Connects to every server concurrently (spawn, MCP initialize, tools/list, 30 s each). A
    /// server that fails is skipped with a warning naming it and saying why.
    pub async fn connect(servers: &[McpServerConfig], cwd: &Path) -> McpTools {
        McpTools::connect_within(servers, cwd, CONNECT_TIMEOUT).await
    }

    /// [`McpTools::connect`] with another deadline per server.
    pub(crate) async fn connect_within(
        servers: &[McpServerConfig],
        cwd: &Path,
        timeout: Duration,
    ) -> McpTools {
        let mut warnings = Vec::new();
        let mut unique = Vec::new();
        for server in servers {
            if unique
                .iter()
                .any(|s: &&McpServerConfig| s.name == server.name)
            {
                warnings.push(format!(
                    "MCP server `{}` is configured twice; only the first is started.",
                    server.name
                ));
            } else {
                unique.push(server);
            }
        }
        // One task per server: they start concurrently, and a panic in one (a bug) costs that
        // server only.
        let mut set = tokio::task::JoinSet::new();
        for (index, server) in unique.iter().enumerate() {
            let server = (*server).clone();
            let cwd = cwd.to_path_buf();
            set.spawn(async move { (index, Connection::start(&server, &cwd, timeout).await) });
        }
        let mut results: Vec<_> = unique.iter().map(|_| None).collect();
        while let Some(joined) = set.join_next().await {
            if let Ok((index, result)) = joined {
                results[index] = Some(result);
            }
        }
        let mut started = Vec::new();
        let mut listed = Vec::new();
        for (server, result) in unique.iter().zip(results) {
            match result {
                Some(Ok((connection, server_tools))) => {
                    let server = Arc::new(Server::new(
                        (*server).clone(),
                        cwd.to_path_buf(),
                        connection,
                    ));
                    listed.push((server.clone(), server_tools));
                    started.push(server);
                }
                Some(Err(warning)) => warnings.push(warning),
                None => warnings.push(format!(
                    "MCP server `{}` was not started: Tandem failed while connecting to it (a \
                     bug; please report it).",
                    server.name
                )),
            }
        }
        let mut taken = names::Taken::default();
        let mut tools: Vec<Arc<dyn AgentTool>> = Vec::new();
        for (server, server_tools) in listed {
            let Some(config) = unique.iter().find(|s| s.name == server.name()) else {
                continue;
            };
            let tool_names: Vec<&str> = server_tools.iter().map(|t| t.name.as_ref()).collect();
            let names = taken.claim_server(server.name(), &tool_names);
            let mut indirect: Vec<(String, McpExposure)> = Vec::new();
            for (listed_tool, name) in server_tools.into_iter().zip(names) {
                match config.server.tool_exposure(&listed_tool.name) {
                    Some(McpExposure::Hidden) => continue,
                    Some(exposure @ (McpExposure::Codemode | McpExposure::Deferred)) => {
                        indirect.push((listed_tool.name.to_string(), exposure));
                    }
                    Some(McpExposure::Direct) | None => {}
                }
                tools.push(Arc::new(tool::McpTool::new(name, &server, listed_tool)));
            }
            if !indirect.is_empty() {
                warnings.push(indirect_warning(server.name(), &indirect));
            }
        }
        // pi 1.6's resource tools reach every server that offers resources and is not hidden.
        let with_resources: Vec<Arc<Server>> = started
            .iter()
            .filter(|server| server.current().offers_resources())
            .filter(|server| {
                unique.iter().any(|config| {
                    config.name == server.name()
                        && config.server.exposure != Some(McpExposure::Hidden)
                })
            })
            .cloned()
            .collect();
        tools.extend(resources::tools(&with_resources));
        McpTools {
            servers: started,
            tools,
            warnings,
        }
    }

    /// The servers' tools, ready for the agent (`hidden` ones left out).
    pub fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.tools.clone()
    }

    /// Why some servers were left out (one line each); empty when all started.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Stops every server: closes its stdin and waits, then SIGTERM, then SIGKILL. Calls still
    /// running end with an error.
    pub async fn shutdown(&self) {
        let mut set = tokio::task::JoinSet::new();
        for server in &self.servers {
            let server = server.clone();
            set.spawn(async move { server.shutdown().await });
        }
        while set.join_next().await.is_some() {}
    }

    /// The process ids of the connected servers (for tests).
    #[cfg(test)]
    pub(crate) fn pids(&self) -> Vec<u32> {
        self.servers
            .iter()
            .filter_map(|s| s.current().pid())
            .collect()
    }

    /// The last stderr lines of each connected server (for tests).
    #[cfg(test)]
    pub(crate) fn stderr_lines(&self) -> Vec<String> {
        self.servers
            .iter()
            .flat_map(|s| s.current().stderr_lines())
            .collect()
    }
}
