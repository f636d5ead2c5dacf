//! The `edit` tool: exact text replacements in one file, proposed to the workspace as minimal
//! edits.
//!
//! pi's semantics (v0.73): `edits[]` are all located in the file as it is (not one after the
//! other), must be unique and must not overlap, and either all apply or none does. Matching
//! ignores what a model cannot see or type reliably: a UTF-8 BOM, CRLF line endings, and (as a
//! fallback) the differences pi's fuzzy matching forgives ([`super::edit_match`]). Unlike pi,
//! which rewrites the whole file, Tandem changes only the matched bytes: the rest of the file,
//! line endings included, is kept byte for byte, and the proposal carries the exact replaced
//! ranges so an editor can apply (and undo) it as small edits.

use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};
use tokio_util::sync::CancellationToken;

use super::aborted;
use super::args::{parse, EditArgs};
use super::edit_diff::{diff_details, DiffDetails};
use super::edit_match::{locate_edits, no_change, to_lf, EditRequest};
use crate::env::ToolEnv;
use crate::paths::Access;
use crate::workspace::{
    apply_edits, read_text, ChangeOutcome, FileChange, TextEdit, WorkspaceError,
};

const DESCRIPTION: &str = "Edit one file by replacing exact text. Each entry of edits[] gives an \
oldText that must occur exactly once in the file and the newText that takes its place. All \
entries are located in the file as it is now (not one after another), so they must not overlap: \
when two changes touch the same block or neighbouring lines, make them one entry. Keep each \
oldText as short as it can be while still unique; do not pad it with long unchanged stretches to \
bridge distant changes. Matching tolerates CRLF line endings, trailing spaces and typographic \
quotes or dashes, but otherwise the text must match exactly, whitespace included.";

/// pi's message when the call carries no replacement.
const NO_EDITS: &str = "Edit tool input is invalid. edits must contain at least one replacement.";

/// The `edit` tool.
pub struct EditTool {
    env: Arc<ToolEnv>,
    schema: Value,
}

impl EditTool {
    /// The tool over `env`.
    pub fn new(env: Arc<ToolEnv>) -> Self {
        let replacement = json!({
            "type": "object",
            "properties": {
                "oldText": {
                    "type": "string",
                    "description": "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call."
                },
                "newText": {
                    "type": "string",
                    "description": "Replacement text for this targeted edit."
                }
            },
            "required": ["oldText", "newText"],
            "additionalProperties": false
        });
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Path to the file to edit (relative or absolute)"
                },
                "edits": {
                    "type": "array",
                    "items": replacement,
                    "description": "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead."
                }
            },
            "required": ["path", "edits"],
            "additionalProperties": false
        });
        EditTool { env, schema }
    }
}

impl AgentTool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    /// Accepts what models send besides the v0.73 shape, as pi does: `edits` as a JSON string,
    /// and the older top-level `oldText` / `newText` (appended to `edits`).
    fn prepare_arguments(&self, args: Value) -> Value {
        let Value::Object(mut args) = args else {
            return args;
        };
        if let Some(Value::String(text)) = args.get("edits") {
            if let Ok(parsed @ Value::Array(_)) = serde_json::from_str::<Value>(text) {
                args.insert("edits".into(), parsed);
            }
        }
        if let (Some(Value::String(_)), Some(Value::String(_))) =
            (args.get("oldText"), args.get("newText"))
        {
            let old_text = args.remove("oldText").unwrap_or_default();
            let new_text = args.remove("newText").unwrap_or_default();
            let mut edits = match args.remove("edits") {
                Some(Value::Array(edits)) => edits,
                _ => Vec::new(),
            };
            edits.push(json!({"oldText": old_text, "newText": new_text}));
            args.insert("edits".into(), Value::Array(edits));
        }
        Value::Object(args)
    }

    fn execute(&self, call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(self.run(call))
    }
}

impl EditTool {
    async fn run(&self, call: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: EditArgs = parse("edit", call.args.clone())?;
        if args.edits.is_empty() {
            return Err(ToolError::new(NO_EDITS));
        }
        let path = args.path;
        let resolved = self
            .env
            .resolve(&call.call_id, &path, Access::Write)
            .await?;
        let workspace = &self.env.workspace;

        let _turn = until_cancelled(&call.cancel, self.env.mutations.lock(&resolved.real)).await?;
        let original = until_cancelled(&call.cancel, read_text(&**workspace, &resolved.absolute))
            .await?
            .map_err(|e| read_error(&path, &e))?;

        let plan = {
            let shown = path.clone();
            tokio::task::spawn_blocking(move || plan_edit(original, &args.edits, &shown))
                .await
                .map_err(|e| ToolError::new(format!("Editing {path} failed: {e}")))??
        };
        if call.cancel.is_cancelled() {
            return Err(aborted());
        }

        let change = FileChange {
            real: resolved.real.clone(),
            path: resolved.absolute.clone(),
            old_text: Some(plan.original),
            new_text: plan.new_text,
            edits: plan.edits,
        };
        let blocks = change.edits.len();
        let (outcome, diagnostics) = self
            .env
            .propose_with_diagnostics(&call.call_id, change, &call.cancel)
            .await
            .map_err(|e| ToolError::new(e.to_string()))?;
        if let Some(error) = outcome.failure("the edit to", &path) {
            return Err(ToolError::new(error));
        }
        let details = match &outcome {
            // Re-based: the diff of what really changed, in the document as it was then.
            ChangeOutcome::Rebased(made) => {
                let before = made.old_text.as_deref().unwrap_or_default();
                diff_details(
                    &MatchView::new(before).lf,
                    &MatchView::new(&made.new_text).lf,
                )
            }
            _ => plan.details,
        };
        let mut json_details = json!({ "diff": details.diff });
        if let Some(line) = details.first_changed_line {
            json_details["firstChangedLine"] = json!(line);
        }
        let text = format!(
            "Successfully replaced {blocks} block(s) in {path}.{}{}",
            outcome.note().unwrap_or_default(),
            diagnostics.map(|d| format!("\n\n{d}")).unwrap_or_default()
        );
        Ok(ToolOutput::text(text).with_details(json_details))
    }
}

/// Awaits `work` unless the run is aborted first.
async fn until_cancelled<T>(
    cancel: &CancellationToken,
    work: impl std::future::Future<Output = T>,
) -> Result<T, ToolError> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(aborted()),
        done = work => Ok(done),
    }
}

/// pi's message for a file that cannot be edited.
fn read_error(path: &str, error: &WorkspaceError) -> ToolError {
    let why = match error {
        WorkspaceError::NotFound(_) => "Error code: ENOENT".to_string(),
        WorkspaceError::IsDirectory(_) => "Error code: EISDIR".to_string(),
        other => other.to_string(),
    };
    ToolError::new(format!("Could not edit file: {path}. {why}."))
}

/// A computed edit, ready to propose.
#[derive(Debug)]
struct EditPlan {
    /// The text the edits were computed against (BOM included).
    original: String,
    new_text: String,
    /// Replaced ranges of `original`.
    edits: Vec<TextEdit>,
    details: DiffDetails,
}

/// Locates `requests` in `original` and computes the new text, the replaced ranges and the
/// diff. Pure CPU work: run it off the async threads.
fn plan_edit(
    original: String,
    requests: &[EditRequest],
    path: &str,
) -> Result<EditPlan, ToolError> {
    let view = MatchView::new(&original);
    let located = locate_edits(&view.lf, requests, path).map_err(ToolError::new)?;
    let edits: Vec<TextEdit> = located
        .iter()
        .map(|edit| TextEdit {
            range: view.raw_offset(edit.range.start)..view.raw_offset(edit.range.end),
            new_text: view.raw_text(&edit.new_text),
        })
        .collect();
    let new_text = apply_edits(&original, &edits);
    if new_text == original {
        return Err(ToolError::new(no_change(path, requests.len())));
    }
    let details = diff_details(&view.lf, &apply_edits(&view.lf, &located));
    Ok(EditPlan {
        original,
        new_text,
        edits,
        details,
    })
}

/// The edit tool's matching and planning without a workspace, for the fuzz targets (`fuzz/`):
/// `edits` are (oldText, newText) pairs; returns the new text and the replaced ranges of
/// `original`, or the error text the model would see. Not a stable API.
#[doc(hidden)]
pub fn fuzz_plan_edit(
    original: &str,
    edits: &[(String, String)],
) -> Result<(String, Vec<TextEdit>), String> {
    let requests: Vec<EditRequest> = edits
        .iter()
        .map(|(old_text, new_text)| EditRequest {
            old_text: old_text.clone(),
            new_text: new_text.clone(),
        })
        .collect();
    let plan = plan_edit(original.to_string(), &requests, "file").map_err(|e| e.0)?;
    Ok((plan.new_text, plan.edits))
}

/// The file as the matcher sees it: no BOM, LF line endings, and the way back to the bytes.
struct MatchView {
    bom_len: usize,
    /// The file's line ending is CRLF (its first line break is one), as pi detects it.
    crlf: bool,
    /// The text with LF line endings.
    lf: String,
    /// Offsets in `lf` of the newlines that were CRLF.
    crlf_at: Vec<usize>,
}

impl MatchView {
    fn new(raw: &str) -> Self {
        let body = raw.strip_prefix('\u{FEFF}').unwrap_or(raw);
        let bom_len = raw.len() - body.len();
        let crlf = body.find('\n').is_some_and(|at| body[..at].ends_with('\r'));
        if !body.contains('\r') {
            return MatchView {
                bom_len,
                crlf,
                lf: body.to_string(),
                crlf_at: Vec::new(),
            };
        }
        let mut lf = String::with_capacity(body.len());
        let mut crlf_at = Vec::new();
        let mut rest = body;
        while let Some(at) = rest.find('\r') {
            lf.push_str(&rest[..at]);
            if rest[at + 1..].starts_with('\n') {
                crlf_at.push(lf.len());
                rest = &rest[at + 2..];
            } else {
                rest = &rest[at + 1..];
            }
            lf.push('\n');
        }
        lf.push_str(rest);
        debug_assert_eq!(to_lf(body), lf);
        MatchView {
            bom_len,
            crlf,
            lf,
            crlf_at,
        }
    }

    /// The offset in the original text of `offset` in the LF text. A CRLF pair is never split:
    /// an offset at its newline maps to its `\r`.
    fn raw_offset(&self, offset: usize) -> usize {
        self.bom_len + offset + self.crlf_at.partition_point(|&at| at < offset)
    }

    /// Replacement text with the file's line ending.
    fn raw_text(&self, text: &str) -> String {
        if self.crlf {
            text.replace('\n', "\r\n")
        } else {
            text.to_string()
        }
    }
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
