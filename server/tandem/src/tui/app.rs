//! The terminal mode's loop: keys and session events in, frames out.
//!
//! One task owns everything on screen. It waits for a key, a session event, a question from
//! the workspace, what an extension sent (a dialog, a notice, a status…), a command's result,
//! or the next frame; session events are applied as they come and a frame is drawn at most
//! every [`FRAME`], so a burst of thousands of deltas costs one frame, not one per delta.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures_util::{FutureExt, StreamExt};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use tandem_ai::registry::AgentDir;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::{mpsc, oneshot};

use super::commands::{self, Pending};
use super::dialogs::{Asked, Choice, TextEntry};
use super::editor::Editor;
use super::extension_ui::{ExtensionLink, FromExtension};
use super::extensions::ExtensionView;
use super::outside::Outside;
use super::picker::{Picked, Picker};
use super::screen::Screen;
use super::session::{self, FromSession, Held, History};
use super::theme::Theme;
use super::transcript::{tokens, Transcript};
use super::workspace::{Question, TerminalAsker, TuiWorkspace};
use crate::cli::RunArgs;
use crate::host::turns::Prompt;

/// The shortest time between two frames.
const FRAME: Duration = Duration::from_millis(16);
/// How long a new window size must hold before everything is printed again at it.
const RESIZE_SETTLE: Duration = Duration::from_millis(120);
/// How often a dialog that counts down is drawn again.
const COUNTDOWN_TICK: Duration = Duration::from_millis(250);
/// How long a first Ctrl+C on an empty editor waits for the second.
const EXIT_WINDOW: Duration = Duration::from_millis(1500);

/// Something a command started finished.
pub enum Done {
    /// Say this (dimmed).
    Note(String),
    /// Say this as an error.
    Error(String),
    /// Replace the session with this one.
    Replace(Box<anyhow::Result<(Held, mpsc::Receiver<FromSession>)>>),
    /// Open this picker.
    Pick(Box<Picker>, Pending),
    /// A move in the session tree with a branch summary ended.
    Moved(Result<Option<String>, String>),
    /// Print this card (a `!command`'s).
    Card(Box<super::cards::Card>),
    /// The configuration was read again (the folder was trusted, or `/reload`): these servers
    /// replace the session's; the text says what happened.
    Trusted(
        Box<crate::host::setup::Trusted>,
        String,
        Option<crate::extensions::Extensions>,
    ),
}

/// What is open over the editor.
pub enum Modal {
    /// A command's picker.
    Picker(Box<Picker>, Pending),
    /// The workspace's question.
    Question(Box<Picker>, oneshot::Sender<Option<usize>>),
    /// An extension's select or confirm.
    Choice(Box<Picker>, Choice),
    /// An extension's input or editor dialog, typed in the editor.
    Text(Box<TextEntry>),
}

/// The app; see the module docs.
pub struct App {
    pub(super) args: RunArgs,
    pub(super) cwd: PathBuf,
    pub(super) agent_dir: AgentDir,
    pub(super) held: Held,
    pub(super) events: mpsc::Receiver<FromSession>,
    pub(super) workspace: Arc<TuiWorkspace>,
    pub(super) questions: mpsc::UnboundedReceiver<Question>,
    /// Questions and extensions' dialogs waiting their turn (see [`super::dialogs`]).
    pub(super) waiting: VecDeque<Asked>,
    /// How sessions' extensions reach the loop.
    pub(super) link: ExtensionLink,
    from_extensions: mpsc::Receiver<FromExtension>,
    /// Extensions' statuses and widgets.
    pub(super) extension_view: ExtensionView,
    pub(super) done_tx: mpsc::UnboundedSender<Done>,
    done_rx: mpsc::UnboundedReceiver<Done>,
    pub(super) transcript: Transcript,
    pub(super) editor: Editor,
    pub(super) modal: Option<Modal>,
    pub(super) screen: Screen,
    ctrl_c: Option<Instant>,
    pub(super) quit: bool,
    last_frame: Instant,
    /// The footer, computed when the session changes (not every frame).
    footer: Vec<Line<'static>>,
    pub(super) footer_stale: bool,
    /// A window size seen since when, not yet used (see `draw`).
    resizing: Option<(Instant, (u16, u16))>,
    /// The terminal is to be handed to this once the key is handled (see [`super::outside`]).
    outside: Option<Outside>,
}

impl App {
    /// The app over a started session.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        args: RunArgs,
        cwd: PathBuf,
        agent_dir: AgentDir,
        held: Held,
        events: mpsc::Receiver<FromSession>,
        workspace: Arc<TuiWorkspace>,
        questions: mpsc::UnboundedReceiver<Question>,
        (link, from_extensions): (ExtensionLink, mpsc::Receiver<FromExtension>),
        screen: Screen,
    ) -> App {
        let theme = Theme::default();
        let calls = held.live.session().calls().clone();
        let transcript = Transcript::new(theme.clone(), cwd.clone(), calls, screen.width());
        let editor = Editor::new(&theme);
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        App {
            args,
            cwd,
            agent_dir,
            held,
            events,
            workspace,
            questions,
            waiting: VecDeque::new(),
            link,
            from_extensions,
            extension_view: ExtensionView::default(),
            done_tx,
            done_rx,
            transcript,
            editor,
            modal: None,
            screen,
            ctrl_c: None,
            quit: false,
            last_frame: Instant::now() - FRAME,
            footer: Vec::new(),
            footer_stale: true,
            resizing: None,
            outside: None,
        }
    }

    /// Runs until the user quits; then the session is closed and the terminal given back.
    pub async fn run(mut self) -> anyhow::Result<()> {
        self.link.loop_running();
        self.started();
        let mut keys = EventStream::new();
        let mut signals = Signals::new()?;
        self.draw()?;
        while !self.quit {
            let due = self
                .transcript
                .dirty
                .then(|| tokio::time::Instant::from_std(self.last_frame + FRAME));
            let countdown = super::dialogs::deadline(&self.modal)
                .map(|_| tokio::time::Instant::now() + COUNTDOWN_TICK);
            tokio::select! {
                biased;
                key = keys.next() => match key {
                    Some(Ok(event)) => self.terminal_event(event),
                    Some(Err(e)) => return Err(anyhow::anyhow!("reading the terminal failed: {e}")),
                    None => break,
                },
                _ = super::dialogs::abandoned(&mut self.modal) => self.dialog_abandoned(),
                Some(question) = self.questions.recv() => self.ask(Asked::Question(question)),
                Some(message) = self.from_extensions.recv() => self.extension_said(message),
                Some(done) = self.done_rx.recv() => self.done(done),
                event = self.events.recv() => match event {
                    Some(event) => {
                        self.session_event(event);
                        // Apply what else is waiting (bounded, so keys stay responsive).
                        for _ in 0..4096 {
                            match self.events.try_recv() {
                                Ok(event) => self.session_event(event),
                                Err(_) => break,
                            }
                        }
                    }
                    None => std::future::pending::<()>().await,
                },
                _ = sleep_until(due), if due.is_some() => {}
                _ = sleep_until(countdown), if countdown.is_some() => self.transcript.dirty = true,
                // Closed, or told to stop: the session is closed as by /quit.
                _ = signals.recv() => self.quit = true,
            }
            if let Some(outside) = self.outside.take() {
                // No reader may wait on the terminal while another program reads it.
                drop(keys);
                self.hand_over(outside).await;
                keys = EventStream::new();
                // A Ctrl+C typed meanwhile was meant for the other program.
                signals.forget_pending();
            }
            if !self.waiting.is_empty() {
                self.open_next();
            }
            if self.transcript.dirty && self.last_frame.elapsed() >= FRAME {
                self.draw()?;
            }
        }
        self.flush_transcript()?;
        self.screen.leave()?;
        // Questions still open or waiting get their defaults now (a gate waiting on one must
        // not hold up the close), and later ones at once.
        self.modal = None;
        self.waiting.clear();
        self.from_extensions.close();
        while self.from_extensions.try_recv().is_ok() {}
        let Self { held, .. } = self;
        held.close().await;
        Ok(())
    }

    /// The command line's messages: the first is sent, the rest follow it as follow-ups.
    fn first_prompts(&mut self, prompt: Prompt, rest: Vec<String>) {
        let session = self.held.live.session().clone();
        let done = self.done_tx.clone();
        let sent = self.held.live.spawn_turn(prompt, async {}, move |result| {
            if let Err(e) = result {
                let _ = done.send(Done::Error(e.to_string()));
            }
        });
        if sent.is_ok() {
            self.transcript.busy = true;
            let done = self.done_tx.clone();
            tokio::spawn(async move {
                for text in rest {
                    if let Err(e) = session
                        .queue(&text, None, tandem_coding::agent_session::Queue::FollowUp)
                        .await
                    {
                        let _ = done.send(Done::Error(format!("could not queue {text:?}: {e}")));
                    }
                }
            });
        }
    }

    /// What the user should see first: setup problems, the session being continued, the trust
    /// question.
    fn started(&mut self) {
        let theme = self.transcript.theme().clone();
        let settings = self.held.live.session().settings();
        self.transcript.show_thinking = settings.hide_thinking_block != Some(true);
        if settings.quiet_startup != Some(true) {
            let title = format!(
                "Tandem {} · {} · /hotkeys for keys, /quit to leave",
                env!("CARGO_PKG_VERSION"),
                self.cwd.display()
            );
            self.transcript.note(&title, theme.dim);
            self.list_extensions();
            self.transcript.note("", theme.dim);
        }
        self.warn_hidden_commands();
        self.session_started();
    }

    /// A session (first or replacing one) just started: its problems, its past, its trust.
    pub(super) fn session_started(&mut self) {
        let theme = self.transcript.theme().clone();
        self.extension_view.session_replaced(self.held.generation);
        for problem in std::mem::take(&mut self.held.problems) {
            self.transcript
                .note(&format!("Warning: {problem}"), theme.warning);
        }
        let session = self.held.live.session().clone();
        self.transcript.set_calls(session.calls().clone());
        let past = commands::replay(&session, &mut self.transcript);
        self.editor.add_history(past);
        if let Some(resources) = self.held.pending_trust.take() {
            commands::ask_trust(self, resources);
        }
        self.footer_stale = true;
    }

    fn terminal_event(&mut self, event: Event) {
        self.transcript.dirty = true;
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.key(key),
            Event::Paste(text) if self.modal.is_none() => {
                self.editor.paste(&text);
                self.complete();
            }
            Event::Paste(text) if matches!(self.modal, Some(Modal::Text(_))) => {
                self.editor.paste(&text)
            }
            // Handled by a frame once the size has settled (see `draw`), even when it is back
            // to the size known before: the terminal may have moved lines meanwhile.
            Event::Resize(cols, rows) => {
                self.resizing = Some((Instant::now(), (cols.max(1), rows.max(2))));
                self.footer_stale = true;
            }
            _ => {}
        }
    }

    /// Everything printed again at the next frame (a display choice changed).
    pub(super) fn reprint_soon(&mut self) {
        let size = (self.screen.width(), self.screen.rows());
        let due = Instant::now()
            .checked_sub(RESIZE_SETTLE)
            .unwrap_or_else(Instant::now);
        self.resizing = Some((due, size));
    }

    /// The window has a new size: everything is printed again at the new width.
    fn resize(&mut self, cols: u16, rows: u16) {
        self.transcript.set_width(cols);
        let lines = self.transcript.reprint();
        let redrawn = self
            .screen
            .resized(cols, rows)
            .and_then(|()| self.screen.reprint(&lines));
        if let Err(e) = redrawn {
            tracing::warn!("redrawing after a resize failed: {e}");
        }
        self.footer_stale = true;
    }

    fn key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        if let Some(modal) = self.modal.take() {
            self.modal_key(modal, key);
            return;
        }
        if !(ctrl && key.code == KeyCode::Char('c')) {
            self.ctrl_c = None;
        }
        let busy = self.busy();
        match key.code {
            KeyCode::Char('c') if ctrl => {
                if busy {
                    self.abort();
                } else if !self.editor.is_empty() {
                    let theme = self.transcript.theme().clone();
                    self.editor.clear(&theme);
                } else if self.ctrl_c.is_some_and(|t| t.elapsed() < EXIT_WINDOW) {
                    self.quit = true;
                } else {
                    self.ctrl_c = Some(Instant::now());
                }
            }
            KeyCode::Char('d') if ctrl && self.editor.is_empty() => self.quit = true,
            KeyCode::Esc => {
                if self.editor.has_completions() {
                    self.editor.dismiss_completions();
                } else if busy {
                    self.abort();
                }
            }
            // Both print everything again with the new choice, as pi re-renders its chat.
            KeyCode::Char('t') if ctrl => {
                self.transcript.show_thinking = !self.transcript.show_thinking;
                self.reprint_soon();
            }
            KeyCode::Char('o') if ctrl => {
                self.transcript.expand_tools = !self.transcript.expand_tools;
                self.reprint_soon();
            }
            KeyCode::Char('g') if ctrl => self.outside = Some(Outside::Editor),
            KeyCode::Char('z') if ctrl => self.outside = Some(Outside::Shell),
            KeyCode::Char('l') if ctrl => commands::run(self, "/model"),
            KeyCode::Char('p') if ctrl => commands::cycle_model(self),
            KeyCode::BackTab => commands::cycle_thinking(self),
            KeyCode::Up if alt => self.dequeue(),
            KeyCode::Tab if self.editor.has_completions() => {
                self.editor.accept_completion();
                self.complete();
            }
            KeyCode::Up if self.editor.has_completions() => self.editor.move_completion(false),
            KeyCode::Down if self.editor.has_completions() => self.editor.move_completion(true),
            KeyCode::Up => {
                let theme = self.transcript.theme().clone();
                if !self.editor.history_up(&theme) {
                    self.editor.area().input(key);
                }
            }
            KeyCode::Down => {
                let theme = self.transcript.theme().clone();
                if !self.editor.history_down(&theme) {
                    self.editor.area().input(key);
                }
            }
            KeyCode::Enter if shift => self.editor.newline(),
            KeyCode::Char('j') if ctrl => self.editor.newline(),
            KeyCode::Enter if alt => {
                if busy {
                    self.submit(Some(tandem_coding::agent_session::Queue::FollowUp));
                } else {
                    self.editor.newline();
                }
            }
            KeyCode::Enter => {
                if self.editor.has_completions() && self.editor.accept_completion() {
                    // A completed command runs at once, as pi does; a file only completes.
                    if !self.editor.text().starts_with('/') {
                        self.complete();
                        return;
                    }
                }
                let queue = busy.then_some(tandem_coding::agent_session::Queue::Steering);
                self.submit(queue);
            }
            _ => {
                self.editor.area().input(key);
                self.complete();
            }
        }
    }

    fn modal_key(&mut self, modal: Modal, key: KeyEvent) {
        match modal {
            Modal::Picker(mut picker, pending) => match picker.key(key) {
                Picked::Open => self.modal = Some(Modal::Picker(picker, pending)),
                Picked::Chosen(i) => commands::picked(self, pending, Some(i)),
                Picked::Dismissed => commands::picked(self, pending, None),
            },
            Modal::Question(mut picker, answer) => {
                match picker.key(key) {
                    Picked::Open => self.modal = Some(Modal::Question(picker, answer)),
                    Picked::Chosen(i) => {
                        let _ = answer.send(Some(i));
                    }
                    Picked::Dismissed => {
                        let _ = answer.send(None);
                    }
                }
                self.open_next();
            }
            Modal::Choice(picker, choice) => self.choice_key(picker, choice, key),
            Modal::Text(entry) => self.text_key(entry, key),
        }
    }

    /// Offers completions for the word at the cursor.
    fn complete(&mut self) {
        let offered = match self.editor.completing() {
            Some(word) if word.starts_with('/') => commands::completions(self, &word),
            Some(word) => {
                let query = word.trim_start_matches('@').trim_start_matches('"');
                super::editor::file_completions(&self.cwd, query, 50)
            }
            None => Vec::new(),
        };
        self.editor.offer(offered);
    }

    /// Sends the editor's text: a command, a prompt, or (while a run goes on) a queued
    /// message.
    fn submit(&mut self, queue: Option<tandem_coding::agent_session::Queue>) {
        let text = self.editor.text();
        if text.trim().is_empty() {
            return;
        }
        let theme = self.transcript.theme().clone();
        if text.starts_with('/') && commands::is_command(self, &text) {
            self.editor.take(&theme);
            commands::run(self, &text);
            return;
        }
        // After the built-in commands, the extensions' (at once, even while a run goes on).
        if let Some(extensions) = self.extension_command(&text) {
            self.editor.take(&theme);
            self.run_extension_command(extensions, text);
            return;
        }
        if let Some(command) = text.strip_prefix('!') {
            self.editor.take(&theme);
            commands::shell(self, command.trim_start_matches('!').to_string());
            return;
        }
        self.editor.take(&theme);
        let session = self.held.live.session().clone();
        match queue {
            Some(queue) => {
                let done = self.done_tx.clone();
                tokio::spawn(async move {
                    if let Err(e) = session.queue(&text, None, queue).await {
                        let _ = done.send(Done::Error(format!("could not queue the message: {e}")));
                    }
                });
            }
            None => {
                let done = self.done_tx.clone();
                let sent = self.held.live.spawn_turn(
                    Prompt::text(text.clone()),
                    async {},
                    move |result| {
                        if let Err(e) = result {
                            if !matches!(e, tandem_coding::agent_session::SessionError::Busy) {
                                let _ = done.send(Done::Error(e.to_string()));
                            }
                        }
                    },
                );
                if sent.is_err() {
                    // A run started meanwhile (a queued message): steer it instead.
                    let done = self.done_tx.clone();
                    tokio::spawn(async move {
                        if let Err(e) = session
                            .queue(&text, None, tandem_coding::agent_session::Queue::Steering)
                            .await
                        {
                            let _ = done.send(Done::Error(format!("could not send: {e}")));
                        }
                    });
                } else {
                    self.transcript.busy = true;
                }
            }
        }
    }

    /// Esc / Ctrl+C while running: stops the run (and a command the user started with `!`).
    fn abort(&mut self) {
        let session = self.held.live.session();
        session.abort_bash();
        session.abort();
        let theme = self.transcript.theme().clone();
        self.transcript.status = Some("Stopping…".to_string());
        let _ = theme;
    }

    /// Alt+Up: queued messages back into the editor.
    fn dequeue(&mut self) {
        let session = self.held.live.session().clone();
        let done = self.done_tx.clone();
        tokio::spawn(async move {
            let (steering, follow_up) = session.clear_queue().await;
            let all: Vec<String> = steering.into_iter().chain(follow_up).collect();
            if !all.is_empty() {
                let _ = done.send(Done::Pick(
                    Box::new(Picker::new("", Vec::new())),
                    Pending::Restore(all.join("\n\n")),
                ));
            }
        });
    }

    fn busy(&self) -> bool {
        self.transcript.busy || self.held.live.is_busy()
    }

    fn session_event(&mut self, event: FromSession) {
        match event {
            FromSession::Event(event) => {
                let settles = matches!(
                    &event,
                    tandem_coding::agent_session::AgentSessionEvent::Session(
                        tandem_coding::agent_session::SessionEvent::AgentSettled { .. }
                            | tandem_coding::agent_session::SessionEvent::ThinkingLevelChanged { .. }
                            | tandem_coding::agent_session::SessionEvent::SessionInfoChanged { .. }
                    ) | tandem_coding::agent_session::AgentSessionEvent::Agent(_)
                );
                if settles {
                    self.footer_stale |= matches!(
                        &event,
                        tandem_coding::agent_session::AgentSessionEvent::Session(_)
                    ) || matches!(
                        &event,
                        tandem_coding::agent_session::AgentSessionEvent::Agent(e)
                            if matches!(**e, tandem_agent::AgentEvent::MessageEnd { .. })
                    );
                }
                self.transcript.apply(&event);
                if let tandem_coding::agent_session::AgentSessionEvent::Session(
                    tandem_coding::agent_session::SessionEvent::AgentSettled { .. },
                ) = &event
                {
                    let theme = self.transcript.theme().clone();
                    for notice in self.held.live.take_notices() {
                        self.transcript.note(&notice, theme.warning);
                    }
                }
            }
            FromSession::Failed(failure) => {
                self.transcript.error(&failure.message);
                if failure.settles {
                    self.transcript.busy = false;
                }
            }
        }
    }

    fn done(&mut self, done: Done) {
        let theme = self.transcript.theme().clone();
        self.transcript.dirty = true;
        match done {
            Done::Note(text) => self.transcript.note(&text, theme.dim),
            Done::Error(text) => self.transcript.error(&text),
            Done::Replace(result) => match *result {
                Ok((held, events)) => {
                    let old = std::mem::replace(&mut self.held, held);
                    self.events = events;
                    tokio::spawn(old.close());
                    self.session_started();
                }
                Err(e) => self.transcript.error(&format!("{e:#}")),
            },
            Done::Pick(picker, Pending::Restore(text)) => {
                let _ = picker;
                let mut all = text;
                let current = self.editor.text();
                if !current.is_empty() {
                    all = format!("{all}\n\n{current}");
                }
                self.editor.set_text(&all, &theme);
            }
            // A question is open: it keeps the screen, the picker is not shown.
            Done::Pick(_, pending) if self.modal.is_some() => commands::picked(self, pending, None),
            Done::Pick(picker, pending) => self.modal = Some(Modal::Picker(picker, pending)),
            Done::Moved(moved) => {
                self.transcript.busy = false;
                self.transcript.status = None;
                commands::moved_in_tree(self, moved);
            }
            Done::Card(card) => {
                let lines = card.render(
                    self.screen.width(),
                    &self.cwd,
                    &theme,
                    false,
                    self.transcript.expand_tools,
                );
                self.transcript.lines(lines);
            }
            Done::Trusted(trusted, said, extensions) => {
                let trusted = *trusted;
                self.held.extensions = extensions;
                let old_mcp = std::mem::replace(&mut self.held.mcp, trusted.mcp);
                let old_languages = std::mem::replace(&mut self.held.languages, trusted.languages);
                tokio::spawn(async move {
                    old_mcp.shutdown().await;
                    if let Some(old) = old_languages {
                        old.shutdown().await;
                    }
                });
                let mut text = said;
                for p in &trusted.problems {
                    text.push_str(&format!("\nWarning: {p}"));
                }
                self.transcript.note(&text, theme.dim);
            }
        }
        self.footer_stale = true;
    }

    /// Prints the finished lines.
    fn flush_transcript(&mut self) -> std::io::Result<()> {
        let finished = self.transcript.take_finished();
        self.screen.print(&finished)
    }

    /// Draws a frame: finished lines printed, then the live area.
    fn draw(&mut self) -> anyhow::Result<()> {
        // The size is asked before every frame, and a new one is used once it has held for
        // RESIZE_SETTLE: while a window is being resized (a drag sends many sizes, and a
        // terminal such as tmux moves lines between the screen and its history as it
        // reflows), nothing is printed at rows that are about to move; then everything is
        // printed again once, at the size it settled on.
        if let Ok((cols, rows)) = crossterm::terminal::size() {
            let size = (cols.max(1), rows.max(2));
            let known = (self.screen.width(), self.screen.rows());
            match self.resizing {
                Some((_, pending)) if pending == size => {}
                None if size == known => {}
                _ => self.resizing = Some((Instant::now(), size)),
            }
        }
        if let Some((since, (cols, rows))) = self.resizing {
            if since.elapsed() < RESIZE_SETTLE {
                self.last_frame = Instant::now();
                return Ok(());
            }
            self.resizing = None;
            self.resize(cols, rows);
        }
        self.flush_transcript()?;
        if self.footer_stale {
            self.footer = self.footer_lines();
            self.footer_stale = false;
        }
        let width = self.screen.width();
        let rows = self.screen.rows() as usize;
        let theme = self.transcript.theme().clone();
        let busy = self.busy();
        let mut status: Vec<Line<'static>> = Vec::new();
        if let Some(text) = &self.transcript.status {
            status.push(Line::from(Span::styled(format!("⋯ {text}"), theme.accent)));
        } else if busy {
            status.push(Line::from(Span::styled(
                "⋯ Working… (Esc stops)".to_string(),
                theme.accent,
            )));
        }
        let (steering, follow_up) = &self.transcript.queue;
        for text in steering {
            status.push(Line::from(Span::styled(
                format!("↳ steering: {}", one_line(text)),
                theme.dim,
            )));
        }
        for text in follow_up {
            status.push(Line::from(Span::styled(
                format!("↳ follow-up: {}", one_line(text)),
                theme.dim,
            )));
        }
        if self.ctrl_c.is_some() {
            status.push(Line::from(Span::styled(
                "Press Ctrl+C again to exit".to_string(),
                theme.warning,
            )));
        }
        status.extend(self.extension_view.widget_lines(false, width, &theme));
        let mut footer = self.extension_view.widget_lines(true, width, &theme);
        footer.extend(self.footer.iter().cloned());
        let (modal_lines, editor_height) = match &self.modal {
            Some(
                Modal::Picker(picker, _) | Modal::Question(picker, _) | Modal::Choice(picker, _),
            ) => {
                let max = rows.saturating_sub(footer.len() + 2).max(4);
                (picker.render(width, max, &theme), 0)
            }
            Some(Modal::Text(entry)) => (entry.render(width, &theme), self.editor.height(width)),
            None => (Vec::new(), self.editor.height(width)),
        };
        let editor_title = match &self.modal {
            Some(Modal::Text(entry)) => entry.hint(),
            _ if busy => " Enter steers · Alt+Enter queues a follow-up · Esc stops ",
            _ => "",
        };
        let fixed = status.len() + modal_lines.len() + editor_height as usize + footer.len();
        let room = rows.saturating_sub(fixed + 1);
        let live = self.transcript.live(room);
        let height = (live.len() + fixed) as u16;
        let editor = &self.editor;
        self.screen.draw(height, |frame| {
            let area = frame.area();
            let mut y = area.y;
            put(frame, area, &mut y, live);
            put(frame, area, &mut y, status);
            put(frame, area, &mut y, modal_lines);
            if editor_height > 0 {
                let h = editor_height.min(area.bottom().saturating_sub(y));
                editor.render(
                    frame,
                    Rect::new(area.x, y, area.width, h),
                    &theme,
                    editor_title,
                );
                y += h;
            }
            put(frame, area, &mut y, footer);
        })?;
        self.transcript.dirty = false;
        self.last_frame = Instant::now();
        Ok(())
    }

    /// The footer: the folder and session, then the model, thinking level, context and cost.
    fn footer_lines(&self) -> Vec<Line<'static>> {
        let theme = self.transcript.theme();
        let session = self.held.live.session();
        let stats = session.stats();
        let (model, thinking) = session
            .agent()
            .with_state(|s| (s.model.clone(), s.thinking_level));
        let name = session.with_session(|m| m.session_name().map(str::to_string));
        let mut first = format!("{}", self.cwd.display());
        if let Some(name) = name {
            first.push_str(&format!(" · {name}"));
        }
        let mut second = format!("{}/{}", model.provider, model.id);
        if model.reasoning {
            second.push_str(&format!(" · thinking {}", thinking.as_str()));
        }
        if let Some(usage) = &stats.context_usage {
            second.push_str(&format!(
                " · context {}/{} ({:.0}%)",
                tokens(usage.tokens),
                tokens(usage.context_window),
                usage.percent
            ));
        }
        let t = &stats.tokens;
        if t.total > 0 {
            second.push_str(&format!(
                " · ↑{} ↓{}",
                tokens(t.input + t.cache_read + t.cache_write),
                tokens(t.output)
            ));
        }
        if stats.cost > 0.0 {
            second.push_str(&format!(" · ${:.3}", stats.cost));
        }
        if self.workspace.confirm() {
            second.push_str(" · confirm edits");
        }
        let width = self.screen.width() as usize;
        let mut lines = vec![
            Line::from(Span::styled(clip(&first, width), theme.dim)),
            Line::from(Span::styled(clip(&second, width), theme.dim)),
        ];
        if let Some(statuses) = self.extension_view.status_line() {
            lines.push(Line::from(Span::styled(clip(&statuses, width), theme.dim)));
        }
        lines
    }
}

/// Draws `lines` at row `y` of `area` (as many as fit) and moves `y` under them.
fn put(frame: &mut ratatui::Frame<'_>, area: Rect, y: &mut u16, lines: Vec<Line<'static>>) {
    let h = (lines.len() as u16).min(area.bottom().saturating_sub(*y));
    if h > 0 {
        frame.render_widget(Paragraph::new(lines), Rect::new(area.x, *y, area.width, h));
    }
    *y += h;
}

fn one_line(text: &str) -> String {
    let first = text.lines().next().unwrap_or("");
    super::text::sanitize(first).into_owned()
}

/// `text` cut to `width` columns, with an ellipsis.
fn clip(text: &str, width: usize) -> String {
    let text = super::text::sanitize(text);
    if super::text::width(&text) <= width {
        return text.into_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// The signals that end the interactive mode: the terminal closed (SIGHUP), SIGTERM, and
/// SIGINT from outside (at the keyboard, raw mode turns Ctrl+C into a key).
struct Signals {
    hangup: Signal,
    terminate: Signal,
    interrupt: Signal,
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        Ok(Signals {
            hangup: signal(SignalKind::hangup())?,
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    async fn recv(&mut self) {
        tokio::select! {
            _ = self.hangup.recv() => {}
            _ = self.terminate.recv() => {}
            _ = self.interrupt.recv() => {}
        }
    }

    /// Drops the SIGINTs received so far.
    fn forget_pending(&mut self) {
        while let Some(Some(())) = self.interrupt.recv().now_or_never() {}
    }
}

async fn sleep_until(due: Option<tokio::time::Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

/// Starts the terminal mode: the session first (its problems printed before the screen
/// changes), then the screen, then the loop.
pub async fn serve(args: RunArgs, cwd: PathBuf) -> anyhow::Result<()> {
    let agent_dir = AgentDir::from_env().map_err(|e| anyhow::anyhow!("{e}"))?;
    let first = crate::cli::input::build_prompts(&args.file_args, &args.messages, None, &cwd)?;
    let (question_tx, questions) = mpsc::unbounded_channel();
    let workspace = Arc::new(TuiWorkspace::new(&cwd, false, TerminalAsker(question_tx)));
    let (events_tx, events) = mpsc::channel(1024);
    let (link, from_extensions) = ExtensionLink::new();
    // `-r` alone: a new session (nothing is written before a prompt) with the picker open.
    let pick = args.session == crate::cli::command::SessionChoice::Pick;
    let choice = match &args.session {
        crate::cli::command::SessionChoice::Pick => crate::cli::command::SessionChoice::New,
        other => other.clone(),
    };
    let held = session::start(
        &args,
        &cwd,
        &agent_dir,
        History::Choice(choice),
        workspace.clone(),
        events_tx,
        &link,
    )
    .await?;
    if let Some(name) = &args.name {
        held.live
            .session()
            .with_session(|m| m.append_session_info(name.trim()))
            .map_err(|e| anyhow::anyhow!("could not name the session: {e}"))?;
    }
    let screen = Screen::enter().map_err(|e| anyhow::anyhow!("cannot use the terminal: {e}"))?;
    let mut app = App::new(
        args,
        cwd,
        agent_dir,
        held,
        events,
        workspace,
        questions,
        (link, from_extensions),
        screen,
    );
    if pick {
        super::commands::run(&mut app, "/resume");
    }
    if let Some(initial) = first.initial {
        app.first_prompts(
            Prompt {
                text: initial.text,
                images: initial.images,
                context: None,
            },
            first.rest,
        );
    }
    app.run().await
}
