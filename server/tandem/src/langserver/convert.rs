//! LSP answers (`ls_types`) as the language-intelligence types. Positions pass through
//! untouched: both are zero-based lines and UTF-16 columns (the only encoding Tandem's client
//! offers). Symbol kinds' names and hover text are also what the editor's answers are read
//! with (`lsp::intel::results`).

use std::path::PathBuf;

use tandem_coding::intel::{Diagnostic, FileEdits, Location, Pos, Severity, Span, Symbol};
use tower_lsp_server::ls_types::{
    self as lsp, DocumentChangeOperation, DocumentChanges, DocumentSymbolResponse,
    GotoDefinitionResponse, HoverContents, MarkedString, NumberOrString, OneOf, SymbolKind, Uri,
    WorkspaceEdit, WorkspaceSymbolResponse,
};

use crate::uri;

/// The path of a `file:` URI.
pub fn path(uri: &Uri) -> Option<PathBuf> {
    uri::to_path(uri.as_str())
}

/// A span.
pub fn span(range: lsp::Range) -> Span {
    Span {
        start: pos(range.start),
        end: pos(range.end),
    }
}

/// A position.
pub fn pos(p: lsp::Position) -> Pos {
    Pos {
        line: p.line,
        character: p.character,
    }
}

/// An LSP position.
pub fn position(p: Pos) -> lsp::Position {
    lsp::Position {
        line: p.line,
        character: p.character,
    }
}

/// A diagnostic (LSP's missing severity read as an error, as editors do).
pub fn diagnostic(d: lsp::Diagnostic) -> Diagnostic {
    let severity = match d.severity {
        Some(lsp::DiagnosticSeverity::WARNING) => Severity::Warning,
        Some(lsp::DiagnosticSeverity::INFORMATION) => Severity::Information,
        Some(lsp::DiagnosticSeverity::HINT) => Severity::Hint,
        _ => Severity::Error,
    };
    Diagnostic {
        span: span(d.range),
        severity,
        source: d.source,
        code: d.code.map(|c| match c {
            NumberOrString::Number(n) => n.to_string(),
            NumberOrString::String(s) => s,
        }),
        message: d.message,
    }
}

/// A location (`None` for a URI that is not a file).
pub fn location(l: lsp::Location) -> Option<Location> {
    Some(Location {
        path: path(&l.uri)?,
        span: span(l.range),
    })
}

/// A definition answer's locations (a link's target selection: the name, as editors jump to).
pub fn definition(answer: Option<GotoDefinitionResponse>) -> Vec<Location> {
    match answer {
        None => Vec::new(),
        Some(GotoDefinitionResponse::Scalar(l)) => location(l).into_iter().collect(),
        Some(GotoDefinitionResponse::Array(ls)) => ls.into_iter().filter_map(location).collect(),
        Some(GotoDefinitionResponse::Link(links)) => links
            .into_iter()
            .filter_map(|link| {
                Some(Location {
                    path: path(&link.target_uri)?,
                    span: span(link.target_selection_range),
                })
            })
            .collect(),
    }
}

/// A document's outline, depth first, parents before children.
pub fn document_symbols(answer: Option<DocumentSymbolResponse>, file: &PathBuf) -> Vec<Symbol> {
    match answer {
        None => Vec::new(),
        Some(DocumentSymbolResponse::Flat(items)) => items
            .into_iter()
            .filter_map(|s| {
                Some(Symbol {
                    name: s.name,
                    kind: kind(s.kind).to_string(),
                    detail: None,
                    location: location(s.location)?,
                    container: s.container_name,
                    depth: 0,
                })
            })
            .collect(),
        Some(DocumentSymbolResponse::Nested(items)) => {
            let mut out = Vec::new();
            nested(items, file, None, 0, &mut out);
            out
        }
    }
}

fn nested(
    items: Vec<lsp::DocumentSymbol>,
    file: &PathBuf,
    container: Option<&str>,
    depth: u32,
    out: &mut Vec<Symbol>,
) {
    for item in items {
        let name = item.name.clone();
        out.push(Symbol {
            name: item.name,
            kind: kind(item.kind).to_string(),
            detail: item.detail.filter(|d| !d.is_empty()),
            location: Location {
                path: file.clone(),
                span: span(item.range),
            },
            container: container.map(str::to_string),
            depth,
        });
        if let Some(children) = item.children {
            nested(children, file, Some(&name), depth + 1, out);
        }
    }
}

/// Workspace symbols (a symbol known by its file only starts at the file's start).
pub fn workspace_symbols(answer: Option<WorkspaceSymbolResponse>) -> Vec<Symbol> {
    match answer {
        None => Vec::new(),
        Some(WorkspaceSymbolResponse::Flat(items)) => items
            .into_iter()
            .filter_map(|s| {
                Some(Symbol {
                    name: s.name,
                    kind: kind(s.kind).to_string(),
                    detail: None,
                    location: location(s.location)?,
                    container: s.container_name,
                    depth: 0,
                })
            })
            .collect(),
        Some(WorkspaceSymbolResponse::Nested(items)) => items
            .into_iter()
            .filter_map(|s| {
                let location = match s.location {
                    OneOf::Left(l) => location(l)?,
                    OneOf::Right(w) => Location {
                        path: path(&w.uri)?,
                        span: Span::default(),
                    },
                };
                Some(Symbol {
                    name: s.name,
                    kind: kind(s.kind).to_string(),
                    detail: None,
                    location,
                    container: s.container_name,
                    depth: 0,
                })
            })
            .collect(),
    }
}

/// A hover's contents as text: markdown or plain text as given, a language string as a fenced
/// block, several (an editor joins every server's) separated by a blank line; `None` for
/// nothing but blanks.
pub fn hover(answer: Option<lsp::Hover>) -> Option<String> {
    let marked = |m: MarkedString| match m {
        MarkedString::String(s) => s,
        MarkedString::LanguageString(l) => format!("```{}\n{}\n```", l.language, l.value),
    };
    let parts: Vec<String> = match answer?.contents {
        HoverContents::Scalar(m) => vec![marked(m)],
        HoverContents::Array(items) => items.into_iter().map(marked).collect(),
        HoverContents::Markup(m) => vec![m.value],
    };
    let parts: Vec<&str> = parts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// A rename's edits by file; `Err` names what Tandem cannot propose (files created, renamed or
/// deleted).
pub fn workspace_edit(edit: Option<WorkspaceEdit>) -> Result<Vec<FileEdits>, String> {
    let Some(edit) = edit else {
        return Ok(Vec::new());
    };
    let mut files: Vec<FileEdits> = Vec::new();
    let mut add = |uri: &Uri, edits: Vec<(Span, String)>| -> Result<(), String> {
        let path = path(uri).ok_or_else(|| format!("an edit of {} (not a file)", uri.as_str()))?;
        match files.iter_mut().find(|f| f.path == path) {
            Some(file) => file.edits.extend(edits),
            None => files.push(FileEdits { path, edits }),
        }
        Ok(())
    };
    let text_edit = |e: OneOf<lsp::TextEdit, lsp::AnnotatedTextEdit>| match e {
        OneOf::Left(e) => (span(e.range), e.new_text),
        OneOf::Right(a) => (span(a.text_edit.range), a.text_edit.new_text),
    };
    match edit.document_changes {
        Some(DocumentChanges::Edits(edits)) => {
            for e in edits {
                add(
                    &e.text_document.uri,
                    e.edits.into_iter().map(text_edit).collect(),
                )?;
            }
        }
        Some(DocumentChanges::Operations(ops)) => {
            for op in ops {
                match op {
                    DocumentChangeOperation::Edit(e) => add(
                        &e.text_document.uri,
                        e.edits.into_iter().map(text_edit).collect(),
                    )?,
                    DocumentChangeOperation::Op(_) => {
                        return Err(
                            "the rename also creates, renames or deletes files, which Tandem \
                             does not propose"
                                .to_string(),
                        )
                    }
                }
            }
        }
        None => {
            let mut changes: Vec<_> = edit.changes.unwrap_or_default().into_iter().collect();
            changes.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
            for (uri, edits) in changes {
                add(
                    &uri,
                    edits
                        .into_iter()
                        .map(|e| (span(e.range), e.new_text))
                        .collect(),
                )?;
            }
        }
    }
    Ok(files)
}

/// LSP's name of a symbol kind, in lower case.
pub fn kind(kind: SymbolKind) -> &'static str {
    match kind {
        SymbolKind::FILE => "file",
        SymbolKind::MODULE => "module",
        SymbolKind::NAMESPACE => "namespace",
        SymbolKind::PACKAGE => "package",
        SymbolKind::CLASS => "class",
        SymbolKind::METHOD => "method",
        SymbolKind::PROPERTY => "property",
        SymbolKind::FIELD => "field",
        SymbolKind::CONSTRUCTOR => "constructor",
        SymbolKind::ENUM => "enum",
        SymbolKind::INTERFACE => "interface",
        SymbolKind::FUNCTION => "function",
        SymbolKind::VARIABLE => "variable",
        SymbolKind::CONSTANT => "constant",
        SymbolKind::STRING => "string",
        SymbolKind::NUMBER => "number",
        SymbolKind::BOOLEAN => "boolean",
        SymbolKind::ARRAY => "array",
        SymbolKind::OBJECT => "object",
        SymbolKind::KEY => "key",
        SymbolKind::NULL => "null",
        SymbolKind::ENUM_MEMBER => "enum member",
        SymbolKind::STRUCT => "struct",
        SymbolKind::EVENT => "event",
        SymbolKind::OPERATOR => "operator",
        SymbolKind::TYPE_PARAMETER => "type parameter",
        // A kind newer than this version of LSP.
        _ => "symbol",
    }
}
