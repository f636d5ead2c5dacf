//! The conversation as the terminal shows it: session events in, finished lines out (printed
//! once into the scrollback) and the live part (the answer's unfinished tail, running tools)
//! drawn under them until it is finished too.
//!
//! An answer's text goes through [`MarkdownStream`]: a block is rendered once, when it is
//! complete, so streaming costs stay linear in the text; the unfinished tail is rendered per
//! frame, bounded by the rows it can show.

use std::path::PathBuf;
use std::sync::Arc;

use ratatui::text::{Line, Span};
use tandem_agent::{AgentEvent, AgentMessage};
use tandem_ai::{AssistantMessageEvent, Message, StopReason, UserContent};
use tandem_coding::agent_session::{AgentSessionEvent, CompactionReason, SessionEvent};
use tandem_coding::calls::CallRecords;
use tandem_coding::messages::{is_hidden, CodingMessage};

use super::cards::{result_text, CallState, Card};
use super::markdown::MarkdownStream;
use super::text::{sanitize, wrap, wrap_with_prefix};
use super::theme::Theme;

/// The streamed block of the answer being written.
enum Block {
    /// Answer text, as markdown.
    Text(MarkdownStream),
    /// Thinking: plain text, dimmed; `lines` counts the finished lines (for the collapsed
    /// summary), `partial` is the unfinished line.
    Thinking {
        partial: String,
        lines: usize,
        all: String,
    },
}

/// Something finished on screen, kept as its source so it can be printed again at another
/// width.
enum Item {
    /// Styled lines (notes, replayed history), wrapped when printed.
    Lines(Vec<Line<'static>>),
    /// An answer's markdown.
    Answer(String),
    /// A prompt.
    User(String),
    /// A thinking block's text.
    Thinking(String),
    /// A finished call (shown whole when `true`, else as Ctrl+O says).
    Card(Box<Card>, bool),
}

/// The conversation's state on screen; see the module docs.
pub struct Transcript {
    theme: Theme,
    cwd: PathBuf,
    calls: Arc<CallRecords>,
    width: u16,
    /// Thinking shown (Ctrl+T); when hidden, a thinking block is one summary line.
    pub show_thinking: bool,
    /// Tool output shown whole (Ctrl+O).
    pub expand_tools: bool,
    /// Finished lines not printed yet.
    pending: Vec<Line<'static>>,
    /// Everything finished, as source, to print again at a new width.
    items: Vec<Item>,
    /// The block being streamed.
    block: Option<Block>,
    /// Calls not finished, in the order they started.
    cards: Vec<Card>,
    /// A run is going on.
    pub busy: bool,
    /// What the session is doing besides answering (compacting, waiting to retry).
    pub status: Option<String>,
    /// Queued steering and follow-up messages.
    pub queue: (Vec<String>, Vec<String>),
    /// Whether anything changed since the last frame.
    pub dirty: bool,
    /// A failed answer's error, held until it is known whether a retry follows (the retry's
    /// notice then says it instead).
    failed: Option<String>,
}

impl Transcript {
    /// An empty transcript for a session in `cwd` whose calls are recorded in `calls`.
    pub fn new(theme: Theme, cwd: PathBuf, calls: Arc<CallRecords>, width: u16) -> Transcript {
        Transcript {
            theme,
            cwd,
            calls,
            width: width.max(1),
            show_thinking: true,
            expand_tools: false,
            pending: Vec::new(),
            items: Vec::new(),
            block: None,
            cards: Vec::new(),
            busy: false,
            status: None,
            queue: (Vec::new(), Vec::new()),
            dirty: true,
            failed: None,
        }
    }

    /// The width lines are made for.
    pub fn width(&self) -> u16 {
        self.width
    }

    /// The theme.
    pub fn theme(&self) -> &Theme {
        &self.theme
    }

    /// A new session (its call records); what is on screen stays.
    pub fn set_calls(&mut self, calls: Arc<CallRecords>) {
        self.calls = calls;
    }

    /// The terminal's width changed: what is printed from now on uses it.
    pub fn set_width(&mut self, width: u16) {
        self.width = width.max(1);
        self.dirty = true;
    }

    /// Takes the finished lines to print: the pending ones and the answer's blocks completed
    /// since the last call.
    pub fn take_finished(&mut self) -> Vec<Line<'static>> {
        if let Some(Block::Text(stream)) = &mut self.block {
            let finished = stream.take_finished(self.width, &self.theme);
            self.pending.extend(finished);
        }
        std::mem::take(&mut self.pending)
    }

    /// Adds a line of the user's own (a command's answer, a notice) to print.
    pub fn note(&mut self, text: &str, style: ratatui::style::Style) {
        self.end_block();
        let lines = sanitize(text)
            .split('\n')
            .map(|line| Line::from(Span::styled(line.to_string(), style)))
            .collect();
        self.commit(Item::Lines(lines));
    }

    /// Adds styled lines as they are (wrapped) to print.
    pub fn lines(&mut self, lines: Vec<Line<'static>>) {
        self.end_block();
        self.commit(Item::Lines(lines));
    }

    /// Adds a prompt to print.
    pub fn prompt(&mut self, text: &str) {
        self.end_block();
        self.commit(Item::User(text.to_string()));
    }

    /// Adds an answer's text (markdown) to print.
    pub fn answer(&mut self, text: &str) {
        self.end_block();
        self.commit(Item::Answer(text.to_string()));
    }

    /// Prints `item` and keeps it for a reprint.
    fn commit(&mut self, item: Item) {
        self.pending.extend(self.render_item(&item));
        self.items.push(item);
        self.dirty = true;
    }

    /// `item`'s lines at the current width.
    fn render_item(&self, item: &Item) -> Vec<Line<'static>> {
        let width = self.width;
        match item {
            Item::Lines(lines) => lines.iter().flat_map(|l| wrap(l.clone(), width)).collect(),
            Item::Answer(text) => {
                let mut out = super::markdown::render(text, width, &self.theme);
                out.push(Line::default());
                out
            }
            Item::User(text) => self.user_lines(text),
            Item::Thinking(text) => self.thinking_lines(text),
            Item::Card(card, whole) => {
                let expanded = *whole || self.expand_tools;
                let mut out = card.render(width, &self.cwd, &self.theme, false, expanded);
                out.push(Line::default());
                out
            }
        }
    }

    /// Everything printed so far and the finished part of the answer being streamed, at the
    /// current width (after a resize: the screen and its history are printed again).
    pub fn reprint(&mut self) -> Vec<Line<'static>> {
        let mut out: Vec<Line<'static>> = self
            .items
            .iter()
            .flat_map(|i| self.render_item(i))
            .collect();
        if let Some(Block::Text(stream)) = &mut self.block {
            let mut fresh = MarkdownStream::new();
            fresh.push(stream.text());
            out.extend(fresh.take_finished(self.width, &self.theme));
            *stream = fresh;
        }
        self.pending.clear();
        out
    }

    /// An error to show.
    pub fn error(&mut self, text: &str) {
        let style = self.theme.error;
        self.note(&format!("Error: {text}"), style);
    }

    /// The live part at the current width, at most `rows` lines (the last ones).
    pub fn live(&self, rows: usize) -> Vec<Line<'static>> {
        let mut cards: Vec<Line<'static>> = Vec::new();
        for card in &self.cards {
            cards.extend(card.render(self.width, &self.cwd, &self.theme, true, false));
        }
        let room = rows.saturating_sub(cards.len());
        let mut out = match &self.block {
            Some(Block::Text(stream)) if room > 0 => stream.tail(self.width, room, &self.theme),
            Some(Block::Thinking { partial, lines, .. }) if room > 0 => {
                if self.show_thinking {
                    let line = Line::from(Span::styled(
                        sanitize(partial).into_owned(),
                        self.theme.thinking,
                    ));
                    let mut wrapped = wrap(line, self.width);
                    let skip = wrapped.len().saturating_sub(room);
                    wrapped.drain(..skip);
                    wrapped
                } else {
                    vec![Line::from(Span::styled(
                        format!("∴ Thinking… ({} lines)", lines),
                        self.theme.thinking,
                    ))]
                }
            }
            _ => Vec::new(),
        };
        out.extend(cards);
        let skip = out.len().saturating_sub(rows);
        out.drain(..skip);
        out
    }

    /// Applies one session event.
    pub fn apply(&mut self, event: &AgentSessionEvent) {
        self.dirty = true;
        match event {
            AgentSessionEvent::Session(
                SessionEvent::AutoRetryStart { .. } | SessionEvent::AutoRetryEnd { .. },
            ) => self.failed = None,
            AgentSessionEvent::Session(SessionEvent::AgentSettled { .. }) => self.show_failure(),
            AgentSessionEvent::Agent(e) if matches!(**e, AgentEvent::MessageStart { .. }) => {
                self.show_failure()
            }
            _ => {}
        }
        match event {
            AgentSessionEvent::Agent(event) => self.agent(event),
            AgentSessionEvent::Session(event) => self.session(event),
        }
    }

    /// Shows a held failure: no retry followed it.
    fn show_failure(&mut self) {
        if let Some(error) = self.failed.take() {
            self.error(&error);
        }
    }

    fn agent(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::AgentStart => self.busy = true,
            AgentEvent::MessageStart { message } => self.message_start(message),
            AgentEvent::MessageUpdate {
                assistant_message_event,
            } => self.stream(assistant_message_event),
            AgentEvent::MessageEnd { message } => self.message_end(message),
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                let card = self.card(tool_call_id, tool_name);
                card.args = args.clone();
                card.state = CallState::Running;
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                partial_result,
                ..
            } => {
                let card = self.card(tool_call_id, tool_name);
                card.output = result_text(&partial_result.content);
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
                ..
            } => {
                let change = self.calls.take(tool_call_id).and_then(|r| r.change);
                let card = self.card(tool_call_id, tool_name);
                card.output = result_text(&result.content);
                card.state = if *is_error {
                    CallState::Failed
                } else {
                    CallState::Done
                };
                card.change = change;
                self.finish_card(tool_call_id);
            }
            _ => {}
        }
    }

    fn session(&mut self, event: &SessionEvent) {
        match event {
            SessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => {
                let style = self.theme.warning;
                self.note(
                    &format!(
                        "⟳ Retrying in {:.1}s (attempt {attempt} of {max_attempts}): {}",
                        *delay_ms as f64 / 1000.0,
                        error_message
                    ),
                    style,
                );
            }
            SessionEvent::AutoRetryEnd {
                success: false,
                final_error,
                attempt,
            } => {
                let text = format!(
                    "Gave up after {attempt} attempt{}: {}",
                    if *attempt == 1 { "" } else { "s" },
                    final_error.as_deref().unwrap_or("the request kept failing")
                );
                self.error(&text);
            }
            SessionEvent::AutoRetryEnd { .. } => {}
            SessionEvent::CompactionStart { reason } => {
                self.status = Some(match reason {
                    CompactionReason::Manual => "Compacting the context…".to_string(),
                    CompactionReason::Threshold => {
                        "Compacting the context (it is nearly full)…".to_string()
                    }
                    CompactionReason::Overflow => {
                        "Compacting the context (the model's window overflowed)…".to_string()
                    }
                });
            }
            SessionEvent::CompactionEnd {
                result,
                aborted,
                error_message,
                ..
            } => {
                self.status = None;
                if *aborted {
                    let style = self.theme.dim;
                    self.note("Compaction cancelled.", style);
                } else if let Some(error) = error_message {
                    self.error(&format!("compaction failed: {error}"));
                } else if let Some(result) = result {
                    let style = self.theme.dim;
                    let after = format!(" → ~{}", tokens(result.estimated_tokens_after));
                    self.note(
                        &format!(
                            "Context compacted ({}{after} tokens).",
                            tokens(result.tokens_before)
                        ),
                        style,
                    );
                }
            }
            SessionEvent::QueueUpdate {
                steering,
                follow_up,
            } => self.queue = (steering.clone(), follow_up.clone()),
            SessionEvent::AgentSettled { aborted } => {
                self.end_block();
                for card in std::mem::take(&mut self.cards) {
                    let mut card = card;
                    if matches!(card.state, CallState::Running | CallState::Streaming) {
                        card.state = CallState::Failed;
                        if card.output.is_empty() {
                            card.output = "Not run: the turn ended first.".to_string();
                        }
                    }
                    self.commit(Item::Card(Box::new(card), true));
                }
                if *aborted {
                    let style = self.theme.dim;
                    self.note("Stopped.", style);
                }
                self.busy = false;
                self.status = None;
            }
            // An extension handled the prompt (its `input` handler): no run, nothing to show.
            SessionEvent::PromptHandled => self.busy = false,
            _ => {}
        }
    }

    fn message_start(&mut self, message: &AgentMessage) {
        if is_hidden(message) {
            return;
        }
        match message {
            AgentMessage::Llm(Message::User(user)) => {
                self.end_block();
                self.user_message(&content_text(&user.content));
            }
            AgentMessage::Llm(Message::Assistant(_)) => self.end_block(),
            _ => {}
        }
    }

    /// A prompt as the user typed it.
    fn user_message(&mut self, text: &str) {
        self.commit(Item::User(text.to_string()));
    }

    fn user_lines(&self, text: &str) -> Vec<Line<'static>> {
        let theme = &self.theme;
        let mut lines = Vec::new();
        for (i, line) in sanitize(text).split('\n').enumerate() {
            let marker = if i == 0 { "› " } else { "  " };
            lines.extend(wrap_with_prefix(
                Line::from(Span::styled(line.to_string(), theme.user)),
                self.width,
                vec![Span::styled(marker, theme.accent)],
                vec![Span::raw("  ")],
            ));
        }
        lines.push(Line::default());
        lines
    }

    fn thinking_lines(&self, text: &str) -> Vec<Line<'static>> {
        let style = self.theme.thinking;
        let mut out: Vec<Line<'static>> = if self.show_thinking {
            sanitize(text)
                .split('\n')
                .flat_map(|l| wrap(Line::from(Span::styled(l.to_string(), style)), self.width))
                .collect()
        } else {
            let total = text.lines().count();
            vec![Line::from(Span::styled(
                format!(
                    "∴ Thought for {total} line{} (Ctrl+T shows thinking)",
                    if total == 1 { "" } else { "s" }
                ),
                style,
            ))]
        };
        out.push(Line::default());
        out
    }

    fn message_end(&mut self, message: &AgentMessage) {
        if is_hidden(message) {
            return;
        }
        match message {
            AgentMessage::Llm(Message::Assistant(answer)) => {
                self.end_block();
                match answer.stop_reason {
                    StopReason::Error => {
                        self.failed = Some(
                            answer
                                .error_message
                                .clone()
                                .unwrap_or_else(|| "the model call failed".to_string()),
                        );
                    }
                    StopReason::Aborted => {}
                    StopReason::Length => {
                        let style = self.theme.warning;
                        self.note("The answer was cut at the model's output limit.", style);
                    }
                    _ => {}
                }
            }
            AgentMessage::Custom(custom) => match CodingMessage::parse(custom) {
                Some(CodingMessage::BashExecution(bash)) => {
                    let mut card = Card::new("", "bash");
                    card.args = serde_json::json!({ "command": bash.command });
                    card.output = bash.output.clone();
                    card.state = match bash.exit_code {
                        Some(0) => CallState::Done,
                        _ => CallState::Failed,
                    };
                    self.commit(Item::Card(Box::new(card), false));
                }
                Some(CodingMessage::Custom(ext)) => {
                    let style = self.theme.dim;
                    self.note(&ext.content.text(), style);
                }
                Some(CodingMessage::BranchSummary(summary)) => {
                    let style = self.theme.dim;
                    self.note(
                        &format!("Branch summary: {}", first_words(&summary.summary)),
                        style,
                    );
                }
                _ => {}
            },
            _ => {}
        }
    }

    fn stream(&mut self, event: &AssistantMessageEvent) {
        match event {
            AssistantMessageEvent::TextStart { .. } => {
                self.end_block();
                self.block = Some(Block::Text(MarkdownStream::new()));
            }
            AssistantMessageEvent::TextDelta { delta, .. } => match &mut self.block {
                Some(Block::Text(stream)) => stream.push(delta),
                _ => {
                    let mut stream = MarkdownStream::new();
                    stream.push(delta);
                    self.end_block();
                    self.block = Some(Block::Text(stream));
                }
            },
            AssistantMessageEvent::ThinkingStart { .. } => {
                self.end_block();
                self.block = Some(Block::Thinking {
                    partial: String::new(),
                    lines: 0,
                    all: String::new(),
                });
            }
            AssistantMessageEvent::ThinkingDelta { delta, .. } => {
                if !matches!(self.block, Some(Block::Thinking { .. })) {
                    self.end_block();
                    self.block = Some(Block::Thinking {
                        partial: String::new(),
                        lines: 0,
                        all: String::new(),
                    });
                }
                self.thinking(delta);
            }
            AssistantMessageEvent::TextEnd { .. } | AssistantMessageEvent::ThinkingEnd { .. } => {
                self.end_block()
            }
            AssistantMessageEvent::ToolcallStart { id, name, .. } => {
                self.end_block();
                self.card(id, name);
            }
            AssistantMessageEvent::ToolcallEnd { tool_call, .. } => {
                let card = self.card(&tool_call.id, &tool_call.name);
                card.args = tool_call.arguments.clone();
            }
            _ => {}
        }
    }

    /// Thinking text: finished lines printed (when shown), the rest kept.
    fn thinking(&mut self, delta: &str) {
        let show = self.show_thinking;
        let (width, style) = (self.width, self.theme.thinking);
        let Some(Block::Thinking {
            partial,
            lines,
            all,
        }) = &mut self.block
        else {
            return;
        };
        all.push_str(delta);
        partial.push_str(delta);
        if let Some(end) = partial.rfind('\n') {
            let done: String = partial.drain(..=end).collect();
            for line in done.trim_end_matches('\n').split('\n') {
                *lines += 1;
                if show {
                    self.pending.extend(wrap(
                        Line::from(Span::styled(sanitize(line).into_owned(), style)),
                        width,
                    ));
                }
            }
        }
    }

    /// Finishes the streamed block: what is left of it is printed.
    fn end_block(&mut self) {
        match self.block.take() {
            Some(Block::Text(mut stream)) => {
                let lines = stream.finish(self.width, &self.theme);
                self.pending.extend(lines);
                self.pending.push(Line::default());
                self.items.push(Item::Answer(stream.text().to_string()));
            }
            Some(Block::Thinking { partial, all, .. }) => {
                let style = self.theme.thinking;
                if self.show_thinking {
                    if !partial.is_empty() {
                        self.pending.extend(wrap(
                            Line::from(Span::styled(sanitize(&partial).into_owned(), style)),
                            self.width,
                        ));
                    }
                    self.pending.push(Line::default());
                } else {
                    let lines = self.thinking_lines(&all);
                    self.pending.extend(lines);
                }
                self.items.push(Item::Thinking(all));
            }
            None => {}
        }
    }

    /// The card of call `id`, added when new.
    fn card(&mut self, id: &str, tool: &str) -> &mut Card {
        let index = match self.cards.iter().position(|c| c.id == id) {
            Some(i) => i,
            None => {
                self.cards.push(Card::new(id, tool));
                self.cards.len() - 1
            }
        };
        &mut self.cards[index]
    }

    /// A finished call's card is printed.
    fn finish_card(&mut self, id: &str) {
        if let Some(i) = self.cards.iter().position(|c| c.id == id) {
            let card = self.cards.remove(i);
            self.commit(Item::Card(Box::new(card), false));
        }
    }
}

/// A user message's text (images named).
pub fn content_text(content: &UserContent) -> String {
    match content {
        UserContent::Text(text) => text.clone(),
        UserContent::Blocks(blocks) => result_text(blocks),
    }
}

/// A token count, short (`1.2k`, `34k`, `1.5M`).
pub fn tokens(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=9_999 => format!("{:.1}k", n as f64 / 1000.0),
        10_000..=999_999 => format!("{}k", n / 1000),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

fn first_words(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let short: String = line.chars().take(100).collect();
    if short.len() < line.len() || text.lines().nth(1).is_some() {
        format!("{short}…")
    } else {
        short
    }
}
