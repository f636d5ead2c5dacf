//! `workspace/executeCommand` commands: what Tandem's code actions run.
//!
//! Listing code actions never calls the model; each action carries one of these commands with a
//! single JSON object as its only argument. Running it starts a run (reported with work-done
//! progress, `tandem/event`s for clients that want them, and a closing `window/showMessage`), so
//! clients without any Tandem-specific code (Helix) still get the whole loop.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::errors::TandemError;
use crate::ids::SessionId;
use crate::params;
use crate::position::Range;

/// Ask the agent to fix one diagnostic.
pub const FIX_DIAGNOSTIC: &str = "tandem.fixDiagnostic";
/// Ask the agent to explain a selection or symbol.
pub const EXPLAIN: &str = "tandem.explain";
/// Ask the agent to write documentation comments for a selection or symbol.
pub const DOCUMENT: &str = "tandem.document";
/// Ask the agent to write tests for a selection or symbol.
pub const WRITE_TESTS: &str = "tandem.writeTests";
/// Abort a run.
pub const ABORT: &str = "tandem.abort";

/// Every command, for `executeCommandProvider.commands`.
pub const ALL: [&str; 5] = [FIX_DIAGNOSTIC, EXPLAIN, DOCUMENT, WRITE_TESTS, ABORT];

/// The code action kind of "Ask Tandem to fix: ..." (one per diagnostic in range).
pub const KIND_FIX: &str = "quickfix";
/// The code action kind of explain / document / write tests.
pub const KIND_ASSIST: &str = "refactor.tandem";

/// `tandem.fixDiagnostic`'s argument: the diagnostic, as the client reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FixDiagnosticArgs {
    /// The document.
    pub uri: String,
    /// The diagnostic's range.
    pub range: Range,
    /// The diagnostic's message.
    pub message: String,
    /// LSP severity (1 error, 2 warning, 3 information, 4 hint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<u8>,
    /// Who reported it (`rustc`, `eslint`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Its code (a number or a string, as in LSP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Value>,
    /// The session to run in; absent → a new session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionId>,
}

/// The argument of explain / document / write tests: what to act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetArgs {
    /// The document.
    pub uri: String,
    /// The selection, or the enclosing symbol's range.
    pub range: Range,
    /// The enclosing symbol's name, when known (shown in titles and progress).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// The session to run in; absent → a new session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionId>,
}

/// `tandem.abort`'s argument.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortArgs {
    /// The session to stop; absent → every running session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionId>,
}

/// The result of the commands that start a run: the session it runs in. (`tandem.abort`
/// answers `null`.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandResult {
    /// The session.
    pub session: SessionId,
}

/// A parsed command with its argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `tandem.fixDiagnostic`.
    FixDiagnostic(FixDiagnosticArgs),
    /// `tandem.explain`.
    Explain(TargetArgs),
    /// `tandem.document`.
    Document(TargetArgs),
    /// `tandem.writeTests`.
    WriteTests(TargetArgs),
    /// `tandem.abort`.
    Abort(AbortArgs),
}

impl Command {
    /// Parses `workspace/executeCommand` params: the command name and its `arguments` (one
    /// object; `tandem.abort` also takes none). Errors are -32602 naming the field, e.g.
    /// `arguments[0].range`.
    pub fn parse(command: &str, arguments: &[Value]) -> Result<Command, TandemError> {
        fn arg<T: serde::de::DeserializeOwned>(
            command: &str,
            arguments: &[Value],
        ) -> Result<T, TandemError> {
            let first = arguments.first().cloned().unwrap_or(Value::Null);
            let first = match first {
                Value::Null => Value::Object(Default::default()),
                v => v,
            };
            params::from_value(first).map_err(|e| {
                let e = e.within("arguments[0]");
                TandemError::invalid_params(
                    &format!("workspace/executeCommand {command}"),
                    e.field.as_deref(),
                    &e,
                )
            })
        }
        Ok(match command {
            FIX_DIAGNOSTIC => Command::FixDiagnostic(arg(command, arguments)?),
            EXPLAIN => Command::Explain(arg(command, arguments)?),
            DOCUMENT => Command::Document(arg(command, arguments)?),
            WRITE_TESTS => Command::WriteTests(arg(command, arguments)?),
            ABORT => Command::Abort(arg(command, arguments)?),
            other => {
                return Err(TandemError::invalid_params(
                    "workspace/executeCommand",
                    Some("command"),
                    format_args!("unknown command `{other}`; Tandem's are {}", ALL.join(", ")),
                ))
            }
        })
    }

    /// The command's name.
    pub fn name(&self) -> &'static str {
        match self {
            Command::FixDiagnostic(_) => FIX_DIAGNOSTIC,
            Command::Explain(_) => EXPLAIN,
            Command::Document(_) => DOCUMENT,
            Command::WriteTests(_) => WRITE_TESTS,
            Command::Abort(_) => ABORT,
        }
    }

    /// The `arguments` array to put in an LSP `Command`.
    pub fn arguments(&self) -> Vec<Value> {
        let v = match self {
            Command::FixDiagnostic(a) => serde_json::to_value(a),
            Command::Explain(a) | Command::Document(a) | Command::WriteTests(a) => {
                serde_json::to_value(a)
            }
            Command::Abort(a) => serde_json::to_value(a),
        };
        // Serializing these plain structs cannot fail; an empty list is a safe fallback.
        v.map(|v| vec![v]).unwrap_or_default()
    }

    /// The code action (and progress) title: "Ask Tandem to fix: `first line of the message`",
    /// "Ask Tandem to explain `name`", ...
    pub fn title(&self) -> String {
        let target = |a: &TargetArgs, what: &str| match &a.symbol {
            Some(s) => format!("Ask Tandem to {what} `{s}`"),
            None => format!("Ask Tandem to {what} the selection"),
        };
        match self {
            Command::FixDiagnostic(a) => format!("Ask Tandem to fix: {}", short(&a.message, 80)),
            Command::Explain(a) => target(a, "explain"),
            Command::Document(a) => target(a, "document"),
            Command::WriteTests(a) => target(a, "write tests for"),
            Command::Abort(_) => "Stop Tandem".to_string(),
        }
    }

    /// The code action kind the command is offered under (`None` for `tandem.abort`).
    pub fn code_action_kind(&self) -> Option<&'static str> {
        match self {
            Command::FixDiagnostic(_) => Some(KIND_FIX),
            Command::Explain(_) | Command::Document(_) | Command::WriteTests(_) => {
                Some(KIND_ASSIST)
            }
            Command::Abort(_) => None,
        }
    }
}

/// The first line of `text`, at most `max` characters, with an ellipsis when cut.
fn short(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("").trim_end();
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max || text.trim_end().lines().nth(1).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
