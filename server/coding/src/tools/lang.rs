//! The language tools: `diagnostics`, `definition`, `references`, `symbols`, `hover` and
//! `rename`, answered by the session's [`LanguageIntel`] (the editor's language servers, or
//! Tandem's own).
//!
//! Positions in arguments and results are what the read tool shows: one-based lines, one-based
//! columns in characters of the document as the workspace has it (the editor's buffer when
//! open). Paths are relative to the working directory. A location's line is quoted when the
//! file is inside the workspace (a file elsewhere — a library's stubs — is named, not read:
//! reading it is the read tool's business, with its question). Long answers are cut like pi's
//! tools (2000 lines or 50 KB). `rename` proposes its edit of every file through the
//! workspace's one confirmed edit ([`crate::workspace::Workspace::propose_set`]); each file is
//! checked like an edit's path (outside the workspace or protected: asked).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};

use super::args::{parse, AtArgs, DiagnosticsArgs, SymbolsArgs};
use super::truncate::{format_size, truncate_head, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};
use crate::calls::ProposedChange;
use crate::env::ToolEnv;
use crate::intel::report::{self, count};
use crate::intel::{Diagnostic, Document, LanguageIntel, Location, Pos, Severity, Symbol};
use crate::paths::{self, Access};
use crate::workspace::{read_text, ChangeOutcome, ChangeSet, FileChange, TextEdit};

/// Locations listed at most (references, workspace symbols).
const MAX_LOCATIONS: usize = 200;
/// The longest quoted source line, in characters.
const QUOTE_CHARS: usize = 200;

/// Which language tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// `diagnostics`.
    Diagnostics,
    /// `definition`.
    Definition,
    /// `references`.
    References,
    /// `symbols`.
    Symbols,
    /// `hover`.
    Hover,
    /// `rename`.
    Rename,
}

impl Which {
    /// The tool called `name`.
    pub fn named(name: &str) -> Option<Which> {
        Some(match name {
            "diagnostics" => Which::Diagnostics,
            "definition" => Which::Definition,
            "references" => Which::References,
            "symbols" => Which::Symbols,
            "hover" => Which::Hover,
            "rename" => Which::Rename,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Which::Diagnostics => "diagnostics",
            Which::Definition => "definition",
            Which::References => "references",
            Which::Symbols => "symbols",
            Which::Hover => "hover",
            Which::Rename => "rename",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Which::Diagnostics => {
                "List the errors and warnings the language servers report (type errors, lint \
                 findings), for a file, a folder, or every file they know of. Lines are \
                 path:line:column: severity [source code] message."
            }
            Which::Definition => {
                "Find where the symbol at a position is defined, using the language servers. \
                 line and column are 1-based, as the read tool numbers lines; put the column on \
                 the symbol's name."
            }
            Which::References => {
                "Find every use of the symbol at a position across the project, using the \
                 language servers (more precise than grep: no matches in strings or other \
                 symbols with the same name). line and column are 1-based."
            }
            Which::Symbols => {
                "Outline a file (its classes, functions, methods… with their lines), or search \
                 the whole project for symbols by name (query without path)."
            }
            Which::Hover => {
                "Show the language server's information about the symbol at a position: its \
                 type, signature and documentation. line and column are 1-based."
            }
            Which::Rename => {
                "Rename the symbol at a position everywhere it is used, using the language \
                 servers; the change to every file is proposed as one edit. line and column \
                 are 1-based; put the column on the symbol's name."
            }
        }
    }

    fn schema(self) -> Value {
        let at = |extra: Value| {
            let mut properties = json!({
                "path": {"type": "string", "description": "The file (relative or absolute)"},
                "line": {"type": "number", "description": "Line number (1-based)"},
                "column": {"type": "number", "description": "Column (1-based, in characters), on the symbol"},
            });
            let mut required = vec!["path", "line", "column"];
            if let (Some(p), Value::Object(add)) = (properties.as_object_mut(), extra) {
                for (k, v) in add {
                    if k == "newName" {
                        required.push("newName");
                    }
                    p.insert(k, v);
                }
            }
            json!({"type": "object", "properties": properties, "required": required})
        };
        match self {
            Which::Diagnostics => json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "A file or folder (default: every file the language servers report on)"},
                    "severity": {"type": "string", "enum": ["error", "warning", "all"], "description": "error: errors only; warning (default): errors and warnings; all: hints and information too"},
                },
            }),
            Which::Definition | Which::Hover => at(json!({})),
            Which::References => at(json!({
                "includeDeclaration": {"type": "boolean", "description": "Count the declaration too (default: false)"},
            })),
            Which::Rename => at(json!({
                "newName": {"type": "string", "description": "The new name"},
            })),
            Which::Symbols => json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "A file: list its outline"},
                    "query": {"type": "string", "description": "A name to look for (in the file with path, else in the whole project)"},
                },
            }),
        }
    }
}

/// One language tool.
pub struct LanguageTool {
    env: Arc<ToolEnv>,
    which: Which,
    schema: Value,
}

impl LanguageTool {
    /// The tool `which` over `env`.
    pub fn new(env: Arc<ToolEnv>, which: Which) -> Self {
        LanguageTool {
            env,
            which,
            schema: which.schema(),
        }
    }
}

impl AgentTool for LanguageTool {
    fn name(&self) -> &str {
        self.which.name()
    }
    fn label(&self) -> &str {
        self.which.name()
    }
    fn description(&self) -> &str {
        self.which.description()
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let cancel = call.cancel.clone();
            tokio::select! {
                biased;
                _ = cancel.cancelled() => Err(super::aborted()),
                result = self.run(call) => result,
            }
        })
    }
}

impl LanguageTool {
    async fn run(&self, call: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let intel = self.env.intel.clone().ok_or_else(|| {
            ToolError::new(format!(
                "{} is not available: no language server answers in this session",
                self.which.name()
            ))
        })?;
        let tool = Run {
            env: &self.env,
            intel: &*intel,
            call: &call,
            texts: HashMap::new(),
        };
        match self.which {
            Which::Diagnostics => {
                tool.diagnostics(parse("diagnostics", call.args.clone())?)
                    .await
            }
            Which::Symbols => tool.symbols(parse("symbols", call.args.clone())?).await,
            which => {
                let args: AtArgs = parse(which.name(), call.args.clone())?;
                tool.at(which, args).await
            }
        }
    }
}

/// One call's work, with the texts of the files it quotes.
struct Run<'a> {
    env: &'a ToolEnv,
    intel: &'a dyn LanguageIntel,
    call: &'a ToolInvocation,
    texts: HashMap<PathBuf, Option<String>>,
}

fn failed(what: &str, source: &str, e: impl std::fmt::Display) -> ToolError {
    ToolError::new(format!("{what} failed ({source}): {e}"))
}

impl Run<'_> {
    /// The document `raw` names, as the workspace has it (the editor's buffer when open).
    async fn document(&self, raw: &str, access: Access) -> Result<Document, ToolError> {
        let resolved = self.env.resolve(&self.call.call_id, raw, access).await?;
        let text = read_text(&*self.env.workspace, &resolved.absolute)
            .await
            .map_err(|e| ToolError::new(format!("Could not read {raw}: {e}")))?;
        Ok(Document {
            path: resolved.absolute,
            text,
        })
    }

    /// The text of a file a result names, when it is inside the workspace (cached).
    async fn text_of(&mut self, path: &Path) -> Option<String> {
        if let Some(known) = self.texts.get(path) {
            return known.clone();
        }
        let inside = paths::resolve(
            &path.to_string_lossy(),
            &self.env.cwd,
            self.env.workspace.roots(),
        )
        .map(|r| r.inside)
        .unwrap_or(false);
        let text = if inside {
            read_text(&*self.env.workspace, path).await.ok()
        } else {
            None
        };
        self.texts.insert(path.to_path_buf(), text.clone());
        text
    }

    /// `path:line:column` of a location, with its line quoted when the file is readable.
    async fn place(&mut self, location: &Location) -> String {
        let text = self.text_of(&location.path).await;
        let (line, column) = location.span.start.to_user(text.as_deref());
        let shown = self.env.display_path(&location.path);
        let quote = text
            .as_deref()
            .and_then(|t| t.split('\n').nth(location.span.start.line as usize))
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .map(|l| format!(": {}", cut(l, QUOTE_CHARS)))
            .unwrap_or_default();
        format!("{shown}:{line}:{column}{quote}")
    }

    async fn at(mut self, which: Which, args: AtArgs) -> Result<ToolOutput, ToolError> {
        let access = if which == Which::Rename {
            Access::Write
        } else {
            Access::Read
        };
        let document = self.document(&args.path, access).await?;
        let (line, column) = (user_number(args.line), user_number(args.column));
        let pos = Pos::from_user(&document.text, line, column).ok_or_else(|| {
            ToolError::new(format!(
                "Line {line} is past the end of {} ({} lines)",
                args.path,
                document.text.split('\n').count()
            ))
        })?;
        let at = format!("{}:{line}:{column}", self.env.display_path(&document.path));
        let source = self.intel.label().to_string();
        self.texts
            .insert(document.path.clone(), Some(document.text.clone()));
        match which {
            Which::Definition => {
                let found = self
                    .intel
                    .definition(document, pos)
                    .await
                    .map_err(|e| failed("Finding the definition", &source, e))?;
                if found.is_empty() {
                    return Ok(text(format!("No definition found for the symbol at {at}.")));
                }
                let mut lines = Vec::new();
                for location in dedup(found) {
                    lines.push(self.place(&location).await);
                }
                Ok(text(lines.join("\n")))
            }
            Which::References => {
                let found = self
                    .intel
                    .references(document, pos, args.include_declaration.unwrap_or(false))
                    .await
                    .map_err(|e| failed("Finding references", &source, e))?;
                if found.is_empty() {
                    return Ok(text(format!("No references found for the symbol at {at}.")));
                }
                let found = dedup(found);
                let files = found
                    .iter()
                    .map(|l| &l.path)
                    .collect::<std::collections::BTreeSet<_>>()
                    .len();
                let mut out = vec![format!(
                    "{} in {}:",
                    count(found.len(), "reference"),
                    count(files, "file")
                )];
                for location in found.iter().take(MAX_LOCATIONS) {
                    out.push(self.place(location).await);
                }
                if found.len() > MAX_LOCATIONS {
                    out.push(format!("[{} more not shown]", found.len() - MAX_LOCATIONS));
                }
                Ok(limited(out.join("\n")))
            }
            Which::Hover => {
                let found = self
                    .intel
                    .hover(document, pos)
                    .await
                    .map_err(|e| failed("Hover", &source, e))?;
                match found.filter(|t| !t.trim().is_empty()) {
                    Some(info) => Ok(limited(info.trim().to_string())),
                    None => Ok(text(format!("No information for the symbol at {at}."))),
                }
            }
            Which::Rename => {
                let new_name = args
                    .new_name
                    .filter(|n| !n.trim().is_empty())
                    .ok_or_else(|| ToolError::new("rename needs a non-empty newName"))?;
                self.rename(document, pos, new_name, at, source).await
            }
            Which::Diagnostics | Which::Symbols => unreachable!("not a positional tool"),
        }
    }

    async fn rename(
        self,
        document: Document,
        pos: Pos,
        new_name: String,
        at: String,
        source: String,
    ) -> Result<ToolOutput, ToolError> {
        let old_name = word_at(&document.text, pos);
        let files = self
            .intel
            .rename(document, pos, new_name.clone())
            .await
            .map_err(|e| failed("Renaming", &source, e))?;
        // One entry per file, in path order: the files are locked in that order, so two
        // renames never wait on each other.
        let mut by_path: BTreeMap<PathBuf, Vec<(crate::intel::Span, String)>> = BTreeMap::new();
        for file in files {
            by_path.entry(file.path).or_default().extend(file.edits);
        }
        let files: Vec<crate::intel::FileEdits> = by_path
            .into_iter()
            .filter(|(_, edits)| !edits.is_empty())
            .map(|(path, edits)| crate::intel::FileEdits { path, edits })
            .collect();
        if files.is_empty() {
            return Err(ToolError::new(format!(
                "The language server found nothing to rename at {at}"
            )));
        }
        let mut set = ChangeSet::default();
        let mut shown = Vec::new();
        let mut edits_total = 0;
        let mut diff = String::new();
        let mut locks = Vec::new();
        for file in &files {
            let raw = file.path.to_string_lossy();
            let resolved = self
                .env
                .resolve(&self.call.call_id, &raw, Access::Write)
                .await?;
            locks.push(self.env.mutations.lock(&resolved.real).await);
            let old = read_text(&*self.env.workspace, &resolved.absolute)
                .await
                .map_err(|e| ToolError::new(format!("Could not read {raw}: {e}")))?;
            let mut edits: Vec<TextEdit> = file
                .edits
                .iter()
                .map(|(span, new_text)| TextEdit {
                    range: span.start.offset(&old)..span.end.offset(&old),
                    new_text: new_text.clone(),
                })
                .collect();
            edits.sort_by_key(|e| (e.range.start, e.range.end));
            let shown_path = self.env.display_path(&resolved.absolute);
            if edits.windows(2).any(|w| w[0].range.end > w[1].range.start) {
                return Err(ToolError::new(format!(
                    "The language server's rename edits overlap in {shown_path}; nothing was changed"
                )));
            }
            // The server computed its edits on its own view of the file; if that is not the
            // text here (an unsaved buffer it never saw), the edits would land on other text.
            if let Some(old_name) = &old_name {
                if edits.iter().any(|e| {
                    !e.range.is_empty() && !old[e.range.clone()].contains(old_name.as_str())
                }) {
                    return Err(ToolError::new(format!(
                        "The language server's view of {shown_path} differs from the text here \
                         (unsaved changes it has not seen?); nothing was changed. Save the file \
                         and try again, or use edit."
                    )));
                }
            }
            edits_total += edits.len();
            let new_text = crate::workspace::apply_edits(&old, &edits);
            let change = FileChange {
                path: resolved.absolute.clone(),
                real: resolved.real.clone(),
                old_text: Some(old),
                new_text,
                edits,
            };
            diff.push_str(&ProposedChange::new(&change, &self.env.cwd).diff);
            shown.push(shown_path);
            set.changes.push(change);
        }
        set.changes.sort_by(|a, b| a.path.cmp(&b.path));
        let applied = set.changes.clone();
        let outcome = self
            .env
            .workspace
            .propose_set(&self.call.call_id, set)
            .await
            .map_err(|e| ToolError::new(e.to_string()))?;
        drop(locks);
        if let Some(error) = outcome.failure("the rename in", &shown.join(", ")) {
            return Err(ToolError::new(error));
        }
        if outcome == ChangeOutcome::Applied {
            for change in &applied {
                self.env.calls.applied(change);
            }
        }
        Ok(ToolOutput::text(format!(
            "Renamed {} to `{new_name}`: {} in {} ({}).",
            old_name
                .map(|n| format!("`{n}`"))
                .unwrap_or_else(|| "the symbol".into()),
            count(edits_total, "edit"),
            count(shown.len(), "file"),
            shown.join(", ")
        ))
        .with_details(json!({ "diff": diff })))
    }

    async fn symbols(mut self, args: SymbolsArgs) -> Result<ToolOutput, ToolError> {
        let source = self.intel.label().to_string();
        let query = args.query.filter(|q| !q.trim().is_empty());
        match args.path.filter(|p| !p.is_empty()) {
            Some(raw) => {
                let document = self.document(&raw, Access::Read).await?;
                let text_now = document.text.clone();
                let shown = self.env.display_path(&document.path);
                let found = self
                    .intel
                    .document_symbols(document)
                    .await
                    .map_err(|e| failed("Listing symbols", &source, e))?;
                let wanted: Vec<&Symbol> = found
                    .iter()
                    .filter(|s| {
                        query
                            .as_ref()
                            .is_none_or(|q| s.name.to_lowercase().contains(&q.to_lowercase()))
                    })
                    .collect();
                if wanted.is_empty() {
                    return Ok(text(match &query {
                        Some(q) => format!("No symbol matching `{q}` in {shown}."),
                        None => format!("No symbols in {shown}."),
                    }));
                }
                let lines: Vec<String> = wanted
                    .iter()
                    .map(|s| {
                        let (line, _) = s.location.span.start.to_user(Some(&text_now));
                        let depth = if query.is_some() { 0 } else { s.depth };
                        format!(
                            "{}{line}: {} {}{}",
                            "  ".repeat(depth as usize),
                            s.kind,
                            s.name,
                            detail(s)
                        )
                    })
                    .collect();
                Ok(limited(format!("{shown}:\n{}", lines.join("\n"))))
            }
            None => {
                let query = query.ok_or_else(|| {
                    ToolError::new(
                        "symbols needs a path (a file's outline) or a query (a name to look for)",
                    )
                })?;
                let found = self
                    .intel
                    .workspace_symbols(query.clone(), None)
                    .await
                    .map_err(|e| failed("Searching symbols", &source, e))?;
                if found.is_empty() {
                    return Ok(text(format!("No symbol matching `{query}` found.")));
                }
                let mut out = Vec::new();
                for s in found.iter().take(MAX_LOCATIONS) {
                    let text_now = self.text_of(&s.location.path).await;
                    let (line, _) = s.location.span.start.to_user(text_now.as_deref());
                    let container = s
                        .container
                        .as_deref()
                        .filter(|c| !c.is_empty())
                        .map(|c| format!(" (in {c})"))
                        .unwrap_or_default();
                    out.push(format!(
                        "{} {}{container}: {}:{line}",
                        s.kind,
                        s.name,
                        self.env.display_path(&s.location.path)
                    ));
                }
                if found.len() > MAX_LOCATIONS {
                    out.push(format!("[{} more not shown]", found.len() - MAX_LOCATIONS));
                }
                Ok(limited(out.join("\n")))
            }
        }
    }

    async fn diagnostics(mut self, args: DiagnosticsArgs) -> Result<ToolOutput, ToolError> {
        let source = self.intel.label().to_string();
        let floor = match args.severity.as_deref() {
            None | Some("warning") => Severity::Warning,
            Some("error") => Severity::Error,
            Some("all") => Severity::Hint,
            Some(other) => {
                return Err(ToolError::new(format!(
                    "severity must be error, warning or all, not `{other}`"
                )))
            }
        };
        let (files, under, what) = match args.path.filter(|p| !p.is_empty()) {
            Some(raw) => {
                let resolved = self
                    .env
                    .resolve(&self.call.call_id, &raw, Access::Read)
                    .await?;
                if resolved.real.is_dir() {
                    let shown = self.env.display_path(&resolved.absolute);
                    (None, Some(resolved.absolute), shown)
                } else {
                    let document = self.document(&raw, Access::Read).await?;
                    let shown = self.env.display_path(&document.path);
                    (Some(vec![document]), None, shown)
                }
            }
            None => (None, None, "the workspace".to_string()),
        };
        let answer = self
            .intel
            .diagnostics(files, None)
            .await
            .map_err(|e| failed("Reading diagnostics", &source, e))?;
        let config = &self.env.diagnostics;
        let unfinished = (!answer.settled).then_some(
            "\n(The language servers had not finished analyzing: this may be incomplete; ask \
             again in a moment.)",
        );
        let mut found: BTreeMap<PathBuf, Vec<Diagnostic>> = BTreeMap::new();
        let mut not_analyzed = Vec::new();
        for file in answer.files {
            if under
                .as_ref()
                .is_some_and(|dir| !file.path.starts_with(dir))
            {
                continue;
            }
            if !file.analyzed {
                not_analyzed.push(self.env.display_path(&file.path));
                continue;
            }
            let kept: Vec<Diagnostic> = file
                .diagnostics
                .into_iter()
                .filter(|d| d.severity <= floor && config.wants_source(d.source.as_deref()))
                .collect();
            if !kept.is_empty() {
                found.entry(file.path).or_default().extend(kept);
            }
        }
        if found.is_empty() {
            let mut out = format!(
                "No {} in {what} (from {source}).",
                match floor {
                    Severity::Error => "errors",
                    Severity::Warning => "errors or warnings",
                    _ => "diagnostics",
                }
            );
            if !not_analyzed.is_empty() {
                out.push_str(&format!(
                    " No language server looks at {}.",
                    not_analyzed.join(", ")
                ));
            }
            out.push_str(unfinished.unwrap_or_default());
            return Ok(text(out));
        }
        let all: Vec<&Diagnostic> = found.values().flatten().collect();
        let errors = all.iter().filter(|d| d.severity == Severity::Error).count();
        let warnings = all
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count();
        let others = all.len() - errors - warnings;
        let mut totals = vec![count(errors, "error"), count(warnings, "warning")];
        if others > 0 {
            totals.push(count(others, "other"));
        }
        let mut out = vec![format!(
            "{} in {} (from {source}):",
            totals.join(", "),
            count(found.len(), "file")
        )];
        for (path, mut diagnostics) in found {
            diagnostics.sort_by_key(|d| (d.span.start, d.severity));
            let text_now = self.text_of(&path).await;
            let shown = self.env.display_path(&path);
            for d in &diagnostics {
                out.push(report::line(&shown, text_now.as_deref(), d));
            }
        }
        if let Some(note) = unfinished {
            out[0].push_str(note);
        }
        Ok(limited(out.join("\n")))
    }
}

/// A number the model gave, as a one-based line or column (at least 1).
fn user_number(n: f64) -> u32 {
    if n.is_finite() && n >= 1.0 {
        n.min(u32::MAX as f64) as u32
    } else {
        1
    }
}

/// The identifier under `pos` in `text` (letters, digits, `_`, `$`), if any.
fn word_at(text: &str, pos: Pos) -> Option<String> {
    let at = pos.offset(text);
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let start = text[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_word(*c))
        .last()
        .map_or(at, |(i, _)| i);
    let end = text[at..]
        .char_indices()
        .find(|(_, c)| !is_word(*c))
        .map_or(text.len(), |(i, _)| at + i);
    (end > start).then(|| text[start..end].to_string())
}

fn dedup(mut locations: Vec<Location>) -> Vec<Location> {
    let mut seen = std::collections::HashSet::new();
    locations.retain(|l| seen.insert((l.path.clone(), l.span)));
    locations
}

fn detail(symbol: &Symbol) -> String {
    symbol
        .detail
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            format!(
                " — {}",
                cut(&d.split_whitespace().collect::<Vec<_>>().join(" "), 120)
            )
        })
        .unwrap_or_default()
}

fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

fn text(s: String) -> ToolOutput {
    ToolOutput::text(s)
}

/// `s` cut like pi's tools (2000 lines or 50 KB), with the notice.
fn limited(s: String) -> ToolOutput {
    let truncation = truncate_head(&s, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    if !truncation.truncated() {
        return ToolOutput::text(s);
    }
    ToolOutput::text(format!(
        "{}\n\n[Showing {} of {} lines ({} limit); narrow the request]",
        truncation.content,
        truncation.output_lines,
        truncation.total_lines,
        format_size(DEFAULT_MAX_BYTES)
    ))
}

#[cfg(test)]
#[path = "lang_tests.rs"]
mod tests;
