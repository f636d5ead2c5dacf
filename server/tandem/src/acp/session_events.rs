//! The session layer's events (compactions, retries) as ACP updates, for clients that asked for
//! them: a compaction as `compaction_update` upserts (`in_progress`, then `completed` with its
//! summary, `failed` with the error or `cancelled`) when the client announced
//! `session.compaction`; a retry, a compaction that failed and a recovery that gave up as
//! `notice`s when it announced `session.notices`. A client that announced neither gets none of
//! them (ACP forbids sending them), as before.

use agent_client_protocol::v1::schema::{
    CompactionStatus, CompactionSummaryChunk, CompactionUpdate, ContentBlock, Notice,
    NoticeSeverity, SessionUpdate, TextContent,
};
use tandem_coding::agent_session::{CompactionReason, SessionEvent};

/// What the client announced it shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shown {
    /// `clientCapabilities.session.compaction`.
    pub compaction: bool,
    /// `clientCapabilities.session.notices`.
    pub notices: bool,
}

/// Follows one session's compactions (each gets an id of its own).
#[derive(Debug, Default)]
pub struct SessionEvents {
    shown: Shown,
    compactions: u64,
    /// The compaction running now, by id.
    running: Option<String>,
}

impl SessionEvents {
    /// For a client that shows `shown`.
    pub fn new(shown: Shown) -> Self {
        SessionEvents {
            shown,
            ..SessionEvents::default()
        }
    }

    /// The updates for `event`.
    pub fn translate(&mut self, event: &SessionEvent) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        match event {
            SessionEvent::CompactionStart { reason } => {
                self.compactions += 1;
                let id = format!("compaction-{}", self.compactions);
                self.running = Some(id.clone());
                if self.shown.compaction {
                    out.push(SessionUpdate::CompactionUpdate(
                        CompactionUpdate::new(id, CompactionStatus::InProgress).summary(vec![
                            text(format!("Compacting the conversation ({})", why(*reason))),
                        ]),
                    ));
                }
            }
            SessionEvent::CompactionEnd {
                result,
                aborted,
                error_message,
                ..
            } => {
                // An end without a start (a recovery that gave up before compacting) has no
                // compaction to update.
                let id = self.running.take();
                if let (true, Some(id)) = (self.shown.compaction, &id) {
                    let (update, chunks) = match (result, aborted) {
                        (Some(result), _) => (
                            // The summary replaces the "compacting" text, in chunks.
                            CompactionUpdate::new(id.clone(), CompactionStatus::Completed)
                                .summary(Vec::new()),
                            summary_chunks(id, &result.summary),
                        ),
                        (None, true) => (
                            CompactionUpdate::new(id.clone(), CompactionStatus::Cancelled),
                            Vec::new(),
                        ),
                        (None, false) => (
                            CompactionUpdate::new(id.clone(), CompactionStatus::Failed).error(
                                error_message
                                    .clone()
                                    .unwrap_or_else(|| "the compaction failed".into()),
                            ),
                            Vec::new(),
                        ),
                    };
                    out.push(SessionUpdate::CompactionUpdate(update));
                    out.extend(chunks);
                }
                if let (true, None, false, Some(error)) =
                    (self.shown.notices, result, *aborted, error_message)
                {
                    out.push(notice(
                        NoticeSeverity::Error,
                        "The conversation could not be compacted",
                        error,
                    ));
                }
            }
            SessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } if self.shown.notices => {
                out.push(notice(
                    NoticeSeverity::Warning,
                    &format!(
                        "Retrying in {:.1} s (attempt {attempt} of {max_attempts})",
                        *delay_ms as f64 / 1000.0
                    ),
                    error_message,
                ));
            }
            SessionEvent::AutoRetryEnd {
                success: false,
                attempt,
                final_error,
            } if self.shown.notices => {
                out.push(notice(
                    NoticeSeverity::Error,
                    &format!("Gave up after {attempt} attempts"),
                    final_error.as_deref().unwrap_or("the model kept failing"),
                ));
            }
            _ => {}
        }
        out
    }
}

/// A summary as `compaction_summary_chunk`s, one per paragraph (a client can render each as it
/// comes).
fn summary_chunks(id: &str, summary: &str) -> Vec<SessionUpdate> {
    summary
        .split_inclusive("\n\n")
        .map(|paragraph| {
            SessionUpdate::CompactionSummaryChunk(CompactionSummaryChunk::new(
                id.to_string(),
                text(paragraph.to_string()),
            ))
        })
        .collect()
}

fn why(reason: CompactionReason) -> &'static str {
    match reason {
        CompactionReason::Threshold => "the context is nearly full",
        CompactionReason::Overflow => "the model refused the context as too long",
        CompactionReason::Manual => "asked for",
    }
}

fn text(s: String) -> ContentBlock {
    ContentBlock::Text(TextContent::new(s))
}

fn notice(severity: NoticeSeverity, title: &str, description: &str) -> SessionUpdate {
    SessionUpdate::Notice(Notice::new(severity, title).description(description.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use tandem_coding::agent_session::CompactionSummaryInfo;

    fn json_of(updates: &[SessionUpdate]) -> Vec<Value> {
        updates
            .iter()
            .map(|u| serde_json::to_value(u).expect("serializes"))
            .collect()
    }

    fn end(result: Option<&str>, aborted: bool, error: Option<&str>) -> SessionEvent {
        SessionEvent::CompactionEnd {
            reason: CompactionReason::Manual,
            result: result.map(|summary| {
                Box::new(CompactionSummaryInfo {
                    summary: summary.into(),
                    first_kept_entry_id: "e1".into(),
                    tokens_before: 100,
                    estimated_tokens_after: 10,
                    usage: Default::default(),
                    details: json!({}),
                })
            }),
            aborted,
            will_retry: false,
            error_message: error.map(str::to_string),
        }
    }

    const START: SessionEvent = SessionEvent::CompactionStart {
        reason: CompactionReason::Threshold,
    };

    #[test]
    fn a_compaction_is_one_upserted_entity_with_its_summary_in_chunks() {
        let mut events = SessionEvents::new(Shown {
            compaction: true,
            notices: false,
        });
        let start = json_of(&events.translate(&START));
        assert_eq!(start[0]["sessionUpdate"], "compaction_update");
        assert_eq!(start[0]["compactionId"], "compaction-1");
        assert_eq!(start[0]["status"], "in_progress");
        let done = json_of(&events.translate(&end(Some("## Goal\n\nFix it"), false, None)));
        assert_eq!(
            done,
            vec![
                json!({"sessionUpdate": "compaction_update", "compactionId": "compaction-1",
                       "status": "completed", "summary": []}),
                json!({"sessionUpdate": "compaction_summary_chunk",
                       "compactionId": "compaction-1",
                       "content": {"type": "text", "text": "## Goal\n\n"}}),
                json!({"sessionUpdate": "compaction_summary_chunk",
                       "compactionId": "compaction-1",
                       "content": {"type": "text", "text": "Fix it"}}),
            ]
        );
        // The next one has an id of its own; a cancelled one says so.
        let start = json_of(&events.translate(&START));
        assert_eq!(start[0]["compactionId"], "compaction-2");
        let cancelled = json_of(&events.translate(&end(None, true, None)));
        assert_eq!(cancelled[0]["status"], "cancelled");
    }

    #[test]
    fn failures_and_retries_are_notices_only_for_clients_that_show_them() {
        let mut silent = SessionEvents::new(Shown::default());
        assert!(silent.translate(&START).is_empty());
        assert!(silent
            .translate(&end(None, false, Some("no key")))
            .is_empty());

        let mut both = SessionEvents::new(Shown {
            compaction: true,
            notices: true,
        });
        both.translate(&START);
        let failed = json_of(&both.translate(&end(None, false, Some("no key"))));
        assert_eq!(failed[0]["status"], "failed");
        assert_eq!(failed[0]["error"], "no key");
        assert_eq!(failed[1]["sessionUpdate"], "notice");
        assert_eq!(failed[1]["severity"], "error");
        // A recovery that gave up before compacting: a notice, no compaction to update.
        let gave_up = json_of(&both.translate(&end(None, false, Some("still too long"))));
        assert_eq!(gave_up.len(), 1);
        assert_eq!(gave_up[0]["sessionUpdate"], "notice");
        let retry = json_of(&both.translate(&SessionEvent::AutoRetryStart {
            attempt: 1,
            max_attempts: 3,
            delay_ms: 2000,
            error_message: "overloaded".into(),
        }));
        assert_eq!(
            retry,
            vec![json!({"sessionUpdate": "notice", "severity": "warning",
                        "title": "Retrying in 2.0 s (attempt 1 of 3)",
                        "description": "overloaded"})]
        );
    }
}
