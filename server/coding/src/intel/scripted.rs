//! `ScriptedIntel`: a language-intelligence source for tests, answering from what the test
//! set up and recording what it was asked.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use tandem_agent::BoxFuture;
use tandem_ai::sync::lock;

use super::{
    Diagnostic, DiagnosticsAnswer, Document, Features, FileDiagnostics, FileEdits, IntelError,
    LanguageIntel, Location, Pos, Settle, Symbol,
};

type Diagnose = Box<dyn Fn(&Document) -> Option<Vec<Diagnostic>> + Send + Sync>;

/// Answers set up by the test. Diagnostics are computed from each document's text by the
/// test's function (`None`: the file is not analyzed); each call that sees a new text counts
/// as a new report (its generation goes up).
pub struct ScriptedIntel {
    features: Features,
    diagnose: Diagnose,
    definition: Vec<Location>,
    references: Vec<Location>,
    symbols: Vec<Symbol>,
    hover: Option<String>,
    rename: Vec<FileEdits>,
    failure: Option<IntelError>,
    unsettled: bool,
    state: Mutex<BTreeMap<PathBuf, (u64, String)>>,
    asked: Mutex<Vec<String>>,
}

impl Default for ScriptedIntel {
    fn default() -> Self {
        ScriptedIntel {
            features: Features::ALL,
            diagnose: Box::new(|_| Some(Vec::new())),
            definition: Vec::new(),
            references: Vec::new(),
            symbols: Vec::new(),
            hover: None,
            rename: Vec::new(),
            failure: None,
            unsettled: false,
            state: Mutex::new(BTreeMap::new()),
            asked: Mutex::new(Vec::new()),
        }
    }
}

impl ScriptedIntel {
    /// Offering only `features`.
    pub fn with_features(mut self, features: Features) -> Self {
        self.features = features;
        self
    }
    /// Its diagnostics answers say the servers had not finished.
    pub fn unsettled(mut self) -> Self {
        self.unsettled = true;
        self
    }
    /// Diagnostics computed from a document.
    pub fn with_diagnostics(
        mut self,
        diagnose: impl Fn(&Document) -> Option<Vec<Diagnostic>> + Send + Sync + 'static,
    ) -> Self {
        self.diagnose = Box::new(diagnose);
        self
    }
    /// The definitions answered.
    pub fn with_definition(mut self, locations: Vec<Location>) -> Self {
        self.definition = locations;
        self
    }
    /// The references answered.
    pub fn with_references(mut self, locations: Vec<Location>) -> Self {
        self.references = locations;
        self
    }
    /// The symbols answered (document and workspace).
    pub fn with_symbols(mut self, symbols: Vec<Symbol>) -> Self {
        self.symbols = symbols;
        self
    }
    /// The hover text answered.
    pub fn with_hover(mut self, text: &str) -> Self {
        self.hover = Some(text.to_string());
        self
    }
    /// The rename edits answered.
    pub fn with_rename(mut self, edits: Vec<FileEdits>) -> Self {
        self.rename = edits;
        self
    }
    /// Every request fails with `error`.
    pub fn failing(mut self, error: IntelError) -> Self {
        self.failure = Some(error);
        self
    }
    /// What was asked, in order (`definition a.py 3:4`, `diagnostics a.py`, …).
    pub fn asked(&self) -> Vec<String> {
        lock(&self.asked).clone()
    }

    fn note(&self, what: String) -> Result<(), IntelError> {
        lock(&self.asked).push(what);
        match &self.failure {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

fn at(document: &Document, pos: Pos) -> String {
    format!("{} {}:{}", document.path.display(), pos.line, pos.character)
}

impl LanguageIntel for ScriptedIntel {
    fn label(&self) -> &str {
        "the scripted source"
    }
    fn features(&self) -> Features {
        self.features
    }
    fn prepare<'a>(&'a self, document: Document) -> BoxFuture<'a, ()> {
        lock(&self.asked).push(format!("prepare {}", document.path.display()));
        Box::pin(async {})
    }
    fn diagnostics<'a>(
        &'a self,
        files: Option<Vec<Document>>,
        settle: Option<Settle>,
    ) -> BoxFuture<'a, Result<DiagnosticsAnswer, IntelError>> {
        Box::pin(async move {
            let names: Vec<String> = files
                .iter()
                .flatten()
                .map(|d| d.path.display().to_string())
                .collect();
            self.note(format!(
                "diagnostics {}{}",
                names.join(" "),
                if settle.is_some() { " (settle)" } else { "" }
            ))?;
            let mut answer = DiagnosticsAnswer {
                files: Vec::new(),
                settled: !self.unsettled,
            };
            let mut state = lock(&self.state);
            for document in files.into_iter().flatten() {
                let found = (self.diagnose)(&document);
                let entry = state
                    .entry(document.path.clone())
                    .or_insert((0, String::new()));
                if found.is_some() && (entry.0 == 0 || entry.1 != document.text) {
                    *entry = (entry.0 + 1, document.text.clone());
                }
                answer.files.push(FileDiagnostics {
                    path: document.path,
                    generation: entry.0,
                    analyzed: found.is_some(),
                    diagnostics: found.unwrap_or_default(),
                });
            }
            Ok(answer)
        })
    }
    fn definition<'a>(
        &'a self,
        document: Document,
        pos: Pos,
    ) -> BoxFuture<'a, Result<Vec<Location>, IntelError>> {
        Box::pin(async move {
            self.note(format!("definition {}", at(&document, pos)))?;
            Ok(self.definition.clone())
        })
    }
    fn references<'a>(
        &'a self,
        document: Document,
        pos: Pos,
        declaration: bool,
    ) -> BoxFuture<'a, Result<Vec<Location>, IntelError>> {
        Box::pin(async move {
            self.note(format!(
                "references {}{}",
                at(&document, pos),
                if declaration { " +declaration" } else { "" }
            ))?;
            Ok(self.references.clone())
        })
    }
    fn document_symbols<'a>(
        &'a self,
        document: Document,
    ) -> BoxFuture<'a, Result<Vec<Symbol>, IntelError>> {
        Box::pin(async move {
            self.note(format!("documentSymbols {}", document.path.display()))?;
            Ok(self.symbols.clone())
        })
    }
    fn workspace_symbols<'a>(
        &'a self,
        query: String,
        _hint: Option<Document>,
    ) -> BoxFuture<'a, Result<Vec<Symbol>, IntelError>> {
        Box::pin(async move {
            self.note(format!("workspaceSymbols {query}"))?;
            Ok(self
                .symbols
                .iter()
                .filter(|s| s.name.to_lowercase().contains(&query.to_lowercase()))
                .cloned()
                .collect())
        })
    }
    fn hover<'a>(
        &'a self,
        document: Document,
        pos: Pos,
    ) -> BoxFuture<'a, Result<Option<String>, IntelError>> {
        Box::pin(async move {
            self.note(format!("hover {}", at(&document, pos)))?;
            Ok(self.hover.clone())
        })
    }
    fn rename<'a>(
        &'a self,
        document: Document,
        pos: Pos,
        new_name: String,
    ) -> BoxFuture<'a, Result<Vec<FileEdits>, IntelError>> {
        Box::pin(async move {
            self.note(format!("rename {} {new_name}", at(&document, pos)))?;
            Ok(self.rename.clone())
        })
    }
}
