use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::json;
use tandem_ai::sync::lock;

use super::*;

const LONG: &str = "## What `main` does\n\nIt reads the configuration, then:\n\n1. opens the \
database;\n2. serves requests until Ctrl-C.\n\nNothing surprising.";

/// How the fake editor answers `window/showDocument`.
#[derive(Clone, Copy)]
enum Opens {
    Success(bool),
    Error,
    Never,
}

/// An editor that records what it is sent.
struct Fake {
    opens: Opens,
    messages: Mutex<Vec<(MessageType, String)>>,
    documents: Mutex<Vec<ShowDocumentParams>>,
}

impl Fake {
    fn new(opens: Opens) -> Arc<Fake> {
        Arc::new(Fake {
            opens,
            messages: Mutex::new(Vec::new()),
            documents: Mutex::new(Vec::new()),
        })
    }

    fn messages(&self) -> Vec<(MessageType, String)> {
        lock(&self.messages).clone()
    }

    fn documents(&self) -> Vec<ShowDocumentParams> {
        lock(&self.documents).clone()
    }
}

impl AnswerClient for Fake {
    fn show_message(&self, typ: MessageType, text: String) -> BoxFuture<'_, ()> {
        lock(&self.messages).push((typ, text));
        Box::pin(async {})
    }

    fn show_document(&self, params: ShowDocumentParams) -> BoxFuture<'_, Result<bool, String>> {
        lock(&self.documents).push(params);
        let opens = self.opens;
        Box::pin(async move {
            match opens {
                Opens::Success(success) => Ok(success),
                Opens::Error => Err("Method not found".to_string()),
                Opens::Never => std::future::pending().await,
            }
        })
    }
}

/// Answers to `fake` saved under a temp dir (kept alive by the returned guard).
fn answers(fake: &Arc<Fake>, opens: bool) -> (Answers, tempfile::TempDir, PathBuf) {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("tandem/answers");
    let answers = Answers::new(fake.clone(), AnswerFiles::new(Some(dir.clone())));
    answers.set_opens_documents(opens);
    (answers, temp, dir)
}

fn session() -> SessionId {
    SessionId::from("s1")
}

fn capabilities(value: serde_json::Value) -> ClientCapabilities {
    serde_json::from_value(value).unwrap()
}

#[test]
fn clients_that_declare_show_document_or_are_helix_open_documents() {
    let declared = capabilities(json!({"window": {"showDocument": {"support": true}}}));
    let refused = capabilities(json!({"window": {"showDocument": {"support": false}}}));
    // Helix 25.07.1's window capabilities: progress only (showDocument is declared after it).
    let helix_25_07 = capabilities(json!({"window": {"workDoneProgress": true}}));
    let helix = ClientInfo {
        name: "helix".to_string(),
        version: Some("25.07.1 (a05c151b)".to_string()),
    };
    let other = ClientInfo {
        name: "Neovim".to_string(),
        version: None,
    };
    assert!(opens_documents(&declared, None));
    assert!(opens_documents(&declared, Some(&other)));
    assert!(!opens_documents(&refused, None));
    assert!(!opens_documents(&helix_25_07, None));
    assert!(!opens_documents(&helix_25_07, Some(&other)));
    assert!(opens_documents(&helix_25_07, Some(&helix)));
}

#[test]
fn a_line_or_two_fits_in_a_message() {
    assert!(fits_in_a_message("Fixed the typo."));
    assert!(fits_in_a_message(
        "Fixed the typo.\n\nNothing else changed."
    ));
    assert!(!fits_in_a_message("one\ntwo\nthree"));
    assert!(!fits_in_a_message(&"x".repeat(SHORT_CHARS + 1)));
    assert!(fits_in_a_message(&"é".repeat(SHORT_CHARS)));
    assert_eq!(
        short_message("  Fixed it.\n\n  Nothing else. "),
        "Tandem: Fixed it.\nNothing else."
    );
}

#[test]
fn the_pointer_is_one_line_with_the_start_of_the_answer_and_the_path() {
    let path = Path::new("/c/tandem/answers/s1-1.md");
    assert_eq!(
        pointer(LONG, path),
        "Tandem: What `main` does — full answer in /c/tandem/answers/s1-1.md"
    );
    let long_first = format!("{}\nmore", "y".repeat(POINTER_CHARS + 10));
    let line = pointer(&long_first, path);
    assert_eq!(
        line,
        format!(
            "Tandem: {}… — full answer in /c/tandem/answers/s1-1.md",
            "y".repeat(POINTER_CHARS)
        )
    );
    assert!(!line.contains('\n'));
    assert_eq!(
        pointer("#\n\nbody", path),
        "Tandem: the answer is in /c/tandem/answers/s1-1.md"
    );
}

#[test]
fn the_document_opens_inside_the_editor_without_taking_focus() {
    let params = show_params(Path::new("/c/tandem/answers/s 1-1.md")).unwrap();
    assert_eq!(
        serde_json::to_value(&params).unwrap(),
        json!({"uri": "file:///c/tandem/answers/s%201-1.md", "external": false,
            "takeFocus": false})
    );
    assert!(show_params(Path::new("relative.md")).is_none());
}

#[tokio::test]
async fn a_short_answer_is_the_message_and_no_file() {
    let fake = Fake::new(Opens::Success(true));
    let (answers, _temp, dir) = answers(&fake, true);
    let outcome = Outcome::Answer("Fixed the typo.".to_string());
    answers.deliver(&session(), &outcome).await;
    assert_eq!(
        fake.messages(),
        [(MessageType::INFO, "Tandem: Fixed the typo.".to_string())]
    );
    assert!(fake.documents().is_empty());
    assert!(!dir.exists());
}

#[tokio::test]
async fn a_long_answer_is_saved_and_opened_and_the_message_says_where() {
    let fake = Fake::new(Opens::Success(true));
    let (answers, _temp, dir) = answers(&fake, true);
    answers
        .deliver(&session(), &Outcome::Answer(LONG.to_string()))
        .await;
    let file = dir.join("s1-1.md");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), LONG);
    let documents = fake.documents();
    assert_eq!(documents.len(), 1);
    assert_eq!(documents[0], show_params(&file).unwrap());
    assert_eq!(
        fake.messages(),
        [(
            MessageType::INFO,
            format!(
                "Tandem: What `main` does — full answer in {}",
                file.display()
            )
        )]
    );
}

#[tokio::test]
async fn an_editor_that_does_not_open_it_gets_the_whole_answer_in_the_message() {
    for (opens, declared) in [
        (Opens::Success(false), true),
        (Opens::Error, true),
        (Opens::Success(true), false),
    ] {
        let fake = Fake::new(opens);
        let (answers, _temp, dir) = answers(&fake, declared);
        answers
            .deliver(&session(), &Outcome::Answer(LONG.to_string()))
            .await;
        let file = dir.join("s1-1.md");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), LONG);
        assert_eq!(fake.documents().len(), usize::from(declared));
        let expected = format!(
            "Tandem: What `main` does — full answer in {}\n\n{LONG}",
            file.display()
        );
        assert_eq!(fake.messages(), [(MessageType::INFO, expected)]);
    }
}

#[tokio::test(start_paused = true)]
async fn an_editor_that_never_answers_show_document_gets_the_message_after_the_timeout() {
    let fake = Fake::new(Opens::Never);
    let (answers, _temp, _dir) = answers(&fake, true);
    // Paused time: the timeout passes as soon as nothing else can run.
    answers
        .deliver(&session(), &Outcome::Answer(LONG.to_string()))
        .await;
    assert_eq!(fake.documents().len(), 1);
    let messages = fake.messages();
    assert_eq!(messages.len(), 1);
    assert!(messages[0].1.ends_with(LONG), "{messages:?}");
}

#[tokio::test]
async fn an_answer_that_cannot_be_saved_is_the_message_whole() {
    let fake = Fake::new(Opens::Success(true));
    let answers = Answers::new(fake.clone(), AnswerFiles::new(None));
    answers.set_opens_documents(true);
    answers
        .deliver(&session(), &Outcome::Answer(LONG.to_string()))
        .await;
    assert!(fake.documents().is_empty());
    assert_eq!(
        fake.messages(),
        [(MessageType::INFO, format!("Tandem: {LONG}"))]
    );
}

#[tokio::test]
async fn failures_and_endings_without_text_are_messages() {
    let fake = Fake::new(Opens::Success(true));
    let (answers, _temp, dir) = answers(&fake, true);
    let long_failure = format!("HTTP 500: {}", "x".repeat(400));
    for outcome in [
        Outcome::Failed(long_failure.clone()),
        Outcome::Stopped,
        Outcome::Done,
        Outcome::NoAnswer,
    ] {
        answers.deliver(&session(), &outcome).await;
    }
    assert_eq!(
        fake.messages(),
        [
            (
                MessageType::ERROR,
                format!("Tandem: Failed: {long_failure}")
            ),
            (MessageType::INFO, "Tandem: Stopped.".to_string()),
            (MessageType::INFO, "Tandem: Done.".to_string()),
            (
                MessageType::INFO,
                "Tandem: Tandem stopped without an answer.".to_string()
            ),
        ]
    );
    assert!(fake.documents().is_empty());
    assert!(!dir.exists());
}
