//! A prompt's editor context and its diagnostics: the editor's whole-file list when it
//! answers in time, what the prompt had otherwise.

use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{json, Value};
use tandem_protocol::requests::PromptContext;
use tandem_protocol::{Diagnostic, Position, Range};

use super::{Diagnostics, PendingContext};
use crate::lsp::actions::DiagnosticMemory;
use crate::lsp::documents::DocumentStore;
use crate::lsp::position::PositionEncoding;
use crate::lsp::scripted_editor::{Editor, Reply};
use crate::lsp::workspace::client::EditCapabilities;

const APP: &str = "def total(items):\n    return sum(itms)\n\n\ndef unused():\n    import os\n";

fn diagnostic(line: u32, severity: u8, message: &str) -> Diagnostic {
    Diagnostic {
        range: Range::new(Position::new(line, 4), Position::new(line, 8)),
        severity: Some(severity),
        code: None,
        source: Some("Pyright".into()),
        message: message.into(),
    }
}

fn wire(d: &Diagnostic) -> Value {
    serde_json::to_value(d).expect("diagnostic")
}

struct Fixture {
    store: Mutex<DocumentStore>,
    uri: String,
    cwd: PathBuf,
}

fn fixture() -> Fixture {
    let cwd = PathBuf::from("/w");
    let uri = "file:///w/app.py".to_owned();
    let mut store = DocumentStore::new(PositionEncoding::Utf16);
    store.open(&uri, "python", 1, APP);
    Fixture {
        store: Mutex::new(store),
        uri,
        cwd,
    }
}

impl Fixture {
    /// The context of the cursor on line 2 (in `total`) with `diagnostics`.
    fn context(&self, diagnostics: Diagnostics) -> PendingContext {
        let ctx = PromptContext {
            uri: self.uri.clone(),
            selection: Some(Range::new(Position::new(1, 4), Position::new(1, 4))),
            include_diagnostics: true,
            diagnostics: None,
        };
        PendingContext::read(&self.store, &ctx, &self.cwd, diagnostics).expect("context")
    }
}

fn the_fix() -> Diagnostic {
    diagnostic(1, 1, "\"itms\" is not defined")
}

#[tokio::test]
async fn a_fix_gets_the_whole_files_diagnostics_from_the_editor() {
    let fx = fixture();
    let uri = fx.uri.clone();
    let editor = Editor::new(move |method, params| {
        assert_eq!(method, "tandem/diagnostics");
        assert_eq!(params, &json!({"uris": [uri]}));
        Reply::Answer(
            json!({"files": [{"uri": uri, "generation": 3, "diagnostics": [
                wire(&the_fix()),
                wire(&diagnostic(1, 2, "\"sum\" is shadowed")),
                wire(&diagnostic(5, 2, "\"os\" is not accessed")),
            ]}]}),
        )
    });
    let pending = fx.context(Diagnostics::Known {
        pinned: vec![the_fix()],
        remembered: None,
    });
    assert!(pending.wants_editor());
    let text = pending.complete(&editor).await;
    assert!(
        text.contains(
            "Diagnostics in range:\n- line 2: error (Pyright): \"itms\" is not defined\n\
             - line 2: warning (Pyright): \"sum\" is shadowed\n\
             Elsewhere in this file: 1 warning (line 6)\n"
        ),
        "{text}"
    );
    assert_eq!(editor.asked().len(), 1);
}

#[tokio::test]
async fn the_diagnostic_to_fix_stays_when_the_editor_no_longer_lists_it() {
    let fx = fixture();
    let editor = Editor::new(|_, _| Reply::Answer(json!({"files": []})));
    let pending = fx.context(Diagnostics::Known {
        pinned: vec![the_fix()],
        remembered: Some(vec![diagnostic(1, 2, "old")]),
    });
    let text = pending.complete(&editor).await;
    assert!(text.contains("\"itms\" is not defined"), "{text}");
    assert!(
        !text.contains("old"),
        "the editor's answer replaces the remembered list"
    );
}

#[tokio::test(start_paused = true)]
async fn without_an_answer_in_a_second_the_context_uses_what_it_has() {
    let fx = fixture();
    let pending = fx.context(Diagnostics::Known {
        pinned: vec![the_fix()],
        remembered: Some(vec![diagnostic(1, 2, "remembered from the code action")]),
    });
    for editor in [
        Editor::new(|_, _| Reply::Hang),
        Editor::new(|_, _| Reply::Fail("Method not found")),
    ] {
        let started = tokio::time::Instant::now();
        let text = pending.complete(&editor).await;
        assert!(started.elapsed() <= super::EDITOR_DIAGNOSTICS_TIMEOUT);
        assert!(text.contains("remembered from the code action"), "{text}");
        assert!(text.contains("\"itms\" is not defined"), "{text}");
    }
}

#[tokio::test]
async fn an_editor_without_the_capability_or_a_prompt_with_its_own_list_is_not_asked() {
    let fx = fixture();
    let editor = Editor::new(|_, _| Reply::Hang).with_caps(EditCapabilities::default());
    let pending = fx.context(Diagnostics::Known {
        pinned: Vec::new(),
        remembered: Some(vec![diagnostic(1, 1, "remembered")]),
    });
    assert!(pending.complete(&editor).await.contains("remembered"));
    let asking = Editor::new(|_, _| Reply::Hang);
    let pending = fx.context(Diagnostics::Sent(vec![diagnostic(1, 1, "sent")]));
    assert!(!pending.wants_editor());
    assert!(pending.complete(&asking).await.contains("sent"));
    let pending = fx.context(Diagnostics::None);
    assert!(!pending.complete(&asking).await.contains("Diagnostics"));
    assert!(asking.asked().is_empty());
    assert!(editor.asked().is_empty());
}

#[test]
fn what_a_prompt_asks_for() {
    let memory = DiagnosticMemory::default();
    memory.remember(
        "file:///w/app.py",
        vec![diagnostic(1, 1, "from a code action")],
    );
    let ctx = |include: bool, sent: Option<Vec<Diagnostic>>| PromptContext {
        uri: "file:///w/app.py".into(),
        selection: None,
        include_diagnostics: include,
        diagnostics: sent,
    };
    assert_eq!(
        PendingContext::diagnostics_of(&ctx(false, None), &memory),
        Diagnostics::None
    );
    assert_eq!(
        PendingContext::diagnostics_of(&ctx(true, Some(vec![the_fix()])), &memory),
        Diagnostics::Sent(vec![the_fix()])
    );
    assert_eq!(
        PendingContext::diagnostics_of(&ctx(true, None), &memory),
        Diagnostics::Known {
            pinned: Vec::new(),
            remembered: Some(vec![diagnostic(1, 1, "from a code action")]),
        }
    );
}
