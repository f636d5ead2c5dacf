//! The user types while a proposal is pending: before it, during its question, while it is in
//! flight. Every client shape; no keystroke is ever lost, and the edit lands where its text is
//! or is refused as a conflict.

use super::*;
use crate::lsp::workspace::tests::fake::Typing;

const HELLO: &str = "hello world\nsecond line\n";

/// The user types `text` at the start of line `line` of `path` (a `didChange`).
fn type_at(path: &Path, line: u32, text: &'static str) -> Typing {
    let uri = uri(path).as_str().to_owned();
    Box::new(move |store: &mut DocumentStore| {
        let version = store.get(&uri).expect("open").version() + 1;
        let at = crate::lsp::position::Position::new(line, 0);
        let change = TextChange::replace(crate::lsp::position::Range::new(at, at), text);
        store.change(&uri, version, &[change]).expect("typing");
    })
}

#[tokio::test]
async fn a_plain_changes_client_that_applies_at_stale_positions_is_repaired() {
    // The case: `hello world` + typed `XYZ ` became `hello thereorld`.
    let f = auto(PLAIN);
    let path = f.open("a.txt", 1, HELLO);
    f.client.type_before_edits([type_at(&path, 0, "XYZ ")]);
    let outcome = f.propose(edit(&path, HELLO, &[("world", "there")])).await;
    assert_eq!(f.text(&path), "XYZ hello there\nsecond line\n");
    let ChangeOutcome::Rebased(made) = outcome else {
        panic!("expected the re-based outcome, got {outcome:?}");
    };
    assert_eq!(
        made.old_text.as_deref(),
        Some("XYZ hello world\nsecond line\n")
    );
    // The edit, then the repair of where the editor put it.
    let edits = f.client.edits();
    assert_eq!(edits.len(), 2, "{edits:?}");
}

#[tokio::test]
async fn a_versioned_edit_refused_as_stale_is_placed_again_and_resent() {
    let f = auto(VERSIONED);
    let path = f.open("a.txt", 1, HELLO);
    f.client.type_before_edits([type_at(&path, 0, "XYZ ")]);
    let outcome = f.propose(edit(&path, HELLO, &[("world", "there")])).await;
    assert!(matches!(outcome, ChangeOutcome::Rebased(_)), "{outcome:?}");
    assert_eq!(f.text(&path), "XYZ hello there\nsecond line\n");
    assert_eq!(
        f.client.edits(),
        vec![
            versioned(uri(&path), Some(1), vec![te(0, 6, 0, 11, "there")]),
            versioned(uri(&path), Some(2), vec![te(0, 10, 0, 15, "there")]),
        ]
    );
}

#[tokio::test]
async fn typing_while_the_question_is_open_does_not_turn_apply_into_a_rejection() {
    for caps in [PLAIN, VERSIONED] {
        let f = confirm(caps);
        let path = f.open("a.txt", 1, HELLO);
        f.client
            .reply_questions([Reply::Choose(Some(interaction::APPLY))]);
        f.client
            .type_during_questions([type_at(&path, 1, "typed ")]);
        let outcome = f.propose(edit(&path, HELLO, &[("world", "there")])).await;
        assert!(matches!(outcome, ChangeOutcome::Rebased(_)), "{outcome:?}");
        assert_eq!(f.text(&path), "hello there\ntyped second line\n");
        assert_eq!(
            f.client.edits().len(),
            1,
            "placed after the answer, sent once"
        );
    }
}

#[tokio::test]
async fn typing_inside_the_region_during_the_question_is_a_conflict_and_nothing_is_sent() {
    let f = confirm(VERSIONED);
    let path = f.open("a.txt", 1, HELLO);
    f.client
        .reply_questions([Reply::Choose(Some(interaction::APPLY))]);
    let uri_text = uri(&path).as_str().to_owned();
    f.client
        .type_during_questions([Box::new(move |store: &mut DocumentStore| {
            let at = crate::lsp::position::Position::new(0, 8);
            let change = TextChange::replace(crate::lsp::position::Range::new(at, at), "!!");
            store.change(&uri_text, 2, &[change]).expect("typing");
        }) as Typing]);
    let outcome = f.propose(edit(&path, HELLO, &[("world", "there")])).await;
    let ChangeOutcome::Conflict { detail } = outcome else {
        panic!("expected a conflict, got {outcome:?}");
    };
    assert!(
        detail.contains("wo!!rld"),
        "the current text is shown: {detail}"
    );
    assert!(f.client.edits().is_empty());
    assert_eq!(f.text(&path), "hello wo!!rld\nsecond line\n");
}

#[tokio::test]
async fn a_late_answer_is_a_timeout_then_a_notice_saying_it_was_applied() {
    let f = auto(VERSIONED);
    f.set_timeout(Duration::from_millis(50));
    let path = f.open("a.txt", 1, HELLO);
    f.client
        .reply_edits([Reply::Late(Duration::from_millis(300))]);
    let outcome = f.propose(edit(&path, HELLO, &[("world", "there")])).await;
    assert!(
        matches!(&outcome, ChangeOutcome::TimedOut { detail } if detail.contains("did not answer")),
        "{outcome:?}"
    );
    assert!(f.ws.late_notices().is_empty(), "nothing known yet");
    let mut notices = Vec::new();
    for _ in 0..200 {
        notices = f.ws.late_notices();
        if !notices.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("was applied by the editor after all"),
        "{notices:?}"
    );
    assert_eq!(f.text(&path), "hello there\nsecond line\n");
    assert!(f.ws.late_notices().is_empty(), "said once");
}

#[tokio::test]
async fn an_edit_the_editor_says_it_applied_but_skipped_is_sent_again() {
    let f = auto(VERSIONED);
    let path = f.open("a.txt", 1, HELLO);
    f.client.reply_edits([Reply::Skip]);
    let outcome = f.propose(edit(&path, HELLO, &[("world", "there")])).await;
    assert_eq!(outcome, ChangeOutcome::Applied);
    assert_eq!(f.text(&path), "hello there\nsecond line\n");
    assert_eq!(f.client.edits().len(), 2);

    let f = auto(VERSIONED);
    let path = f.open("a.txt", 1, HELLO);
    f.client.reply_edits((0..5).map(|_| Reply::Skip));
    let outcome = f.propose(edit(&path, HELLO, &[("world", "there")])).await;
    let ChangeOutcome::Refused { reason } = outcome else {
        panic!("expected a refusal, got {outcome:?}");
    };
    assert!(reason.contains("does not show it"), "{reason}");
    assert_eq!(f.text(&path), HELLO);
}

/// A tiny deterministic generator (no dependency): xorshift.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// 1000 random interleavings of typing and proposals, over every client shape and consent
/// path, against a reference: each typed `#` survives, and the document is either the
/// intended edit (with the typing) or untouched by the agent (a conflict).
#[tokio::test]
async fn a_thousand_random_interleavings_lose_no_keystroke() {
    let mut rng = Rng(0x7a9d_e11e_0000_0016);
    let shapes = [PLAIN, VERSIONED, FULL];
    for round in 0..1000 {
        let caps = shapes[rng.below(shapes.len())];
        let mode = if rng.below(2) == 0 {
            EditMode::Auto
        } else {
            EditMode::Confirm
        };
        let f = fixture(caps, PositionEncoding::Utf16, mode);
        let lines: Vec<String> = (0..6).map(|i| format!("line {i} text ü")).collect();
        let old = lines.join("\n") + "\n";
        let path = f.open("r.txt", 1, &old);
        let target = format!("line {} text", rng.below(6));
        let change = edit(&path, &old, &[(&target, "REPLACED")]);
        // Up to three keystrokes: before the proposal, during the question, in flight.
        // Counted when typed: a conflict found early leaves later keystrokes untyped.
        let typed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let keystroke = |rng: &mut Rng| -> Typing {
            let line = rng.below(6) as u32;
            let column = rng.below(14) as u32;
            let uri = uri(&path).as_str().to_owned();
            let typed = typed.clone();
            Box::new(move |store: &mut DocumentStore| {
                typed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let version = store.get(&uri).expect("open").version() + 1;
                let at = crate::lsp::position::Position::new(line, column);
                let change = TextChange::replace(crate::lsp::position::Range::new(at, at), "#");
                store.change(&uri, version, &[change]).expect("typing");
            })
        };
        if rng.below(2) == 0 {
            let mut store = f.store.lock().expect("store");
            keystroke(&mut rng)(&mut store);
        }
        if mode == EditMode::Confirm && rng.below(2) == 0 {
            f.client.type_during_questions([keystroke(&mut rng)]);
        }
        f.client
            .reply_questions([Reply::Choose(Some(interaction::APPLY))]);
        if rng.below(2) == 0 {
            f.client.type_before_edits([keystroke(&mut rng)]);
        }
        let outcome = f.propose(change.clone()).await;
        let now = f.text(&path);
        let typed = typed.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            now.matches('#').count(),
            typed,
            "round {round}: lost a keystroke: {now:?} {outcome:?}"
        );
        let without = now.replace('#', "");
        match &outcome {
            ChangeOutcome::Applied | ChangeOutcome::Rebased(_) => {
                assert_eq!(without, change.new_text, "round {round}: {now:?}")
            }
            ChangeOutcome::Conflict { .. } => {
                assert_eq!(
                    without, old,
                    "round {round}: a conflict changed the file: {now:?}"
                )
            }
            other => panic!("round {round}: unexpected {other:?} ({caps:?}, {mode:?})"),
        }
    }
}
