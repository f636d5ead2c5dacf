//! `textDocument/codeAction`: Tandem's actions, listed without calling the model.
//!
//! Listing must be instant (editors ask on every cursor move), so it only reads what the request
//! carries and the buffer the client already sent: one quickfix per diagnostic in range, and
//! explain / document / write tests for the selection or the symbol around the cursor. The
//! symbol lookup parses the buffer, so documents above [`MAX_SYMBOL_BYTES`] skip it.
//!
//! A language server never sees the diagnostics other servers publish, so the ones a client
//! sends here are remembered per document ([`DiagnosticMemory`]): a later prompt that asks for
//! diagnostics without carrying any gets these.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use tandem_ai::sync::lock;

use tandem_protocol::commands::{Command, FixDiagnosticArgs, TargetArgs, KIND_ASSIST, KIND_FIX};
use tandem_protocol::Diagnostic;
use tandem_protocol::{Position, Range};
use tower_lsp_server::ls_types as lsp;

use super::context::{find_symbol, Language};
use super::documents::DocumentStore;
use super::position as pos;

/// Documents larger than this get no symbol lookup when listing actions (a parse of a few
/// megabytes would make the menu lag).
pub const MAX_SYMBOL_BYTES: usize = 2 * 1024 * 1024;

/// The diagnostics last received in a `codeAction` request, per document URI.
#[derive(Debug, Default)]
pub struct DiagnosticMemory {
    map: Mutex<HashMap<String, Vec<Diagnostic>>>,
}

impl DiagnosticMemory {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<Diagnostic>>> {
        lock(&self.map)
    }

    /// Remembers `diagnostics` as the latest of `uri`.
    pub fn remember(&self, uri: &str, diagnostics: Vec<Diagnostic>) {
        self.lock().insert(uri.to_string(), diagnostics);
    }

    /// The latest diagnostics of `uri`, if a codeAction request carried any.
    pub fn last(&self, uri: &str) -> Option<Vec<Diagnostic>> {
        self.lock().get(uri).cloned()
    }

    /// Forgets `uri` (the document was closed).
    pub fn forget(&self, uri: &str) {
        self.lock().remove(uri);
    }
}

/// Our diagnostic type for an LSP one (the fields Tandem reads).
pub fn from_lsp(d: &lsp::Diagnostic) -> Diagnostic {
    Diagnostic {
        range: range_from_lsp(d.range),
        severity: d.severity.and_then(severity_number),
        code: d.code.as_ref().map(|c| match c {
            lsp::NumberOrString::Number(n) => serde_json::Value::from(*n),
            lsp::NumberOrString::String(s) => serde_json::Value::from(s.clone()),
        }),
        source: d.source.clone(),
        message: d.message.clone(),
    }
}

fn severity_number(s: lsp::DiagnosticSeverity) -> Option<u8> {
    [
        lsp::DiagnosticSeverity::ERROR,
        lsp::DiagnosticSeverity::WARNING,
        lsp::DiagnosticSeverity::INFORMATION,
        lsp::DiagnosticSeverity::HINT,
    ]
    .iter()
    .position(|k| *k == s)
    .map(|i| i as u8 + 1)
}

fn range_from_lsp(r: lsp::Range) -> Range {
    Range::new(
        Position::new(r.start.line, r.start.character),
        Position::new(r.end.line, r.end.character),
    )
}

fn pos_before(a: lsp::Position, b: lsp::Position) -> bool {
    (a.line, a.character) < (b.line, b.character)
}

/// Whether two ranges share a position (touching counts: a cursor at a diagnostic's end is on it).
fn overlaps(a: lsp::Range, b: lsp::Range) -> bool {
    !pos_before(a.end, b.start) && !pos_before(b.end, a.start)
}

/// Whether the request's `only` filter lets `kind` through.
fn wanted(only: Option<&[lsp::CodeActionKind]>, kind: &str) -> bool {
    only.is_none_or(|only| {
        only.iter().any(|o| {
            let o = o.as_str();
            kind == o || kind.starts_with(&format!("{o}."))
        })
    })
}

fn action(command: Command, diagnostic: Option<lsp::Diagnostic>) -> lsp::CodeActionOrCommand {
    let title = command.title();
    let kind = command.code_action_kind().unwrap_or(KIND_ASSIST);
    lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
        title: title.clone(),
        kind: Some(lsp::CodeActionKind::new(kind)),
        diagnostics: diagnostic.map(|d| vec![d]),
        command: Some(lsp::Command {
            title,
            command: command.name().to_string(),
            arguments: Some(command.arguments()),
        }),
        ..lsp::CodeAction::default()
    })
}

/// The range and name of the symbol enclosing `at` in the open document `uri`, when the
/// document is open, small enough and its language has a grammar.
fn enclosing(docs: &Mutex<DocumentStore>, uri: &str, at: lsp::Position) -> Option<(Range, String)> {
    let (rope, language_id, encoding) = {
        let store = lock(docs);
        let doc = store.get(uri)?;
        (
            doc.text().clone(),
            doc.language_id().to_string(),
            store.encoding(),
        )
    };
    if rope.len_bytes() > MAX_SYMBOL_BYTES {
        return None;
    }
    let path = crate::uri::to_path(uri).unwrap_or_else(|| PathBuf::from(uri));
    let language = Language::detect(Some(&language_id), &path);
    let byte = pos::position_to_byte(&rope, pos::Position::new(at.line, at.character), encoding);
    let symbol = find_symbol(&rope.to_string(), &language, byte..byte).found()?;
    let start = pos::byte_to_position(&rope, symbol.byte_range.start, encoding);
    let end = pos::byte_to_position(&rope, symbol.byte_range.end, encoding);
    let range = Range::new(
        Position::new(start.line, start.character),
        Position::new(end.line, end.character),
    );
    Some((range, symbol.name))
}

/// The code actions for `params`; remembers its diagnostics in `memory`.
pub fn list(
    docs: &Mutex<DocumentStore>,
    memory: &DiagnosticMemory,
    params: &lsp::CodeActionParams,
) -> Vec<lsp::CodeActionOrCommand> {
    let uri = params.text_document.uri.as_str();
    let ctx = &params.context;
    memory.remember(uri, ctx.diagnostics.iter().map(from_lsp).collect());
    let only = ctx.only.as_deref();
    let mut out = Vec::new();
    if wanted(only, KIND_FIX) {
        for d in ctx
            .diagnostics
            .iter()
            .filter(|d| overlaps(d.range, params.range))
        {
            let ours = from_lsp(d);
            let command = Command::FixDiagnostic(FixDiagnosticArgs {
                uri: uri.to_string(),
                range: ours.range,
                message: ours.message,
                severity: ours.severity,
                source: ours.source,
                code: ours.code,
                session: None,
            });
            out.push(action(command, Some(d.clone())));
        }
    }
    if !wanted(only, KIND_ASSIST) {
        return out;
    }
    let r = params.range;
    let target = if r.start != r.end {
        Some((range_from_lsp(r), None))
    } else {
        enclosing(docs, uri, r.start).map(|(range, name)| (range, Some(name)))
    };
    if let Some((range, symbol)) = target {
        let args = TargetArgs {
            uri: uri.to_string(),
            range,
            symbol,
            session: None,
        };
        out.push(action(Command::Explain(args.clone()), None));
        out.push(action(Command::Document(args.clone()), None));
        out.push(action(Command::WriteTests(args), None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(a: (u32, u32), b: (u32, u32)) -> lsp::Range {
        lsp::Range::new(lsp::Position::new(a.0, a.1), lsp::Position::new(b.0, b.1))
    }

    #[test]
    fn ranges_overlap_when_they_touch() {
        assert!(overlaps(r((2, 4), (2, 9)), r((2, 9), (2, 9))));
        assert!(overlaps(r((2, 4), (2, 9)), r((1, 0), (3, 0))));
        assert!(!overlaps(r((2, 4), (2, 9)), r((2, 10), (2, 10))));
        assert!(!overlaps(r((2, 4), (2, 9)), r((0, 0), (2, 3))));
    }

    #[test]
    fn only_filters_by_kind_prefix() {
        let k = |s: &str| vec![lsp::CodeActionKind::from(s.to_string())];
        assert!(wanted(None, KIND_ASSIST));
        assert!(wanted(Some(&k("refactor")), KIND_ASSIST));
        assert!(!wanted(Some(&k("refactor")), KIND_FIX));
        assert!(wanted(Some(&k("quickfix")), KIND_FIX));
        assert!(!wanted(Some(&k("refactor.tandemx")), KIND_ASSIST));
    }

    #[test]
    fn lists_a_fix_per_diagnostic_and_the_symbol_actions() {
        let docs = Mutex::new(DocumentStore::new(pos::PositionEncoding::Utf16));
        let uri = "file:///p/main.rs";
        docs.lock()
            .unwrap()
            .open(uri, "rust", 1, "fn main() {\n    let x = totl;\n}\n");
        let memory = DiagnosticMemory::default();
        let diag = lsp::Diagnostic {
            range: r((1, 12), (1, 16)),
            severity: Some(lsp::DiagnosticSeverity::ERROR),
            code: Some(lsp::NumberOrString::String("E0425".into())),
            source: Some("rustc".into()),
            message: "cannot find value `totl`".into(),
            ..lsp::Diagnostic::default()
        };
        let params: lsp::CodeActionParams = serde_json::from_value(serde_json::json!({
            "textDocument": {"uri": uri}, "range": r((1, 13), (1, 13)),
            "context": {"diagnostics": [diag]}}))
        .unwrap();
        let titles: Vec<String> = list(&docs, &memory, &params)
            .into_iter()
            .map(|a| match a {
                lsp::CodeActionOrCommand::CodeAction(a) => a.title,
                lsp::CodeActionOrCommand::Command(c) => c.title,
            })
            .collect();
        assert_eq!(
            titles,
            [
                "Ask Tandem to fix: cannot find value `totl`",
                "Ask Tandem to explain `main`",
                "Ask Tandem to document `main`",
                "Ask Tandem to write tests for `main`",
            ]
        );
        let remembered = memory.last(uri).unwrap();
        assert_eq!(remembered[0].severity, Some(1));
        assert_eq!(remembered[0].code, Some(serde_json::json!("E0425")));
    }
}
