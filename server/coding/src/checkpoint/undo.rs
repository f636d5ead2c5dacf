//! Undo: which checkpoints to take back, the reverse they make against the documents as they
//! are now, and the one proposal that applies it.
//!
//! A checkpoint is taken back once: an undo entry names the checkpoints it undid, and the
//! checkpoints on the current branch that no undo entry names are the ones left to undo,
//! newest last. Without a target, undo takes the newest of them; "back to" a turn takes every
//! one after that turn, newest first, as one edit.
//!
//! A session file is data that can come from elsewhere, so a recorded path is used only inside
//! the workspace roots and never when it makes tools run code ([`crate::paths::protected_reason`]):
//! such a file is refused and listed, never written.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::Value;
use tandem_ai::sync::lock;
use tandem_ai::UserContent;

use super::reverse::{reverse_step, RefusedHunk};
use super::{Checkpoint, Step, UndoRecord, CHECKPOINT_TYPE, DATA_VERSION, UNDO_TYPE};
use crate::session::{EntryKind, SessionManager};
use crate::workspace::{
    read_text, ChangeOutcome, ChangeSet, FileChange, FileDeletion, Workspace, WorkspaceError,
};

/// The call id an undo's proposal and questions carry.
pub const UNDO_CALL: &str = "tandem-undo";

/// Why an undo could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UndoError {
    /// No checkpoint is left to undo on the current branch.
    #[error("Nothing to undo: no turn on this branch changed files that are not undone yet")]
    NothingToUndo,
    /// `back_to` names no entry of the current branch.
    #[error("No turn `{0}` on this session's current branch; name a turn's entry id from tandem/sessions/entries")]
    UnknownTurn(String),
    /// A file could not be read or written; what was written before it stays.
    #[error("The undo stopped at a file: {0}")]
    Workspace(#[from] WorkspaceError),
    /// The undo entry could not be written (the files were changed).
    #[error("The files were restored but the undo could not be recorded in the session: {0}")]
    Persistence(String),
    /// The session is running a prompt.
    #[error("Tandem is working on a prompt; undo once it has finished")]
    Busy,
}

/// A checkpoint taken back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoneTurn {
    /// The checkpoint entry.
    pub checkpoint: String,
    /// The prompt's entry, when recorded.
    pub turn: Option<String>,
    /// The prompt's first line.
    pub prompt: String,
}

/// What an undo would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UndoPlan {
    /// The checkpoints, newest first.
    pub turns: Vec<UndoneTurn>,
    /// The proposal.
    pub set: ChangeSet,
    /// Hunks (and files) left as they are, with why.
    pub refused: Vec<RefusedHunk>,
}

/// How the proposal ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UndoOutcome {
    /// The reverse is in place.
    Applied,
    /// The user or the editor refused it; nothing changed and the turns stay undoable.
    Rejected {
        /// Why, when given.
        reason: Option<String>,
    },
    /// Every hunk was refused: nothing was proposed (the turns count as undone).
    NothingToApply,
}

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoReport {
    /// The turns taken back, newest first.
    pub turns: Vec<UndoneTurn>,
    /// Files changed back.
    pub changed: Vec<PathBuf>,
    /// Files the turns created, deleted.
    pub deleted: Vec<PathBuf>,
    /// Hunks left as they are.
    pub refused: Vec<RefusedHunk>,
    /// How the proposal ended.
    pub outcome: UndoOutcome,
}

/// The `customType` of the hidden message that tells the model about an applied undo.
pub const UNDO_NOTE_TYPE: &str = "tandem.undo-note";

/// What the model is told after an applied undo.
fn model_note(turns: &[UndoneTurn], refused: &[RefusedHunk], cwd: &std::path::Path) -> String {
    let prompts: Vec<String> = turns.iter().map(|t| format!("\"{}\"", t.prompt)).collect();
    let mut note = format!(
        "The user undid the file changes made for {} ({}): those files are back as they were \
         before. Read a file again before changing it.",
        plural(turns.len(), "prompt", "prompts"),
        prompts.join(", ")
    );
    if !refused.is_empty() {
        note.push_str(" Left as the user has them (edited since):");
        for hunk in refused {
            let shown = crate::paths::display(std::path::Path::new(&hunk.path), cwd);
            note.push_str(&format!(" {shown}:{};", hunk.line));
        }
    }
    note
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl UndoReport {
    /// One line for the user, the same in every front door.
    pub fn summary(&self) -> String {
        let turns = plural(self.turns.len(), "turn", "turns");
        let refused = match self.refused.len() {
            0 => String::new(),
            1 => "; 1 hunk you changed since was left as it is".to_string(),
            n => format!("; {n} hunks you changed since were left as they are"),
        };
        match &self.outcome {
            UndoOutcome::Applied => {
                let mut done = vec![format!(
                    "{} changed back",
                    plural(self.changed.len(), "file", "files")
                )];
                if !self.deleted.is_empty() {
                    done.push(format!("{} deleted", self.deleted.len()));
                }
                format!("Undid {turns}: {}{refused}.", done.join(", "))
            }
            UndoOutcome::Rejected { reason } => format!(
                "The undo of {turns} was not applied{}; nothing changed.",
                reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default()
            ),
            UndoOutcome::NothingToApply => format!(
                "Nothing to put back for {turns}: every change was edited since, so all were left as they are."
            ),
        }
    }

    /// The summary, then one line per refused hunk (`path:line: why`, paths relative to
    /// `cwd`).
    pub fn describe(&self, cwd: &std::path::Path) -> String {
        let mut out = self.summary();
        for hunk in &self.refused {
            let shown = crate::paths::display(std::path::Path::new(&hunk.path), cwd);
            out.push_str(&format!("\n  {shown}:{}: {}", hunk.line, hunk.reason));
        }
        out
    }
}

/// The checkpoints an undo takes back, newest first, with their entry ids: the newest one not
/// undone yet, or with `back_to` every one after that turn (a prompt's entry id or a
/// checkpoint's).
pub fn pending_checkpoints(
    session: &SessionManager,
    back_to: Option<&str>,
) -> Result<Vec<(String, Checkpoint)>, UndoError> {
    // Only the branch's `custom` entries are read (a long branch stays on disk).
    let customs = session.branch_entries_of_type("custom");
    let mut undone = std::collections::HashSet::new();
    for (_, entry) in &customs {
        if let Some(record) = data_of::<UndoRecord>(&entry.kind, UNDO_TYPE) {
            undone.extend(record.checkpoints);
        }
    }
    let checkpoints: Vec<(usize, String, Checkpoint)> = customs
        .iter()
        .filter(|(_, e)| !undone.contains(&e.id))
        .filter_map(|(i, e)| {
            data_of::<Checkpoint>(&e.kind, CHECKPOINT_TYPE).map(|c| (*i, e.id.clone(), c))
        })
        .filter(|(_, _, c)| c.version <= DATA_VERSION)
        .collect();
    let mut chosen: Vec<(String, Checkpoint)> = match back_to {
        None => checkpoints
            .into_iter()
            .last()
            .map(|(_, id, c)| (id, c))
            .into_iter()
            .collect(),
        Some(target) => {
            let at = session
                .branch_position(target)
                .ok_or_else(|| UndoError::UnknownTurn(target.to_string()))?;
            // A named prompt keeps its own checkpoint: only later turns go.
            let cutoff = customs
                .iter()
                .filter_map(|(i, e)| {
                    data_of::<Checkpoint>(&e.kind, CHECKPOINT_TYPE)
                        .filter(|c| c.turn.as_deref() == Some(target))
                        .map(|_| *i)
                })
                .next()
                .unwrap_or(at);
            checkpoints
                .into_iter()
                .filter(|(i, _, _)| *i > cutoff)
                .map(|(_, id, c)| (id, c))
                .collect()
        }
    };
    chosen.reverse();
    if chosen.is_empty() {
        return Err(UndoError::NothingToUndo);
    }
    Ok(chosen)
}

/// `kind`'s data when it is a `custom` entry of `custom_type` in a shape this version reads.
fn data_of<T: serde::de::DeserializeOwned>(kind: &EntryKind, custom_type: &str) -> Option<T> {
    match kind {
        EntryKind::Custom {
            custom_type: t,
            data: Some(data),
        } if t == custom_type => serde_json::from_value(data.clone()).ok(),
        _ => None,
    }
}

/// One file during planning: its text when first read and as the reverse leaves it.
struct FileState {
    real: PathBuf,
    original: Option<String>,
    current: Option<String>,
}

/// Works out the reverse of `checkpoints` (newest first) against the documents as
/// `workspace` has them now.
pub async fn plan_undo(
    workspace: &dyn Workspace,
    checkpoints: &[(String, Checkpoint)],
) -> Result<UndoPlan, UndoError> {
    let mut plan = UndoPlan::default();
    let mut files: BTreeMap<PathBuf, FileState> = BTreeMap::new();
    let mut blocked: BTreeMap<PathBuf, String> = BTreeMap::new();
    for (id, checkpoint) in checkpoints {
        plan.turns.push(UndoneTurn {
            checkpoint: id.clone(),
            turn: checkpoint.turn.clone(),
            prompt: checkpoint.prompt.clone(),
        });
        for step in checkpoint.changes.iter().rev() {
            let path = PathBuf::from(&step.path);
            if let Some(reason) = blocked.get(&path) {
                refuse_step(&mut plan, step, reason);
                continue;
            }
            if !files.contains_key(&path) {
                match open(workspace, &path).await? {
                    Ok(state) => {
                        files.insert(path.clone(), state);
                    }
                    Err(reason) => {
                        refuse_step(&mut plan, step, &reason);
                        blocked.insert(path, reason);
                        continue;
                    }
                }
            }
            let Some(state) = files.get_mut(&path) else {
                continue;
            };
            reverse_into(state, step, &mut plan.refused);
        }
    }
    for (path, state) in files {
        match (state.original, state.current) {
            (Some(original), Some(current)) if original != current => {
                plan.set.changes.push(FileChange {
                    path,
                    real: state.real,
                    old_text: Some(original),
                    new_text: current,
                    edits: Vec::new(),
                })
            }
            (Some(original), None) => plan.set.deletions.push(FileDeletion {
                path,
                real: state.real,
                old_text: original,
            }),
            _ => {}
        }
    }
    Ok(plan)
}

/// Reverses `step` in `state`, adding what could not be reversed to `refused`.
fn reverse_into(state: &mut FileState, step: &Step, refused: &mut Vec<RefusedHunk>) {
    match (&state.current, step.created) {
        // Created by the turn and already gone: nothing to take back.
        (None, true) => {}
        (None, false) => refuse_step_into(refused, step, "the file no longer exists"),
        (Some(current), true) => {
            let created = step.hunks.first().map(|h| h.after.as_str());
            if created == Some(current.as_str()) {
                state.current = None;
            } else {
                refuse_step_into(
                    refused,
                    step,
                    "the turn created this file and it changed since; it is kept",
                );
            }
        }
        (Some(current), false) => {
            let (text, mut left) = reverse_step(current, step);
            refused.append(&mut left);
            state.current = Some(text);
        }
    }
}

fn refuse_step(plan: &mut UndoPlan, step: &Step, reason: &str) {
    refuse_step_into(&mut plan.refused, step, reason);
}

fn refuse_step_into(refused: &mut Vec<RefusedHunk>, step: &Step, reason: &str) {
    let line = step.hunks.first().map_or(1, |h| h.line + 1);
    refused.push(RefusedHunk {
        path: step.path.clone(),
        line,
        reason: reason.to_string(),
    });
}

/// Reads `path` for planning; `Ok(Err(reason))` when the undo must leave it alone.
async fn open(
    workspace: &dyn Workspace,
    path: &std::path::Path,
) -> Result<Result<FileState, String>, UndoError> {
    let roots = workspace.roots();
    let cwd = roots.first().cloned().unwrap_or_else(|| PathBuf::from("/"));
    let Some(raw) = path.to_str().filter(|_| path.is_absolute()) else {
        return Ok(Err("the recorded path is not an absolute UTF-8 path".into()));
    };
    let resolved = match crate::paths::resolve(raw, &cwd, roots) {
        Ok(r) => r,
        Err(e) => return Ok(Err(e.to_string())),
    };
    if !resolved.inside {
        return Ok(Err(
            "it is outside the workspace; undo does not write there".into(),
        ));
    }
    if let Some(risk) = crate::paths::protected_reason(&resolved.real, roots) {
        return Ok(Err(format!("{risk}; undo it by hand")));
    }
    let text = match read_text(workspace, path).await {
        Ok(text) => Some(text),
        Err(WorkspaceError::NotFound(_)) => None,
        Err(e) => return Err(e.into()),
    };
    Ok(Ok(FileState {
        real: resolved.real,
        original: text.clone(),
        current: text,
    }))
}

/// Undoes the newest turn not undone yet, or every turn after `back_to`: works out the reverse,
/// proposes it as one edit, and records the undo when it was applied (or when every hunk was
/// refused, so the next undo moves on). An applied undo is also told to the model, as a hidden
/// `custom_message` ([`UNDO_NOTE_TYPE`]), so its next turn does not assume its edits are there. The session is locked only around its reads and the
/// append, never across the proposal.
pub async fn undo(
    workspace: &dyn Workspace,
    session: &Mutex<SessionManager>,
    back_to: Option<&str>,
) -> Result<UndoReport, UndoError> {
    let checkpoints = pending_checkpoints(&lock(session), back_to)?;
    let plan = plan_undo(workspace, &checkpoints).await?;
    let changed: Vec<PathBuf> = plan.set.changes.iter().map(|c| c.path.clone()).collect();
    let deleted: Vec<PathBuf> = plan.set.deletions.iter().map(|d| d.path.clone()).collect();
    let outcome = if plan.set.is_empty() {
        UndoOutcome::NothingToApply
    } else {
        match workspace.propose_set(UNDO_CALL, plan.set).await? {
            ChangeOutcome::Applied => UndoOutcome::Applied,
            ChangeOutcome::Rejected { reason } => UndoOutcome::Rejected { reason },
            #[allow(unreachable_patterns)]
            _ => UndoOutcome::Rejected { reason: None },
        }
    };
    if !matches!(outcome, UndoOutcome::Rejected { .. }) {
        let record = UndoRecord {
            version: DATA_VERSION,
            checkpoints: plan.turns.iter().map(|t| t.checkpoint.clone()).collect(),
            refused: plan.refused.iter().map(ToString::to_string).collect(),
        };
        let data = serde_json::to_value(&record).unwrap_or(Value::Null);
        let mut s = lock(session);
        s.append_custom(UNDO_TYPE, Some(data))
            .map_err(|e| UndoError::Persistence(e.to_string()))?;
        if outcome == UndoOutcome::Applied {
            // The model remembers writing what is gone now: tell it, out of the user's sight.
            let note = model_note(&plan.turns, &plan.refused, s.cwd());
            s.append_custom_message(UNDO_NOTE_TYPE, UserContent::Text(note), false, None)
                .map_err(|e| UndoError::Persistence(e.to_string()))?;
        }
    }
    let applied = outcome == UndoOutcome::Applied;
    Ok(UndoReport {
        turns: plan.turns,
        changed: if applied { changed } else { Vec::new() },
        deleted: if applied { deleted } else { Vec::new() },
        refused: plan.refused,
        outcome,
    })
}
