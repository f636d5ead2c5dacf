//! A change's way from the tool to the user's document, safe against the user typing.
//!
//! The tool computed its change against the text it read; the user may type at any moment
//! after that: before the proposal, while a question is open, while the edit is in flight.
//! So the change is *placed* ([`rebase`]) on the document as it is right before each send,
//! never earlier:
//!
//! 1. Place it once, for the question's figures; a region the user already changed is a
//!    conflict at once (nothing asked, nothing sent).
//! 2. Ask for consent if the settings say so ([`super::confirm`]).
//! 3. Place it again on the document as it is now and send it. When the editor does not apply
//!    it and the document moved meanwhile (a versioned edit the editor found stale), place it
//!    again and resend, up to [`MAX_SENDS`] times.
//! 4. When the editor says it applied an edit to an open document, check the document
//!    ([`verify`]): a client that does not check versions (plain `changes`, or one that skips
//!    stale edits yet answers `applied: true`) may have applied it at stale positions over the
//!    user's typing. The store's recent versions show exactly what happened; the damage is
//!    repaired with one more edit, or reported.
//!
//! A timeout is not a refusal: the editor may still apply the edit. The answer that comes late
//! is watched for, and what it said reaches the model in a later tool result
//! ([`LspWorkspace::late_notices`]).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ropey::Rope;
use tandem_ai::sync::lock;
use tandem_coding::workspace::rebase::{self, Conflict};
use tandem_coding::workspace::{apply_edits, ChangeOutcome, FileChange, TextEdit, WorkspaceError};
use tower_lsp_server::ls_types::{self as lsp, ApplyWorkspaceEditResponse, WorkspaceEdit};

use super::client::{ClientError, EditorClient, APPLY_EDIT};
use super::confirm::{Consent, NOT_APPLIED, REJECTED_BY_USER};
use super::edits::{self, Base, PlannedChange};
use super::inflight::{self, Late, Slot};
use super::LspWorkspace;
use crate::lsp::position::{self, PositionEncoding};

/// How many times a change is sent when the user keeps changing the document under it.
pub const MAX_SENDS: usize = 5;

/// How long the workspace waits, after the editor said "applied", for the document change to
/// arrive (clients send `didChange` before or just after their answer).
pub const ECHO_WAIT: Duration = Duration::from_millis(1500);

/// How long the document must stay unchanged before a change refused as stale is placed again
/// (above Neovim's 150 ms `didChange` debounce, so the server has the user's last keystroke).
pub const QUIET: Duration = Duration::from_millis(300);

/// The longest wait for [`QUIET`].
const QUIET_MAX: Duration = Duration::from_secs(3);

/// The editor said "applied" and left the document as it was.
#[derive(Debug, Clone, Copy)]
struct Skipped;

/// How often the document store is looked at while waiting.
const ECHO_POLL: Duration = Duration::from_millis(10);

/// A change placed on the document as it is now.
#[derive(Debug, Clone)]
pub(super) struct Placed {
    /// The edits to send.
    pub planned: PlannedChange,
    /// The change as placed: `old_text` the document now, its ranges in it.
    pub made: FileChange,
    /// True when the document was not the text the tool read.
    pub rebased: bool,
}

/// What placing found.
pub(super) enum Placement {
    /// Ready to send.
    Ready(Box<Placed>),
    /// The document already holds the result.
    Nothing,
    /// The user changed what the change replaces.
    Conflict(String),
}

/// The editor's answer to one send.
enum Answer {
    Applied,
    NotApplied(Option<String>),
    TimedOut(String),
    Failed(String),
}

impl LspWorkspace {
    /// Proposes `change`: place, consent, place again, send, verify.
    pub(super) async fn propose_change(
        &self,
        change: FileChange,
    ) -> Result<ChangeOutcome, WorkspaceError> {
        let path = change.path.clone();
        let shown = self.display_path(&path);
        let first = match self.place(&change, &shown).await? {
            Placement::Ready(placed) => *placed,
            Placement::Nothing => return Ok(ChangeOutcome::Applied),
            Placement::Conflict(detail) => return Ok(ChangeOutcome::Conflict { detail }),
        };
        let consent = match self.consent(&path, &first.planned).await {
            Ok(consent) => consent,
            Err(outcome) => return Ok(outcome),
        };
        let mut next = (!consent.asked).then_some(first);
        let mut skipped = false;
        for _ in 0..MAX_SENDS {
            // One unanswered edit per document: an earlier one that timed out may still land.
            let timeout = self.settings().timeout;
            let Some(mut slot) = self.inflight.acquire(&path, timeout).await else {
                return Ok(ChangeOutcome::Refused {
                    reason: format!(
                        "an earlier change to {shown} is still waiting for the editor's answer \
                         ({} s), so this one was not sent: the two could both land. Read the \
                         file before changing it again",
                        timeout.as_secs()
                    ),
                });
            };
            // Placed before waiting for the slot: place again if the document moved meanwhile
            // (another session's edit landed).
            if let Some(placed) = &next {
                if self.moved_now(&path, placed).await {
                    next = None;
                }
            }
            if let Some(late) = slot.take() {
                // The document moved under the placement: place again on what it is now.
                next = None;
                if late.applied {
                    self.wait_for_version_change(&path, late.version).await;
                    if inflight::same_change(&late.change, &change) {
                        lock(&self.notices).push(format!(
                            "Note: this change to {shown} is the one that timed out earlier and \
                             the editor applied after all, so it was not sent again."
                        ));
                        if let Some(doc) = self.documents.find(&path) {
                            self.unsaved.changed(&doc.uri, &path);
                        }
                        return Ok(ChangeOutcome::Applied);
                    }
                }
            }
            let placed = match next.take() {
                Some(placed) => placed,
                None => match self.place(&change, &shown).await? {
                    Placement::Ready(placed) => *placed,
                    Placement::Nothing => return Ok(ChangeOutcome::Applied),
                    Placement::Conflict(detail) => return Ok(ChangeOutcome::Conflict { detail }),
                },
            };
            // The path must still lead where it was approved to, after any question. (Between
            // this check and the editor's own write, the editor is the one opening the file.)
            if let Err(e) = tandem_coding::paths::verify_target(&path, &change.real) {
                return Ok(ChangeOutcome::Refused { reason: e });
            }
            let caps = self.client.capabilities();
            let edit =
                edits::workspace_edit(placed.planned.clone(), &caps, consent.annotation.clone());
            let label = consent.label.clone();
            let uri = placed.planned.uri.as_str().to_owned();
            let versioned = caps.document_changes && placed.planned.version.is_some();
            match self.send(&path, &shown, label, edit, (slot, &change)).await {
                Answer::Applied => {
                    let outcome = match self.verify(&change, &placed, &shown, versioned).await {
                        Ok(outcome) => outcome,
                        Err(Skipped) => {
                            skipped = true;
                            self.wait_quiet(&path).await;
                            if self.landed(&placed, &shown) {
                                // It came after all, later than the wait.
                                self.unsaved.changed(&uri, &path);
                                return Ok(self.outcome_of(&placed));
                            }
                            continue;
                        }
                    };
                    if matches!(outcome, ChangeOutcome::Applied | ChangeOutcome::Rebased(_)) {
                        self.unsaved.changed(&uri, &path);
                    }
                    return Ok(outcome);
                }
                Answer::NotApplied(reason) => {
                    if self.moved(&path, &placed).await {
                        skipped = false;
                        self.wait_quiet(&path).await;
                        continue;
                    }
                    let reason = reason.filter(|r| !r.trim().is_empty());
                    return Ok(if consent.annotation.is_some() {
                        // Annotated edits are confirmed in the editor: "no" there is the
                        // user's.
                        ChangeOutcome::Rejected {
                            reason: Some(reason.unwrap_or_else(|| REJECTED_BY_USER.into())),
                        }
                    } else {
                        ChangeOutcome::Refused {
                            reason: reason.unwrap_or_else(|| NOT_APPLIED.into()),
                        }
                    });
                }
                Answer::TimedOut(detail) => return Ok(ChangeOutcome::TimedOut { detail }),
                Answer::Failed(reason) => return Ok(ChangeOutcome::Refused { reason }),
            }
        }
        if skipped {
            return Ok(ChangeOutcome::Refused {
                reason: format!(
                    "the editor answered that it applied the change but {shown} does not show \
                     it ({MAX_SENDS} attempts)"
                ),
            });
        }
        Ok(ChangeOutcome::Conflict {
            detail: format!(
                "The user kept changing {shown} while the change was sent ({MAX_SENDS} \
                 attempts), so nothing was applied. Read the file again before changing it."
            ),
        })
    }

    /// Places `change` on the document as it is now: the open buffer, else the disk.
    pub(super) async fn place(
        &self,
        change: &FileChange,
        shown: &str,
    ) -> Result<Placement, WorkspaceError> {
        let (uri, base) = self.base_of(&change.path).await?;
        let current = match &base {
            Base::Open { text, .. } => Some(text.to_string()),
            Base::Disk(text) => Some(text.clone()),
            Base::Missing => None,
        };
        let rebased = match rebase::rebase(change, current.as_deref(), shown) {
            Ok(rebased) => rebased,
            Err(Conflict { detail }) => return Ok(Placement::Conflict(detail)),
        };
        let was_rebased = current.as_deref() != change.old_text.as_deref();
        let made = FileChange {
            path: change.path.clone(),
            real: change.real.clone(),
            old_text: current.clone(),
            new_text: rebased.new_text,
            // A new file is created whole; otherwise the placed ranges.
            edits: if current.is_some() {
                rebased.edits
            } else {
                Vec::new()
            },
        };
        let encoding = self.documents.encoding();
        let to_plan = made.clone();
        let planned =
            tokio::task::spawn_blocking(move || edits::plan(&to_plan, uri, base, encoding))
                .await
                .map_err(|e| WorkspaceError::Client(format!("computing the edit failed: {e}")))?;
        match planned {
            // Placed on this very text, so the ranges fit; kept as a guard.
            Err(edits::Stale) => Ok(Placement::Conflict(format!(
                "{shown}: {}",
                super::CHANGED_IN_EDITOR
            ))),
            Ok(planned) if planned.edits.is_empty() && !planned.create => Ok(Placement::Nothing),
            Ok(planned) => Ok(Placement::Ready(Box::new(Placed {
                planned,
                made,
                rebased: was_rebased,
            }))),
        }
    }

    /// Sends `edit` (for `change`, holding its document's `slot` until the editor answers)
    /// and waits for the answer within the timeout. The request keeps running after a timeout:
    /// a late answer becomes a notice for the model, and is kept in the slot for the next
    /// change to the document.
    async fn send(
        &self,
        path: &Path,
        shown: &str,
        label: String,
        edit: WorkspaceEdit,
        (mut slot, change): (Slot, &FileChange),
    ) -> Answer {
        let timeout = self.settings().timeout;
        let client: Arc<dyn EditorClient> = self.client.clone();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let late = self.notices.clone();
        let shown = shown.to_owned();
        let version = self.documents.find(path).map(|doc| doc.version);
        let change = change.clone();
        tokio::spawn(async move {
            let answer = client.apply_edit(label, edit).await;
            if let Err(answer) = tx.send(answer) {
                // Nobody waits any more: the send timed out. Say what the editor did.
                let what = late_notice(&shown, &answer, version);
                tracing::warn!("{what}");
                lock(&late).push(what);
                let applied = matches!(&answer, Ok(response) if response.applied);
                *slot = Some(Late {
                    change,
                    applied,
                    version,
                });
            }
            // The slot is free once the editor answered, in time or not.
            drop(slot);
        });
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(ApplyWorkspaceEditResponse { applied: true, .. }))) => Answer::Applied,
            Ok(Ok(Ok(response))) => Answer::NotApplied(response.failure_reason),
            Ok(Ok(Err(ClientError::Failed(detail)))) => {
                Answer::Failed(format!("the editor request failed: {detail}"))
            }
            Ok(Ok(Err(e @ ClientError::Timeout { .. }))) => Answer::TimedOut(e.to_string()),
            Ok(Err(_)) => Answer::Failed("the editor connection closed".into()),
            Err(_) => Answer::TimedOut(ClientError::timeout(APPLY_EDIT, timeout).to_string()),
        }
    }

    /// Whether the document changed since `placed` was computed (the editor then refused a
    /// stale edit: place it again). The editor's `didChange` may still be on its way when its
    /// answer arrives, so the store is watched for [`ECHO_POLL`] × 30 before saying no.
    async fn moved(&self, path: &Path, placed: &Placed) -> bool {
        for _ in 0..30 {
            if self.moved_now(path, placed).await {
                return true;
            }
            tokio::time::sleep(ECHO_POLL).await;
        }
        false
    }

    async fn moved_now(&self, path: &Path, placed: &Placed) -> bool {
        match self.documents.find(path) {
            Some(doc) => {
                placed.planned.version != Some(doc.version)
                    && placed.made.old_text.as_deref() != Some(doc.text.to_string().as_str())
            }
            None => {
                let now = tokio::fs::read(path).await.ok();
                let now = now.as_deref().map(String::from_utf8_lossy);
                now.as_deref() != placed.made.old_text.as_deref()
            }
        }
    }

    /// Checks that an edit the editor says it applied to an open document is in it, where it
    /// belongs; repairs an edit applied at stale positions over the user's typing. `Err` when
    /// the editor answered "applied" but left the document as it was (Neovim skips a versioned
    /// edit it finds older than its buffer and still answers `applied: true`): send it again.
    async fn verify(
        &self,
        change: &FileChange,
        placed: &Placed,
        shown: &str,
        versioned: bool,
    ) -> Result<ChangeOutcome, Skipped> {
        let done = self.outcome_of(placed);
        let Some(sent) = placed.planned.version else {
            // Not open when sent: the editor wrote it, nobody typed in it.
            return Ok(done);
        };
        let history = self.wait_for_echo(placed, shown).await;
        let encoding = self.documents.encoding();
        let Some(sent_at) = history.iter().position(|(v, _)| *v == sent) else {
            // The sent version is no longer known (closed, or far behind): trust the answer.
            return Ok(done);
        };
        let after = &history[sent_at + 1..];
        if after
            .first()
            .is_some_and(|(_, first)| *first == placed.made.new_text.as_str())
        {
            return Ok(done);
        }
        let path = &placed.made.path;
        let now = self.documents.find(path).map(|doc| doc.text.to_string());
        let now = now.as_deref().unwrap_or_default();
        // The region is still there and the replacement is not: the edit was not applied.
        let untouched = !self.landed(placed, shown);
        if after.is_empty() || versioned {
            // Nothing changed at all, or a versioned edit the editor checked: either it is in
            // (with whatever the user typed since) or it was skipped.
            return if untouched { Err(Skipped) } else { Ok(done) };
        }
        // Someone typed before the edit landed: find the version the edit was applied to.
        let mut previous = &history[sent_at].1;
        for (index, (_, text)) in after.iter().enumerate() {
            if stale_apply(previous, &placed.planned.edits, encoding).as_ref() == Some(text) {
                let typed = previous.to_string();
                let damaged = text.to_string();
                let later = after.len() > index + 1;
                return Ok(self
                    .repair(change, placed, shown, typed, damaged, later)
                    .await);
            }
            previous = text;
        }
        if untouched {
            return Err(Skipped);
        }
        // The edit's change cannot be told apart from the typing (merged in one change): what
        // matters is whether the document holds the edit, with the typing kept.
        if holds(now, &placed.made) {
            return Ok(done);
        }
        Ok(ChangeOutcome::Refused {
            reason: format!(
                "the editor applied the change while {shown} was being changed, and Tandem \
                 cannot tell whether it landed where it belongs; check the file"
            ),
        })
    }

    /// Waits (at most [`ECHO_WAIT`]) until the open document at `path` is no longer at
    /// `version`: the `didChange` of an edit the editor said it applied late.
    async fn wait_for_version_change(&self, path: &Path, version: Option<i32>) {
        let Some(version) = version else { return };
        let deadline = tokio::time::Instant::now() + ECHO_WAIT;
        while self
            .documents
            .find(path)
            .is_some_and(|doc| doc.version == version)
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(ECHO_POLL).await;
        }
    }

    /// Waits until nobody has changed the document at `path` for [`QUIET`] (at most
    /// [`QUIET_MAX`]): a user typing a burst is let finish before the change is placed again.
    async fn wait_quiet(&self, path: &Path) {
        let quiet = self.quiet;
        let deadline = tokio::time::Instant::now() + QUIET_MAX;
        let mut last = self.documents.find(path).map(|doc| doc.version);
        let mut since = tokio::time::Instant::now();
        while tokio::time::Instant::now() < deadline {
            tokio::time::sleep(ECHO_POLL).await;
            let now = self.documents.find(path).map(|doc| doc.version);
            if now != last {
                last = now;
                since = tokio::time::Instant::now();
            } else if since.elapsed() >= quiet {
                return;
            }
        }
    }

    /// The outcome for an edit that landed as placed.
    fn outcome_of(&self, placed: &Placed) -> ChangeOutcome {
        if placed.rebased {
            ChangeOutcome::Rebased(Box::new(placed.made.clone()))
        } else {
            ChangeOutcome::Applied
        }
    }

    /// The store's versions of the document from `sent` on, once the document no longer holds
    /// `placed`'s regions untouched (the edit, or something, landed on them) or the wait ran
    /// out. Typing alone moves the version without landing: Neovim sends the user's keystrokes
    /// and the edit in separate, debounced `didChange`s.
    async fn wait_for_echo(&self, placed: &Placed, shown: &str) -> Vec<(i32, Rope)> {
        let path = &placed.made.path;
        let deadline = tokio::time::Instant::now() + ECHO_WAIT;
        while !self.landed(placed, shown) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(ECHO_POLL).await;
        }
        self.documents.history(path)
    }

    /// Whether the document no longer holds `placed`'s regions as they were with none of its
    /// replacements: something (the edit, normally) changed them.
    fn landed(&self, placed: &Placed, shown: &str) -> bool {
        let now = self
            .documents
            .find(&placed.made.path)
            .map(|doc| doc.text.to_string())
            .unwrap_or_default();
        rebase::rebase(&placed.made, Some(&now), shown).is_err() || holds(&now, &placed.made)
    }

    /// The editor applied `placed` at stale positions on `typed` (the user's text), giving
    /// `damaged`. Sends the edit that turns `damaged` into `typed` with the change placed
    /// correctly (or back into `typed` alone, when the change no longer fits), unless the
    /// document moved on again (`later`), which is then reported.
    async fn repair(
        &self,
        change: &FileChange,
        placed: &Placed,
        shown: &str,
        typed: String,
        damaged: String,
        later: bool,
    ) -> ChangeOutcome {
        tracing::warn!("the editor applied an edit to {shown} at stale positions; repairing it");
        let path = &placed.made.path;
        let current = self.documents.find(path).map(|doc| doc.text.to_string());
        if later || current.as_deref() != Some(damaged.as_str()) {
            return ChangeOutcome::Refused {
                reason: format!(
                    "the editor applied the change at out-of-date positions while the user \
                     typed in {shown}, and the document changed again before Tandem could \
                     repair it; check the file"
                ),
            };
        }
        let (target, outcome) = match rebase::rebase(change, Some(&typed), shown) {
            Ok(rebased) => {
                let made = FileChange {
                    old_text: Some(typed),
                    new_text: rebased.new_text.clone(),
                    edits: rebased.edits,
                    ..placed.made.clone()
                };
                (rebased.new_text, ChangeOutcome::Rebased(Box::new(made)))
            }
            Err(Conflict { detail }) => (typed, ChangeOutcome::Conflict { detail }),
        };
        let fix = FileChange {
            path: path.clone(),
            real: placed.made.real.clone(),
            old_text: Some(damaged),
            new_text: target,
            edits: Vec::new(),
        };
        let fixed = match self.place(&fix, shown).await {
            Ok(Placement::Ready(fixed)) => fixed,
            Ok(Placement::Nothing) => return outcome,
            Ok(Placement::Conflict(_)) | Err(_) => {
                return ChangeOutcome::Refused {
                    reason: format!(
                        "the editor applied the change at out-of-date positions in {shown} and \
                         Tandem could not repair it; check the file"
                    ),
                }
            }
        };
        let caps = self.client.capabilities();
        let edit = edits::workspace_edit(fixed.planned, &caps, None);
        let label = format!("Tandem: repair {shown}");
        let Some(slot) = self.inflight.acquire(path, self.settings().timeout).await else {
            return ChangeOutcome::Refused {
                reason: format!(
                    "the editor applied the change at out-of-date positions in {shown} and \
                     another change was still unanswered, so Tandem could not repair it; check \
                     the file"
                ),
            };
        };
        match self
            .send(path, shown, label, edit, (slot, &fixed.made))
            .await
        {
            Answer::Applied => outcome,
            _ => ChangeOutcome::Refused {
                reason: format!(
                    "the editor applied the change at out-of-date positions in {shown} and did \
                     not take Tandem's repair; check the file"
                ),
            },
        }
    }

    /// Notices about late answers, for the next tool result; taken once.
    pub fn late_notices(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.notices))
    }
}

impl Consent {
    /// Nothing to ask: the change goes as it is.
    pub(super) fn direct(label: String) -> Self {
        Consent {
            label,
            annotation: None,
            asked: false,
        }
    }
}

/// Applies LSP `edits` (computed for another version) to `text` at their positions, as a
/// client that does not check versions would; `None` when they do not fit.
fn stale_apply(text: &Rope, edits: &[lsp::TextEdit], encoding: PositionEncoding) -> Option<Rope> {
    let plain = text.to_string();
    let mut bytes: Vec<TextEdit> = Vec::with_capacity(edits.len());
    for edit in edits {
        let at = |p: lsp::Position| {
            position::position_to_byte(text, position::Position::new(p.line, p.character), encoding)
        };
        let range = at(edit.range.start)..at(edit.range.end);
        if range.start > range.end || bytes.last().is_some_and(|e| e.range.end > range.start) {
            return None;
        }
        bytes.push(TextEdit {
            range,
            new_text: edit.new_text.clone(),
        });
    }
    Some(Rope::from_str(&apply_edits(&plain, &bytes)))
}

/// Whether `text` holds every replacement of `change` (a weak check for merged changes).
fn holds(text: &str, change: &FileChange) -> bool {
    rebase::change_edits(change)
        .iter()
        .all(|edit| edit.new_text.is_empty() || text.contains(&edit.new_text))
}

/// What the model is told when an answer comes after the timeout.
fn late_notice(
    shown: &str,
    answer: &Result<ApplyWorkspaceEditResponse, ClientError>,
    _version: Option<i32>,
) -> String {
    match answer {
        Ok(response) if response.applied => format!(
            "Note: the change to {shown} that timed out earlier was applied by the editor after \
             all. Read the file before changing it again."
        ),
        Ok(response) => format!(
            "Note: the change to {shown} that timed out earlier was not applied by the editor{}.",
            response
                .failure_reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default()
        ),
        Err(e) => {
            format!("Note: the change to {shown} that timed out earlier was not applied: {e}.")
        }
    }
}
