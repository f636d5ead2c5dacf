//! A tool's [`FileChange`] → a `WorkspaceEdit` of minimal `TextEdit`s against the text the user
//! sees.
//!
//! Two steps. [`plan`] works out *what* changes: for an edit, the tool's exact byte ranges
//! (valid only if the buffer still holds the text the tool read); for a whole-file write, a
//! line diff (`rebase::line_hunks`) between the current text and the new one. Either way the
//! edits are made minimal ([`minimal`], [`trim`]): only the changed lines, without the text
//! they keep at their start and end, so the editor keeps cursors, marks, folds and undo
//! granularity on everything that stays. Byte offsets
//! become LSP positions here, in the negotiated encoding, through [`crate::lsp::position`].
//! [`workspace_edit`] then chooses the *shape* the client understands: versioned
//! `documentChanges` for open documents, a `CreateFile` operation for new files, a plain
//! `changes` map otherwise, with change annotations when the user confirms in the editor.
//!
//! A file read from disk may start with a UTF-8 BOM that editors hide; positions are counted
//! without it.

use std::borrow::Cow;
use std::collections::HashMap;

use ropey::Rope;
use similar::{DiffTag, TextDiff};
use tandem_coding::workspace::{rebase, FileChange};
use tower_lsp_server::ls_types::{
    self as lsp, AnnotatedTextEdit, ChangeAnnotation, CreateFile, DocumentChangeOperation,
    DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier, ResourceOp, TextDocumentEdit,
    Uri, WorkspaceEdit,
};

use super::client::EditCapabilities;
use crate::lsp::position::{self, PositionEncoding};

const BOM: char = '\u{FEFF}';

/// The text a change is computed against.
#[derive(Debug, Clone)]
pub enum Base {
    /// An open editor buffer.
    Open {
        /// Its version, for the versioned identifier.
        version: i32,
        /// Its text.
        text: Rope,
    },
    /// The file on disk (not open in the editor).
    Disk(String),
    /// No such file yet.
    Missing,
}

/// What to send for one file, before choosing the edit's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedChange {
    /// The document.
    pub uri: Uri,
    /// The open document's version; `None` when it is not open.
    pub version: Option<i32>,
    /// The file does not exist yet.
    pub create: bool,
    /// The edits, in document order, positions in the negotiated encoding.
    pub edits: Vec<lsp::TextEdit>,
    /// Lines added (for the confirmation question).
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

/// The change's ranges no longer fit the current text (it changed since the tool read it, or
/// the ranges are not sorted, disjoint ranges of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stale;

/// Works out the text edits that turn `base` into `change.new_text`.
pub fn plan(
    change: &FileChange,
    uri: Uri,
    base: Base,
    encoding: PositionEncoding,
) -> Result<PlannedChange, Stale> {
    let (version, rope, disk, bom) = match base {
        Base::Missing if !change.edits.is_empty() => return Err(Stale),
        Base::Missing => {
            let text = change.new_text.clone();
            return Ok(PlannedChange {
                uri,
                version: None,
                create: true,
                added: text.lines().count(),
                removed: 0,
                edits: vec![lsp::TextEdit::new(lsp::Range::default(), text)],
            });
        }
        Base::Open { version, text } => (Some(version), text, None, 0),
        Base::Disk(text) => {
            let bom = if text.starts_with(BOM) {
                BOM.len_utf8()
            } else {
                0
            };
            (None, Rope::from_str(&text[bom..]), Some(text), bom)
        }
    };
    let mut planned = PlannedChange {
        uri,
        version,
        create: false,
        edits: Vec::new(),
        added: 0,
        removed: 0,
    };
    let byte_edits = if change.edits.is_empty() {
        let new_text = if bom > 0 {
            change
                .new_text
                .strip_prefix(BOM)
                .unwrap_or(&change.new_text)
        } else {
            &change.new_text
        };
        let shown = match &disk {
            Some(text) => Cow::Borrowed(&text[bom..]),
            None => Cow::Owned(rope.to_string()),
        };
        line_diff(&shown, new_text, &mut planned)
    } else {
        // The ranges are offsets into `old_text`: they hold only if that is still the text.
        let old = change.old_text.as_deref().ok_or(Stale)?;
        let unchanged = match &disk {
            Some(text) => text == old,
            None => rope == old,
        };
        if !unchanged {
            return Err(Stale);
        }
        let shown = &old[bom..];
        let mut edits = Vec::with_capacity(change.edits.len());
        let mut previous_end = 0;
        for edit in &change.edits {
            let start = edit.range.start.saturating_sub(bom);
            let end = edit.range.end.saturating_sub(bom);
            // Ranges out of order, overlapping or off the text cannot be this text's edits.
            if start < previous_end
                || end < start
                || !shown.is_char_boundary(start)
                || !shown.is_char_boundary(end)
            {
                return Err(Stale);
            }
            previous_end = end;
            count_lines(shown, start..end, &edit.new_text, &mut planned);
            edits.extend(minimal(shown, start..end, &edit.new_text));
        }
        edits
    };
    planned.edits = byte_edits
        .into_iter()
        .map(|(range, new_text)| {
            let start = to_lsp(position::byte_to_position(&rope, range.start, encoding));
            let end = to_lsp(position::byte_to_position(&rope, range.end, encoding));
            lsp::TextEdit::new(lsp::Range::new(start, end), new_text)
        })
        .collect();
    Ok(planned)
}

/// The replacements turning `old` into `new` (each run of changed lines is one edit, trimmed
/// as [`minimal`] trims), counted into `planned`.
fn line_diff(
    old: &str,
    new: &str,
    planned: &mut PlannedChange,
) -> Vec<(std::ops::Range<usize>, String)> {
    rebase::line_hunks(old, new)
        .into_iter()
        .map(|hunk| {
            planned.removed += old[hunk.range.clone()].lines().count();
            planned.added += hunk.new_text.lines().count();
            trim(old, hunk.range, &hunk.new_text)
        })
        .collect()
}

/// The edits that turn `range` of `old` into `new_text`, as small as they can be: only the
/// lines that change (a line diff inside the range), each without the text it keeps at its
/// start and end. The editor then keeps cursors, marks and folds on everything that stays,
/// inside the tool's range too (`hello world` → `hello there` replaces `world` only).
fn minimal(
    old: &str,
    range: std::ops::Range<usize>,
    new_text: &str,
) -> Vec<(std::ops::Range<usize>, String)> {
    let segment = &old[range.clone()];
    let hunks = rebase::line_hunks(segment, new_text);
    if hunks.is_empty() && segment != new_text {
        // The diff gave up (its time limit): the range whole.
        return vec![trim(old, range, new_text)];
    }
    hunks
        .into_iter()
        .map(|hunk| {
            let (at, text) = trim(segment, hunk.range, &hunk.new_text);
            (range.start + at.start..range.start + at.end, text)
        })
        .collect()
}

/// `range` of `old` replaced by `new_text`, without the common start and end: cut on
/// character boundaries only, and never between a `\r` and its `\n` (editors count a line
/// break as one).
fn trim(
    old: &str,
    range: std::ops::Range<usize>,
    new_text: &str,
) -> (std::ops::Range<usize>, String) {
    let replaced = &old[range.clone()];
    let splits_crlf = |text: &str, at: usize| {
        at > 0
            && text.as_bytes().get(at - 1) == Some(&b'\r')
            && text.as_bytes().get(at) == Some(&b'\n')
    };
    let mut head = replaced
        .bytes()
        .zip(new_text.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while head > 0
        && (!replaced.is_char_boundary(head)
            || !new_text.is_char_boundary(head)
            || splits_crlf(replaced, head)
            || splits_crlf(new_text, head))
    {
        head -= 1;
    }
    let (old_rest, new_rest) = (&replaced[head..], &new_text[head..]);
    let mut tail = old_rest
        .bytes()
        .rev()
        .zip(new_rest.bytes().rev())
        .take_while(|(a, b)| a == b)
        .count();
    while tail > 0 && {
        let (o, n) = (old_rest.len() - tail, new_rest.len() - tail);
        !old_rest.is_char_boundary(o)
            || !new_rest.is_char_boundary(n)
            || splits_crlf(old_rest, o)
            || splits_crlf(new_rest, n)
    } {
        tail -= 1;
    }
    let start = range.start + head;
    let end = range.end - tail;
    (start..end, new_rest[..new_rest.len() - tail].to_string())
}

/// Adds the lines replacing `range` of `old` with `new_text` removes and adds, counted over
/// the whole lines the range touches.
fn count_lines(
    old: &str,
    range: std::ops::Range<usize>,
    new_text: &str,
    planned: &mut PlannedChange,
) {
    let line_start = old[..range.start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = old[range.end..]
        .find('\n')
        .map_or(old.len(), |i| range.end + i + 1);
    let before = &old[line_start..line_end];
    let after = format!(
        "{}{new_text}{}",
        &old[line_start..range.start],
        &old[range.end..line_end]
    );
    let diff = TextDiff::from_lines(before, after.as_str());
    for op in diff.ops() {
        let (_, old_lines, new_lines) = op.as_tag_tuple();
        if op.tag() != DiffTag::Equal {
            planned.removed += old_lines.len();
            planned.added += new_lines.len();
        }
    }
}

fn to_lsp(p: position::Position) -> lsp::Position {
    lsp::Position::new(p.line, p.character)
}

/// One document's `TextDocumentEdit` at `version`, every edit marked with the annotation
/// `annotation` when given.
pub(super) fn document_edit(
    uri: Uri,
    version: Option<i32>,
    edits: Vec<lsp::TextEdit>,
    annotation: Option<&str>,
) -> TextDocumentEdit {
    TextDocumentEdit {
        text_document: OptionalVersionedTextDocumentIdentifier { uri, version },
        edits: edits
            .into_iter()
            .map(|text_edit| match annotation {
                Some(id) => OneOf::Right(AnnotatedTextEdit {
                    text_edit,
                    annotation_id: id.to_owned(),
                }),
                None => OneOf::Left(text_edit),
            })
            .collect(),
    }
}

/// Whether `planned` can carry a change annotation for this client: annotations live in
/// `documentChanges`, and a new file needs the client's create operation.
pub fn can_annotate(planned: &PlannedChange, caps: &EditCapabilities) -> bool {
    caps.change_annotations && caps.document_changes && (!planned.create || caps.create_files)
}

/// The `WorkspaceEdit` for `planned` in the shape the client supports; `annotation` (id and
/// annotation) marks every edit when given (check [`can_annotate`] first).
pub fn workspace_edit(
    planned: PlannedChange,
    caps: &EditCapabilities,
    annotation: Option<(String, ChangeAnnotation)>,
) -> WorkspaceEdit {
    let id = annotation.as_ref().map(|(id, _)| id.clone());
    let change_annotations = annotation.map(|(id, a)| HashMap::from([(id, a)]));
    let PlannedChange {
        uri,
        version,
        create,
        edits,
        ..
    } = planned;
    let document_edit = |uri: Uri| document_edit(uri, version, edits.clone(), id.as_deref());
    let document_changes = if create && caps.create_files {
        let create = ResourceOp::Create(CreateFile {
            uri: uri.clone(),
            options: None,
            annotation_id: id.clone(),
        });
        Some(DocumentChanges::Operations(vec![
            DocumentChangeOperation::Op(create),
            DocumentChangeOperation::Edit(document_edit(uri.clone())),
        ]))
    } else if caps.document_changes && !create && (version.is_some() || id.is_some()) {
        Some(DocumentChanges::Edits(vec![document_edit(uri.clone())]))
    } else {
        None
    };
    match document_changes {
        Some(document_changes) => WorkspaceEdit {
            changes: None,
            document_changes: Some(document_changes),
            change_annotations,
        },
        None => WorkspaceEdit {
            changes: Some(HashMap::from([(uri, edits)])),
            document_changes: None,
            change_annotations: None,
        },
    }
}
