//! `compact` against a scripted model built on `AssistantStream::channel`.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tandem_ai::{
    Api, AssistantStream, Context, InputKind, Message, ModelCost, StopReason, StreamOptions,
};

use super::prompts::{
    NO_PRIOR_HISTORY, SUMMARIZATION_SYSTEM_PROMPT, SUMMARY_PROMPT, TURN_CONTEXT_SEPARATOR,
    TURN_PREFIX_PROMPT, UPDATE_SUMMARY_PROMPT,
};
use super::test_support::{assistant, calls, read_call, tool_result, user, Path};
use super::*;

/// What the scripted model answers.
#[derive(Clone)]
enum Answer {
    Text(&'static str),
    Fail(StopReason, &'static str),
    /// Cancels the caller's token and never ends the stream.
    CancelAndHang,
}

struct Call {
    context: Context,
    options: StreamOptions,
}

impl Call {
    fn prompt(&self) -> String {
        match &self.context.messages[..] {
            [Message::User(u)] => u.content.text(),
            other => panic!("expected one user message, got {other:?}"),
        }
    }
}

/// A model that answers the history prompt and the turn-prefix prompt as scripted and records
/// every call.
struct Scripted {
    history: Answer,
    prefix: Answer,
    calls: Mutex<Vec<Call>>,
}

impl Scripted {
    fn new(history: Answer, prefix: Answer) -> Arc<Scripted> {
        Arc::new(Scripted {
            history,
            prefix,
            calls: Mutex::new(Vec::new()),
        })
    }

    fn stream_fn(self: &Arc<Self>) -> StreamFn {
        let script = self.clone();
        Arc::new(move |model, context, options| {
            let call = Call {
                context: context.clone(),
                options: options.clone(),
            };
            let answer = if call.prompt().ends_with(TURN_PREFIX_PROMPT) {
                script.prefix.clone()
            } else {
                script.history.clone()
            };
            script.calls.lock().expect("calls").push(call);
            let (mut writer, stream) = AssistantStream::channel(model);
            tokio::spawn(async move {
                match answer {
                    Answer::Text(text) => {
                        writer.message_mut().usage = usage_of(text);
                        writer.text_delta(text).await;
                        writer.finish(StopReason::Stop).await;
                    }
                    Answer::Fail(reason, message) => writer.fail(reason, message).await,
                    Answer::CancelAndHang => {
                        options.cancel.cancel();
                        let _keep_open = writer;
                        std::future::pending::<()>().await;
                    }
                }
            });
            stream
        })
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, Vec<Call>> {
        self.calls.lock().expect("calls")
    }
}

/// The usage the scripted model reports for answering `text`.
fn usage_of(text: &str) -> Usage {
    let mut usage = Usage {
        input: 1_000,
        output: text.len() as u64,
        total_tokens: 1_000 + text.len() as u64,
        ..Usage::default()
    };
    usage.cost.total = 0.25;
    usage
}

fn model(reasoning: bool) -> Model {
    Model {
        id: "summarizer".into(),
        name: "Summarizer".into(),
        api: Api::Scripted,
        provider: "scripted".into(),
        base_url: String::new(),
        reasoning,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 16_384,
        headers: None,
        compat: None,
    }
}

fn sized(tokens: usize) -> String {
    "x".repeat(tokens * 4)
}

fn settings(keep: u64) -> CompactionSettings {
    CompactionSettings {
        enabled: true,
        reserve_tokens: 1_000,
        keep_recent_tokens: keep,
    }
}

/// Two whole turns; a budget of 10 keeps only the last.
fn two_turns() -> CompactionPreparation {
    let mut path = Path::default();
    path.msg(user("Fix the parser"));
    path.msg(read_call("src/parse.rs"));
    path.msg(tool_result("fn parse() {}"));
    path.msg(assistant("Done.", Some((2_000, 100))));
    path.msg(user(&sized(10)));
    prepare_compaction(&path.entries, &settings(10)).expect("prepared")
}

/// One long turn cut after its third message; `with_history` adds an earlier turn.
fn split_turn(with_history: bool) -> CompactionPreparation {
    let mut path = Path::default();
    if with_history {
        path.msg(user("Earlier question"));
        path.msg(assistant("Earlier answer", None));
    }
    path.msg(user("Refactor lexer"));
    path.msg(calls(&[(
        "write",
        json!({"path": "src/lex.rs", "content": ""}),
    )]));
    path.msg(tool_result(&sized(50)));
    path.msg(assistant(&sized(10), Some((9_000, 200))));
    let prep = prepare_compaction(&path.entries, &settings(40)).expect("prepared");
    assert!(prep.is_split_turn);
    prep
}

async fn run(
    prep: &CompactionPreparation,
    script: &Arc<Scripted>,
    options: &CompactionOptions,
) -> Result<CompactionResult, CompactionError> {
    compact(
        prep,
        &model(true),
        &script.stream_fn(),
        options,
        &CancellationToken::new(),
    )
    .await
}

#[tokio::test]
async fn first_compaction_asks_for_a_checkpoint_and_appends_file_lists() {
    let script = Scripted::new(Answer::Text("## Goal\nFix it"), Answer::Text("unused"));
    let options = CompactionOptions {
        api_key: Some("sk-test".into()),
        ..CompactionOptions::default()
    };
    let result = run(&two_turns(), &script, &options)
        .await
        .expect("compacts");

    assert_eq!(
        result,
        CompactionResult {
            summary: "## Goal\nFix it\n\n<read-files>\nsrc/parse.rs\n</read-files>".into(),
            first_kept_entry_id: "e4".into(),
            tokens_before: 2_110,
            details: CompactionDetails {
                read_files: vec!["src/parse.rs".into()],
                modified_files: vec![],
            },
            usage: usage_of("## Goal\nFix it"),
        }
    );
    let calls = script.calls();
    assert_eq!(calls.len(), 1);
    let call = &calls[0];
    assert_eq!(
        call.context.system_prompt.as_deref(),
        Some(SUMMARIZATION_SYSTEM_PROMPT)
    );
    assert!(call.context.tools.is_empty());
    assert_eq!(
        call.prompt(),
        format!(
            "<conversation>\n[User]: Fix the parser\n\n\
             [Assistant tool calls]: read(path=\"src/parse.rs\")\n\n\
             [Tool result]: fn parse() {{}}\n\n[Assistant]: Done.\n</conversation>\n\n{SUMMARY_PROMPT}"
        )
    );
    assert_eq!(call.options.max_tokens, Some(800));
    assert_eq!(call.options.reasoning, ThinkingLevel::High);
    assert_eq!(call.options.api_key.as_deref(), Some("sk-test"));
}

#[tokio::test]
async fn chained_compaction_sends_the_previous_summary_for_updating() {
    let mut path = Path::default();
    path.msg(user("old"));
    path.msg(assistant("old answer", None));
    path.msg(user("kept by the first compaction"));
    path.msg(calls(&[("edit", json!({"path": "b.rs", "edits": []}))]));
    path.compaction(
        "## Goal\nFirst summary",
        "e2",
        Some(json!({"readFiles": ["a.rs"], "modifiedFiles": ["m.rs"]})),
    );
    path.msg(user("new request"));
    path.msg(assistant(&sized(10), None));
    path.msg(user(&sized(10)));
    let prep = prepare_compaction(&path.entries, &settings(10)).expect("prepared");

    let script = Scripted::new(Answer::Text("## Goal\nUpdated"), Answer::Text("unused"));
    let result = run(&prep, &script, &CompactionOptions::default())
        .await
        .expect("compacts");

    let prompt = script.calls()[0].prompt();
    assert!(prompt.starts_with("<conversation>\n[User]: kept by the first compaction\n\n"));
    assert!(prompt.ends_with(&format!(
        "</conversation>\n\n<previous-summary>\n## Goal\nFirst summary\n</previous-summary>\n\n\
         {UPDATE_SUMMARY_PROMPT}"
    )));
    assert_eq!(
        result.summary,
        "## Goal\nUpdated\n\n<read-files>\na.rs\n</read-files>\n\n\
         <modified-files>\nb.rs\nm.rs\n</modified-files>"
    );
    assert_eq!(
        result.details.to_value(),
        json!({"readFiles": ["a.rs"], "modifiedFiles": ["b.rs", "m.rs"]})
    );
}

#[tokio::test]
async fn split_turn_gets_a_history_summary_and_a_turn_prefix_summary() {
    let script = Scripted::new(Answer::Text("HISTORY"), Answer::Text("PREFIX"));
    let result = run(&split_turn(true), &script, &CompactionOptions::default())
        .await
        .expect("compacts");
    assert_eq!(
        result.summary,
        format!(
            "HISTORY{TURN_CONTEXT_SEPARATOR}PREFIX\n\n<modified-files>\nsrc/lex.rs\n</modified-files>"
        )
    );
    assert_eq!(result.first_kept_entry_id, "e5");
    // Both calls are counted.
    let mut both = usage_of("HISTORY");
    both.add(&usage_of("PREFIX"));
    assert_eq!(result.usage, both);
    assert_eq!((result.usage.output, result.usage.cost.total), (13, 0.5));

    let calls = script.calls();
    assert_eq!(calls.len(), 2);
    assert!(calls[0].prompt().starts_with(
        "<conversation>\n[User]: Earlier question\n\n[Assistant]: Earlier answer\n</conversation>"
    ));
    assert_eq!(calls[0].options.max_tokens, Some(800));
    assert_eq!(calls[0].options.reasoning, ThinkingLevel::High);
    assert!(calls[1]
        .prompt()
        .starts_with("<conversation>\n[User]: Refactor lexer\n\n[Assistant tool calls]: write("));
    assert_eq!(calls[1].options.max_tokens, Some(500));
    assert_eq!(calls[1].options.reasoning, ThinkingLevel::Off);
}

#[tokio::test]
async fn split_first_turn_needs_only_the_prefix_summary() {
    let script = Scripted::new(Answer::Text("unused"), Answer::Text("PREFIX"));
    let result = run(&split_turn(false), &script, &CompactionOptions::default())
        .await
        .expect("compacts");
    assert!(result
        .summary
        .starts_with(&format!("{NO_PRIOR_HISTORY}{TURN_CONTEXT_SEPARATOR}PREFIX")));
    assert_eq!(script.calls().len(), 1);
}

#[tokio::test]
async fn options_shape_the_request() {
    let script = Scripted::new(Answer::Text("S"), Answer::Text("P"));
    let options = CompactionOptions {
        custom_instructions: Some("the database schema".into()),
        thinking_level: Some(ThinkingLevel::Low),
        headers: [("x-test".to_string(), "1".to_string())].into(),
        ..CompactionOptions::default()
    };
    let mut small_model = model(true);
    small_model.max_tokens = 300;
    compact(
        &split_turn(true),
        &small_model,
        &script.stream_fn(),
        &options,
        &CancellationToken::new(),
    )
    .await
    .expect("compacts");
    {
        let calls = script.calls();
        assert!(calls[0].prompt().ends_with(&format!(
            "{SUMMARY_PROMPT}\n\n{}the database schema",
            prompts::FOCUS_INTRO
        )));
        assert_eq!(calls[0].options.max_tokens, Some(300));
        assert_eq!(calls[1].options.max_tokens, Some(300));
        assert_eq!(calls[0].options.reasoning, ThinkingLevel::Low);
        assert_eq!(calls[1].options.reasoning, ThinkingLevel::Low);
        assert_eq!(
            calls[0].options.headers.get("x-test").map(String::as_str),
            Some("1")
        );
    }

    // A model that cannot reason is never asked to.
    let script = Scripted::new(Answer::Text("S"), Answer::Text("P"));
    compact(
        &two_turns(),
        &model(false),
        &script.stream_fn(),
        &options,
        &CancellationToken::new(),
    )
    .await
    .expect("compacts");
    assert_eq!(script.calls()[0].options.reasoning, ThinkingLevel::Off);
}

#[tokio::test]
async fn a_failing_model_call_is_a_clear_error() {
    let script = Scripted::new(
        Answer::Fail(StopReason::Error, "429 rate limited"),
        Answer::Text("unused"),
    );
    let err = run(&two_turns(), &script, &CompactionOptions::default())
        .await
        .expect_err("fails");
    assert_eq!(
        err,
        CompactionError::Summary {
            part: SummaryPart::History,
            model: "scripted/summarizer".into(),
            message: "429 rate limited".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "Summarization failed: 429 rate limited (model scripted/summarizer; check its API key \
         and connection, then try again)"
    );

    let script = Scripted::new(Answer::Text("HISTORY"), Answer::Fail(StopReason::Error, ""));
    let err = run(&split_turn(true), &script, &CompactionOptions::default())
        .await
        .expect_err("fails");
    assert!(err
        .to_string()
        .starts_with("Turn prefix summarization failed: Unknown error"));

    let script = Scripted::new(Answer::Text("  \n"), Answer::Text("unused"));
    let err = run(&two_turns(), &script, &CompactionOptions::default())
        .await
        .expect_err("fails");
    assert!(matches!(err, CompactionError::EmptySummary { .. }));
}

#[tokio::test]
async fn cancellation_ends_compaction() {
    let script = Scripted::new(
        Answer::Fail(StopReason::Aborted, "Request was aborted"),
        Answer::Text("unused"),
    );
    let err = run(&two_turns(), &script, &CompactionOptions::default()).await;
    assert_eq!(err, Err(CompactionError::Aborted));

    // A stream that never ends still gives way to the token.
    let script = Scripted::new(Answer::CancelAndHang, Answer::Text("unused"));
    let err = run(&two_turns(), &script, &CompactionOptions::default()).await;
    assert_eq!(err, Err(CompactionError::Aborted));

    // Already cancelled: the model is not called.
    let script = Scripted::new(Answer::Text("S"), Answer::Text("P"));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = compact(
        &two_turns(),
        &model(true),
        &script.stream_fn(),
        &CompactionOptions::default(),
        &cancel,
    )
    .await;
    assert_eq!(err, Err(CompactionError::Aborted));
    assert_eq!(script.calls().len(), 0);
}
