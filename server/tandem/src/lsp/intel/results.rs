//! Standard LSP results, as the editor merged them, read into the language-intelligence types:
//! `Location` / `LocationLink`, `DocumentSymbol` (flattened, parents first, with depth and
//! container) / `SymbolInformation` / `WorkspaceSymbol`, `Hover` contents as text,
//! `WorkspaceEdit` as each file's edits, and diagnostics.
//!
//! An editor concatenates several servers' answers, so a list may mix the forms LSP allows
//! for it (a `Location` beside a `LocationLink`): each item is read by its own shape. An item
//! that is none of them fails the whole answer, with serde's words for what was wrong: a
//! broken answer is reported, not silently shortened. Ranges go through [`Columns`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;
use tandem_coding::intel::{Diagnostic, FileEdits, Location, Severity, Span, Symbol};
use tower_lsp_server::ls_types as lsp;

use super::columns::Columns;
use crate::langserver::convert;

/// Why an answer could not be read.
pub type ReadError = String;

/// `null`, one item, or a list: the items.
fn items(value: Value) -> Vec<Value> {
    match value {
        Value::Null => Vec::new(),
        Value::Array(items) => items,
        one => vec![one],
    }
}

fn read<T: DeserializeOwned>(value: Value, what: &str, index: usize) -> Result<T, ReadError> {
    serde_json::from_value(value).map_err(|e| format!("item {index} is not a {what}: {e}"))
}

/// The path of a `file:` URI; other schemes have none.
fn path_of(uri: &lsp::Uri) -> Option<PathBuf> {
    crate::uri::to_path(uri.as_str())
}

/// Keeps the first of equal items, in order.
fn dedup<T: PartialEq>(items: Vec<T>) -> Vec<T> {
    let mut kept: Vec<T> = Vec::with_capacity(items.len());
    for item in items {
        if !kept.contains(&item) {
            kept.push(item);
        }
    }
    kept
}

/// A definition or references answer: `Location`s and `LocationLink`s (their target's name,
/// `targetSelectionRange`, as a `Location` of a definition has it). Places outside `file:`
/// URIs are left out; duplicates (two servers agreeing) once.
pub async fn locations(value: Value, cols: &mut Columns<'_>) -> Result<Vec<Location>, ReadError> {
    let mut out = Vec::new();
    for (i, item) in items(value).into_iter().enumerate() {
        let (uri, range) = if item.get("targetUri").is_some() {
            let link: lsp::LocationLink = read(item, "LocationLink", i)?;
            (link.target_uri, link.target_selection_range)
        } else {
            let location: lsp::Location = read(item, "Location", i)?;
            (location.uri, location.range)
        };
        if let Some(path) = path_of(&uri) {
            let span = cols.span(&path, range).await;
            out.push(Location { path, span });
        }
    }
    Ok(dedup(out))
}

/// A document outline: `DocumentSymbol`s flattened (parents before children, with depth and
/// the parent's name as container; the location is the whole declaration) or
/// `SymbolInformation`s (depth 0, their container name), in the editor's order.
pub async fn document_symbols(
    value: Value,
    path: &Path,
    cols: &mut Columns<'_>,
) -> Result<Vec<Symbol>, ReadError> {
    let mut out = Vec::new();
    for (i, item) in items(value).into_iter().enumerate() {
        if item.get("location").is_some() {
            let info: lsp::WorkspaceSymbol = read(item, "SymbolInformation", i)?;
            if let Some(symbol) = workspace_symbol(info, cols).await {
                out.push(symbol);
            }
            continue;
        }
        let root: lsp::DocumentSymbol = read(item, "DocumentSymbol", i)?;
        // Depth first, parents before children, without recursion (an outline can be deep).
        let mut stack: Vec<(lsp::DocumentSymbol, u32, Option<String>)> = vec![(root, 0, None)];
        while let Some((symbol, depth, container)) = stack.pop() {
            let span = cols.span(path, symbol.range).await;
            for child in symbol.children.into_iter().flatten().rev() {
                stack.push((child, depth + 1, Some(symbol.name.clone())));
            }
            out.push(Symbol {
                name: symbol.name,
                kind: convert::kind(symbol.kind).to_owned(),
                detail: symbol.detail.filter(|d| !d.is_empty()),
                location: Location {
                    path: path.to_path_buf(),
                    span,
                },
                container,
                depth,
            });
        }
    }
    Ok(dedup(out))
}

/// Workspace symbols: `SymbolInformation`s or `WorkspaceSymbol`s (one whose location has no
/// range points at the file's start). Symbols outside `file:` URIs are left out.
pub async fn workspace_symbols(
    value: Value,
    cols: &mut Columns<'_>,
) -> Result<Vec<Symbol>, ReadError> {
    let mut out = Vec::new();
    for (i, item) in items(value).into_iter().enumerate() {
        let symbol: lsp::WorkspaceSymbol = read(item, "WorkspaceSymbol", i)?;
        if let Some(symbol) = workspace_symbol(symbol, cols).await {
            out.push(symbol);
        }
    }
    Ok(dedup(out))
}

async fn workspace_symbol(symbol: lsp::WorkspaceSymbol, cols: &mut Columns<'_>) -> Option<Symbol> {
    let (path, span) = match symbol.location {
        lsp::OneOf::Left(location) => {
            let path = path_of(&location.uri)?;
            let span = cols.span(&path, location.range).await;
            (path, span)
        }
        lsp::OneOf::Right(location) => (path_of(&location.uri)?, Span::default()),
    };
    Some(Symbol {
        name: symbol.name,
        kind: convert::kind(symbol.kind).to_owned(),
        detail: None,
        location: Location { path, span },
        container: symbol.container_name.filter(|c| !c.is_empty()),
        depth: 0,
    })
}

/// A hover's contents as text ([`convert::hover`]); `None` for `null` or nothing but blanks.
pub fn hover_text(value: Value) -> Result<Option<String>, ReadError> {
    if value.is_null() {
        return Ok(None);
    }
    let hover: lsp::Hover =
        serde_json::from_value(value).map_err(|e| format!("it is not a Hover: {e}"))?;
    Ok(convert::hover(Some(hover)))
}

/// A rename's `WorkspaceEdit` as each file's edits, files in path order and edits in document
/// order. `documentChanges` wins over `changes` when both are there (as LSP says for clients
/// that support them). An edit that also creates, renames or deletes files is refused: only
/// text edits can be proposed.
pub async fn workspace_edit(
    value: Value,
    cols: &mut Columns<'_>,
) -> Result<Vec<FileEdits>, ReadError> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    let edit: lsp::WorkspaceEdit =
        serde_json::from_value(value).map_err(|e| format!("it is not a WorkspaceEdit: {e}"))?;
    let mut by_file: Vec<(lsp::Uri, Vec<lsp::TextEdit>)> = Vec::new();
    match edit.document_changes {
        Some(lsp::DocumentChanges::Edits(edits)) => {
            by_file.extend(edits.into_iter().map(document_edit));
        }
        Some(lsp::DocumentChanges::Operations(operations)) => {
            for operation in operations {
                match operation {
                    lsp::DocumentChangeOperation::Edit(edit) => by_file.push(document_edit(edit)),
                    lsp::DocumentChangeOperation::Op(op) => {
                        let what = match op {
                            lsp::ResourceOp::Create(c) => format!("creates {}", c.uri.as_str()),
                            lsp::ResourceOp::Rename(r) => {
                                format!("renames {} to {}", r.old_uri.as_str(), r.new_uri.as_str())
                            }
                            lsp::ResourceOp::Delete(d) => format!("deletes {}", d.uri.as_str()),
                        };
                        return Err(format!(
                            "the rename also {what}, and only text edits can be proposed"
                        ));
                    }
                }
            }
        }
        None => by_file.extend(edit.changes.into_iter().flatten()),
    }
    let mut files: BTreeMap<PathBuf, Vec<(Span, String)>> = BTreeMap::new();
    for (uri, edits) in by_file {
        let Some(path) = path_of(&uri) else {
            return Err(format!(
                "the rename edits {}, which is not a file",
                uri.as_str()
            ));
        };
        for edit in edits {
            let span = cols.span(&path, edit.range).await;
            files
                .entry(path.clone())
                .or_default()
                .push((span, edit.new_text));
        }
    }
    Ok(files
        .into_iter()
        .map(|(path, mut edits)| {
            edits.sort_by_key(|(span, _)| (span.start, span.end));
            FileEdits { path, edits }
        })
        .collect())
}

fn document_edit(edit: lsp::TextDocumentEdit) -> (lsp::Uri, Vec<lsp::TextEdit>) {
    let edits = edit
        .edits
        .into_iter()
        .map(|e| match e {
            lsp::OneOf::Left(e) => e,
            lsp::OneOf::Right(annotated) => annotated.text_edit,
        })
        .collect();
    (edit.text_document.uri, edits)
}

/// One of the editor's diagnostics for `path`.
pub async fn diagnostic(
    d: tandem_protocol::Diagnostic,
    path: &Path,
    cols: &mut Columns<'_>,
) -> Diagnostic {
    let range = lsp::Range::new(
        lsp::Position::new(d.range.start.line, d.range.start.character),
        lsp::Position::new(d.range.end.line, d.range.end.character),
    );
    Diagnostic {
        span: cols.span(path, range).await,
        severity: severity(d.severity),
        source: d.source.filter(|s| !s.is_empty()),
        code: d.code.and_then(code_text),
        message: d.message,
    }
}

/// LSP's severity number; absent (the client decides, editors show an error) or unknown is an
/// error.
pub fn severity(number: Option<u8>) -> Severity {
    match number {
        Some(2) => Severity::Warning,
        Some(3) => Severity::Information,
        Some(4) => Severity::Hint,
        _ => Severity::Error,
    }
}

/// A diagnostic's code, a number or a string, as text.
fn code_text(code: Value) -> Option<String> {
    match code {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::String(s) => Some(s),
        // VS Code's own shape, `{value, target}`, should a client pass it through.
        Value::Object(mut o) => o.remove("value").and_then(code_text),
        other => Some(other.to_string()),
    }
}
