//! What a front door that drives the session by commands (RPC mode) asks of it besides
//! prompts: the queues and their modes, automatic compaction and retry switched at run time,
//! the numbers of a session (`SessionStats`), the prompts it can be forked at, and the last
//! answer's text. pi's `AgentSession` has the same operations; their JSON shapes are pi's.

use std::sync::atomic::Ordering;

use serde::Serialize;
use tandem_agent::{AgentMessage, QueueMode};
use tandem_ai::sync::lock;
use tandem_ai::{AssistantBlock, CancellationToken, Message, ThinkingLevel};

use super::{user_text, AgentSession, AgentSessionEvent, SessionError, SessionEvent};
use crate::compaction;
use crate::session::EntryKind;

/// Tokens kept free when summarizing a branch (pi's `branchSummary.reserveTokens` default).
const BRANCH_RESERVE_TOKENS: u64 = 16_384;
/// The window assumed for a model that names none (pi's).
const DEFAULT_WINDOW: u64 = 128_000;

/// Tokens of a session, summed over its assistant messages (pi's `SessionStats.tokens`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenTotals {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens read from the cache.
    pub cache_read: u64,
    /// Tokens written to the cache.
    pub cache_write: u64,
    /// All of them.
    pub total: u64,
}

/// How full the model's context window is (pi's `contextUsage`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    /// Estimated tokens of the current context.
    pub tokens: u64,
    /// The model's window.
    pub context_window: u64,
    /// `tokens` as a percentage of the window.
    pub percent: f64,
}

/// A session's numbers, as pi's `get_session_stats` answers them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    /// The session file, once written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    /// The session id.
    pub session_id: String,
    /// User messages in the session.
    pub user_messages: u64,
    /// Assistant messages.
    pub assistant_messages: u64,
    /// Tool calls the assistant made.
    pub tool_calls: u64,
    /// Tool results.
    pub tool_results: u64,
    /// Every message.
    pub total_messages: u64,
    /// Tokens used.
    pub tokens: TokenTotals,
    /// Cost in dollars.
    pub cost: f64,
    /// The context window's use, when the model has a window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_usage: Option<ContextUsage>,
}

/// A user prompt the session can be forked at (pi's `get_fork_messages` item).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkPoint {
    /// The prompt's entry.
    pub entry_id: String,
    /// Its text.
    pub text: String,
}

impl AgentSession {
    /// Sets the thinking level, clamped to what the model supports; when that changes it, the
    /// change is recorded and reported (`thinking_level_changed`). The level now in effect.
    pub async fn change_thinking_level(
        &self,
        level: ThinkingLevel,
    ) -> Result<ThinkingLevel, SessionError> {
        let (model, current) = self
            .agent
            .with_state(|s| (s.model.clone(), s.thinking_level));
        let level = model.effective_thinking(level);
        if level != current {
            self.set_thinking_level(level)?;
            self.announce_thinking_level().await;
        }
        Ok(level)
    }

    /// Reports the current thinking level (`thinking_level_changed`), after a change made
    /// another way (a model switch that clamped it).
    pub async fn announce_thinking_level(&self) {
        let level = self.agent.with_state(|s| s.thinking_level);
        self.shared
            .emit(AgentSessionEvent::Session(
                SessionEvent::ThinkingLevelChanged { level },
            ))
            .await;
    }

    /// Names the session (a `session_info` entry) and reports it (`session_info_changed`).
    pub async fn set_session_name(&self, name: &str) -> Result<(), SessionError> {
        self.with_session(|m| m.append_session_info(name))
            .map_err(|e| SessionError::Persistence(e.to_string()))?;
        self.shared
            .emit(AgentSessionEvent::Session(
                SessionEvent::SessionInfoChanged {
                    name: Some(name.to_string()),
                },
            ))
            .await;
        Ok(())
    }

    /// Empties both queues; the texts that were waiting (steering, follow-ups), for the client
    /// to put back in its editor.
    pub async fn clear_queue(&self) -> (Vec<String>, Vec<String>) {
        let (steering, follow_up) = self.agent.clear_queues();
        lock(&self.shared.queued).clear();
        self.emit_queue_update().await;
        let texts = |messages: Vec<AgentMessage>| messages.iter().filter_map(user_text).collect();
        (texts(steering), texts(follow_up))
    }

    /// Messages waiting in the queues.
    pub fn pending_message_count(&self) -> usize {
        self.agent.queued_steering().len() + self.agent.queued_follow_ups().len()
    }

    /// How steering messages are delivered.
    pub fn steering_mode(&self) -> QueueMode {
        lock(&self.settings).steering_mode()
    }

    /// How follow-ups are delivered.
    pub fn follow_up_mode(&self) -> QueueMode {
        lock(&self.settings).follow_up_mode()
    }

    /// Sets how steering messages are delivered (for this session; settings files unchanged).
    pub fn set_steering_mode(&self, mode: QueueMode) {
        lock(&self.settings).steering_mode = Some(mode);
        self.agent.set_steering_mode(mode);
    }

    /// Sets how follow-ups are delivered (for this session).
    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        lock(&self.settings).follow_up_mode = Some(mode);
        self.agent.set_follow_up_mode(mode);
    }

    /// Whether the context is compacted automatically.
    pub fn auto_compaction_enabled(&self) -> bool {
        lock(&self.settings).compaction().enabled
    }

    /// Turns automatic compaction on or off (for this session).
    pub fn set_auto_compaction(&self, enabled: bool) {
        let mut settings = lock(&self.settings);
        let mut compaction = settings.compaction.clone().unwrap_or_default();
        compaction.enabled = Some(enabled);
        settings.compaction = Some(compaction);
    }

    /// Turns automatic retry of transient failures on or off (for this session).
    pub fn set_auto_retry(&self, enabled: bool) {
        let mut settings = lock(&self.settings);
        let mut retry = settings.retry.unwrap_or_default();
        retry.enabled = Some(enabled);
        settings.retry = Some(retry);
    }

    /// Cancels a retry that is waiting for its delay (nothing when none waits): the run ends
    /// with the failure.
    pub fn abort_retry(&self) {
        if self.retry_waiting.load(Ordering::Acquire) {
            lock(&self.run_cancel).cancel();
        }
    }

    /// Whether a compaction is running.
    pub fn is_compacting(&self) -> bool {
        self.compacting.load(Ordering::Acquire)
    }

    /// The text of the last answer: the newest assistant message that ended normally or has
    /// text (a turn that failed, was aborted or only called tools is skipped unless it has
    /// text), its text blocks joined; `None` when there is none.
    pub fn last_assistant_text(&self) -> Option<String> {
        let has_text = |a: &tandem_ai::AssistantMessage| {
            a.content
                .iter()
                .any(|b| matches!(b, AssistantBlock::Text(t) if !t.text.trim().is_empty()))
        };
        let last = self.agent.with_state(|s| {
            s.messages
                .iter()
                .rev()
                .filter_map(AgentMessage::as_assistant)
                .find(|a| a.stop_reason == tandem_ai::StopReason::Stop || has_text(a))
                .cloned()
        })?;
        Some(
            last.content
                .iter()
                .filter_map(|b| match b {
                    AssistantBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect(),
        )
    }

    /// Every user prompt of the session file with text, in order: where it can be forked.
    pub fn fork_points(&self) -> Vec<ForkPoint> {
        self.with_session(|s| {
            s.entries()
                .iter()
                .filter_map(|e| match &e.kind {
                    EntryKind::Message {
                        message: AgentMessage::Llm(Message::User(u)),
                    } => Some(ForkPoint {
                        entry_id: e.id.clone(),
                        text: u.content.text(),
                    }),
                    _ => None,
                })
                .filter(|p| !p.text.is_empty())
                .collect()
        })
    }

    /// Moves the session to entry `id` of its tree (pi's `/tree`): the next prompt continues
    /// from there, on a new branch, and the model's context becomes that path's. Choosing a
    /// user prompt moves to just before it and gives its text back, so the user can edit and
    /// send it again; any other entry becomes the leaf. Nothing is written until the next
    /// prompt. Refused while a run is going on.
    pub fn navigate(&self, id: &str) -> Result<Option<String>, SessionError> {
        if self.agent.is_running() {
            return Err(SessionError::Busy);
        }
        let (position, prompt) = self.navigation_target(id)?;
        let messages = self.with_session(|s| {
            match &position {
                Some(position) => s.branch(position),
                None => {
                    s.reset_leaf();
                    Ok(())
                }
            }
            .map_err(|e| SessionError::Persistence(e.to_string()))?;
            Ok::<_, SessionError>(s.build_context().messages)
        })?;
        self.agent.update_state(|s| s.messages = messages);
        Ok(prompt)
    }

    /// Whether moving to entry `id` leaves anything behind that a summary could keep: the
    /// current branch has messages the new position does not share.
    pub fn navigation_leaves_messages(&self, id: &str) -> bool {
        let Ok((position, _)) = self.navigation_target(id) else {
            return false;
        };
        self.with_session(|s| {
            let Some(leaf) = s.leaf().map(str::to_string) else {
                return false;
            };
            let left = s.entries_left(&leaf, position.as_deref());
            !compaction::prepare_branch(&left, 0).messages.is_empty()
        })
    }

    /// [`AgentSession::navigate`], with the branch being left summarized by the model first
    /// (pi's `/tree` with a summary): the summary is recorded as a `branch_summary` entry at
    /// the new position, which becomes the leaf, so the model's context carries it.
    /// `instructions` focus the summary. When nothing is left behind this is a plain move.
    /// A failed or stopped summary ([`AgentSession::abort`]) leaves the session where it was.
    pub async fn navigate_summarized(
        &self,
        id: &str,
        instructions: Option<String>,
    ) -> Result<Option<String>, SessionError> {
        if self.agent.is_running() {
            return Err(SessionError::Busy);
        }
        let (position, prompt) = self.navigation_target(id)?;
        let preparation = self.with_session(|s| {
            let leaf = s.leaf()?.to_string();
            let left = s.entries_left(&leaf, position.as_deref());
            Some(left)
        });
        let (model, options) = self.summary_options(instructions)?;
        let settings = lock(&self.settings).branch_summary.unwrap_or_default();
        let reserve = settings.reserve_tokens.unwrap_or(BRANCH_RESERVE_TOKENS);
        let window = if model.context_window > 0 {
            model.context_window
        } else {
            DEFAULT_WINDOW
        };
        let preparation = compaction::prepare_branch(
            preparation.as_deref().unwrap_or_default(),
            window.saturating_sub(reserve).max(1),
        );
        let cancel = CancellationToken::new();
        *lock(&self.run_cancel) = cancel.clone();
        let written = compaction::summarize_branch(
            &preparation,
            &model,
            &self.stream_fn,
            reserve,
            &options,
            &cancel,
        )
        .await;
        let summary = match written {
            Err(_) if cancel.is_cancelled() => {
                return Err(SessionError::Aborted("the branch summary"))
            }
            Err(e) => return Err(SessionError::Compaction(e.to_string())),
            Ok(None) => return self.navigate(id),
            Ok(Some(summary)) => summary,
        };
        if self.agent.is_running() {
            return Err(SessionError::Busy);
        }
        let messages = self.with_session(|s| {
            s.branch_with_summary(
                position.as_deref(),
                summary.summary,
                Some(summary.details.to_value()),
                None,
                serde_json::to_value(summary.usage).ok(),
            )
            .map_err(|e| SessionError::Persistence(e.to_string()))?;
            Ok::<_, SessionError>(s.build_context().messages)
        })?;
        self.agent.update_state(|s| s.messages = messages);
        Ok(prompt)
    }

    /// Where moving to entry `id` puts the leaf (`None`: before the first entry) and the
    /// prompt given back when `id` is a user prompt.
    fn navigation_target(
        &self,
        id: &str,
    ) -> Result<(Option<String>, Option<String>), SessionError> {
        self.with_session(|s| {
            let entry = s.entry(id).ok_or_else(|| {
                SessionError::Persistence(format!("no entry {id} in the session"))
            })?;
            Ok(match &entry.kind {
                EntryKind::Message {
                    message: AgentMessage::Llm(Message::User(u)),
                } => (entry.parent_id.clone(), Some(u.content.text())),
                _ => (Some(id.to_string()), None),
            })
        })
    }

    /// The session's numbers: messages by role and tool calls over every entry of the file,
    /// tokens and cost over its assistant messages, and the current context's use.
    pub fn stats(&self) -> SessionStats {
        let mut stats = self.with_session(|s| SessionStats {
            session_file: s.session_file().map(|p| p.display().to_string()),
            session_id: s.session_id().to_string(),
            user_messages: 0,
            assistant_messages: 0,
            tool_calls: 0,
            tool_results: 0,
            total_messages: 0,
            tokens: TokenTotals::default(),
            cost: 0.0,
            context_usage: None,
        });
        // Counted as the entries were read and appended: nothing is read back here.
        let totals = self.with_session(|s| s.totals().clone());
        stats.total_messages = totals.messages;
        stats.user_messages = totals.user_messages;
        stats.tool_results = totals.tool_results;
        stats.assistant_messages = totals.assistant_messages;
        stats.tool_calls = totals.tool_calls;
        // Every model call of the file: answers, summaries and usage entries (pi 1.6).
        stats.tokens.input = totals.usage.input;
        stats.tokens.output = totals.usage.output;
        stats.tokens.cache_read = totals.usage.cache_read;
        stats.tokens.cache_write = totals.usage.cache_write;
        stats.cost = totals.usage.cost.total;
        let t = &mut stats.tokens;
        t.total = t.input + t.output + t.cache_read + t.cache_write;
        let (window, tokens) = self.agent.with_state(|s| {
            (
                s.model.context_window,
                crate::compaction::estimate_context_tokens(&s.messages).tokens,
            )
        });
        if window > 0 {
            stats.context_usage = Some(ContextUsage {
                tokens,
                context_window: window,
                percent: tokens as f64 / window as f64 * 100.0,
            });
        }
        stats
    }
}
