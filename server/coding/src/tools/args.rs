//! The built-in tools' arguments, typed: one way to read them, for the tools themselves and for
//! everything that describes a call ([`crate::meta::describe_tool_call`], the front doors).
//!
//! The structs mirror the tools' JSON schemas (pi's names, camelCase on the wire). They hold the
//! arguments as given; each tool applies pi's defaults and limits itself. The agent validates
//! (and coerces) arguments against the schema before a tool runs, so a parse error here reaches
//! the model only for what the schema cannot say.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use tandem_agent::ToolError;

pub use super::edit_match::EditRequest;

/// `read`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReadArgs {
    /// The file.
    pub path: String,
    /// The first line to show (1-based; pi cuts fractions).
    #[serde(default)]
    pub offset: Option<f64>,
    /// How many lines.
    #[serde(default)]
    pub limit: Option<f64>,
}

/// `write`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WriteArgs {
    /// The file.
    pub path: String,
    /// Its whole new content.
    pub content: String,
}

/// `edit`, after [`super::edit::EditTool`]'s `prepare_arguments` folded the older argument
/// forms (`edits` as a JSON string, a top-level `oldText` / `newText`) into `edits`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct EditArgs {
    /// The file.
    pub path: String,
    /// The replacements, in order.
    #[serde(default)]
    pub edits: Vec<EditRequest>,
}

/// `bash`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BashArgs {
    /// The command line.
    pub command: String,
    /// Seconds before the command is killed.
    #[serde(default)]
    pub timeout: Option<f64>,
}

/// `grep`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepArgs {
    /// The regular expression (or literal text with `literal`).
    pub pattern: String,
    /// Where to search (default: the working directory).
    #[serde(default)]
    pub path: Option<String>,
    /// Only files matching this glob.
    #[serde(default)]
    pub glob: Option<String>,
    /// Case-insensitive.
    #[serde(default)]
    pub ignore_case: Option<bool>,
    /// `pattern` is literal text.
    #[serde(default)]
    pub literal: Option<bool>,
    /// Lines of context around each match.
    #[serde(default)]
    pub context: Option<f64>,
    /// Most matches.
    #[serde(default)]
    pub limit: Option<f64>,
}

/// `find`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FindArgs {
    /// The glob.
    pub pattern: String,
    /// Where to look (default: the working directory).
    #[serde(default)]
    pub path: Option<String>,
    /// Most results.
    #[serde(default)]
    pub limit: Option<f64>,
}

/// `ls`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LsArgs {
    /// The directory (default: the working directory).
    #[serde(default)]
    pub path: Option<String>,
    /// Most entries.
    #[serde(default)]
    pub limit: Option<f64>,
}

/// `definition`, `references`, `hover` and `rename`: a place in a file, as the read tool
/// numbers it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AtArgs {
    /// The file.
    pub path: String,
    /// One-based line.
    pub line: f64,
    /// One-based column, in characters.
    pub column: f64,
    /// `references`: count the declaration too (default false).
    #[serde(default)]
    pub include_declaration: Option<bool>,
    /// `rename`: the new name.
    #[serde(default)]
    pub new_name: Option<String>,
}

/// `symbols`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SymbolsArgs {
    /// A file: its outline.
    #[serde(default)]
    pub path: Option<String>,
    /// A name to look for (in the file, or the whole workspace without `path`).
    #[serde(default)]
    pub query: Option<String>,
}

/// `diagnostics`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct DiagnosticsArgs {
    /// A file or folder (default: every file the language servers report on).
    #[serde(default)]
    pub path: Option<String>,
    /// `error`, `warning` (the default: errors and warnings) or `all`.
    #[serde(default)]
    pub severity: Option<String>,
}

/// A language tool's arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum LanguageArgs {
    /// `definition`, `references`, `hover`, `rename`.
    At(AtArgs),
    /// `symbols`.
    Symbols(SymbolsArgs),
    /// `diagnostics`.
    Diagnostics(DiagnosticsArgs),
}

/// A built-in tool's arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolArgs {
    /// `read`.
    Read(ReadArgs),
    /// `write`.
    Write(WriteArgs),
    /// `edit`.
    Edit(EditArgs),
    /// `bash`.
    Bash(BashArgs),
    /// `grep`.
    Grep(GrepArgs),
    /// `find`.
    Find(FindArgs),
    /// `ls`.
    Ls(LsArgs),
    /// A language tool (`diagnostics`, `definition`, `references`, `symbols`, `hover`,
    /// `rename`).
    Language(LanguageArgs),
}

impl ToolArgs {
    /// `args` of a call of `tool`; `None` for a tool that is not built in (an MCP server's),
    /// `Some(Err)` for arguments that do not fit the tool.
    pub fn parse(tool: &str, args: &Value) -> Option<Result<ToolArgs, ToolError>> {
        let value = || args.clone();
        Some(match tool {
            "read" => parse(tool, value()).map(ToolArgs::Read),
            "write" => parse(tool, value()).map(ToolArgs::Write),
            "edit" => parse(tool, value()).map(ToolArgs::Edit),
            "bash" => parse(tool, value()).map(ToolArgs::Bash),
            "grep" => parse(tool, value()).map(ToolArgs::Grep),
            "find" => parse(tool, value()).map(ToolArgs::Find),
            "ls" => parse(tool, value()).map(ToolArgs::Ls),
            "definition" | "references" | "hover" | "rename" => {
                parse(tool, value()).map(|a| ToolArgs::Language(LanguageArgs::At(a)))
            }
            "symbols" => parse(tool, value()).map(|a| ToolArgs::Language(LanguageArgs::Symbols(a))),
            "diagnostics" => {
                parse(tool, value()).map(|a| ToolArgs::Language(LanguageArgs::Diagnostics(a)))
            }
            _ => return None,
        })
    }

    /// The path argument, when the tool has one and it was given.
    pub fn path(&self) -> Option<&str> {
        match self {
            ToolArgs::Read(a) => Some(&a.path),
            ToolArgs::Write(a) => Some(&a.path),
            ToolArgs::Edit(a) => Some(&a.path),
            ToolArgs::Grep(a) => a.path.as_deref(),
            ToolArgs::Find(a) => a.path.as_deref(),
            ToolArgs::Ls(a) => a.path.as_deref(),
            ToolArgs::Language(LanguageArgs::At(a)) => Some(&a.path),
            ToolArgs::Language(LanguageArgs::Symbols(a)) => a.path.as_deref(),
            ToolArgs::Language(LanguageArgs::Diagnostics(a)) => a.path.as_deref(),
            ToolArgs::Bash(_) => None,
        }
    }
}

/// `args` of `tool` as `T`; the error names the tool and what did not fit.
pub fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args)
        .map_err(|e| ToolError::new(format!("Invalid arguments for {tool}: {e}")))
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
