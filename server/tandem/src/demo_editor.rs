//! The demo's stand-in for an editor's documents: it applies the `WorkspaceEdit`s the server
//! sends (UTF-16 columns, any line ending) to its buffers, as an editor does — a file that was
//! not open is opened first — and writes a buffer to disk only when the server asks it to
//! (`tandem/saveDocuments`, before a command runs), as Tandem's editor plugins do.

use std::path::PathBuf;

use serde_json::Value;

/// The demo's copy of the documents: those it opened (with versions) and the files on disk.
#[derive(Default)]
pub(crate) struct Documents {
    /// Open documents by URI: text and version.
    pub(crate) open: std::collections::HashMap<String, (String, i64)>,
    /// Open documents changed since they were last saved.
    pub(crate) dirty: std::collections::BTreeSet<String>,
}

/// What applying an edit did to one document, for the notifications that follow.
pub(crate) enum Applied {
    /// An open document changed: `didChange` with its text and version.
    Changed(String, String, i64),
    /// A file that was not open was opened with the edit applied: `didOpen`.
    Opened(String, String, i64),
}

impl Documents {
    /// Applies a `WorkspaceEdit` to the buffers (opening files that were not open). Returns
    /// what changed, for `didChange` / `didOpen`.
    pub(crate) fn apply(&mut self, edit: &Value) -> Result<Vec<Applied>, String> {
        let mut per_uri: Vec<(String, Vec<Value>)> = Vec::new();
        if let Some(changes) = edit["documentChanges"].as_array() {
            for change in changes {
                match change["kind"].as_str() {
                    None => per_uri.push((
                        change["textDocument"]["uri"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        change["edits"].as_array().cloned().unwrap_or_default(),
                    )),
                    Some("create") => {
                        let uri = change["uri"].as_str().unwrap_or_default();
                        let path = uri_to_path(uri)?;
                        if let Some(parent) = path.parent() {
                            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
                        }
                        if !path.exists() {
                            std::fs::write(&path, "").map_err(|e| e.to_string())?;
                        }
                    }
                    Some(other) => return Err(format!("the demo does not support `{other}`")),
                }
            }
        } else if let Some(changes) = edit["changes"].as_object() {
            for (uri, edits) in changes {
                per_uri.push((uri.clone(), edits.as_array().cloned().unwrap_or_default()));
            }
        }
        let mut changed = Vec::new();
        for (uri, edits) in per_uri {
            let path = uri_to_path(&uri)?;
            let before = match self.open.get(&uri) {
                Some((text, _)) => text.clone(),
                None => std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?,
            };
            let after = apply_text_edits(&before, &edits)?;
            self.dirty.insert(uri.clone());
            match self.open.get_mut(&uri) {
                Some((text, version)) => {
                    *text = after.clone();
                    *version += 1;
                    changed.push(Applied::Changed(uri, after, *version));
                }
                None => {
                    self.open.insert(uri.clone(), (after.clone(), 1));
                    changed.push(Applied::Opened(uri, after, 1));
                }
            }
        }
        Ok(changed)
    }

    /// `tandem/saveDocuments`: writes each dirty buffer of `uris` to disk. Returns the saved
    /// URIs (for `didSave`) and the failures (URI, reason).
    pub(crate) fn save(&mut self, uris: &[Value]) -> (Vec<String>, Vec<(String, String)>) {
        let mut saved = Vec::new();
        let mut failed = Vec::new();
        for uri in uris.iter().filter_map(Value::as_str) {
            if !self.dirty.contains(uri) {
                continue;
            }
            let Some((text, _)) = self.open.get(uri) else {
                continue;
            };
            let written = uri_to_path(uri).and_then(|path| {
                std::fs::write(&path, text)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))
            });
            match written {
                Ok(()) => {
                    self.dirty.remove(uri);
                    saved.push(uri.to_owned());
                }
                Err(why) => failed.push((uri.to_owned(), why)),
            }
        }
        (saved, failed)
    }
}

/// Applies LSP `TextEdit`s (all against the original text, UTF-16 positions).
pub(crate) fn apply_text_edits(text: &str, edits: &[Value]) -> Result<String, String> {
    let mut spans = Vec::new();
    for edit in edits {
        let start = offset(text, &edit["range"]["start"])?;
        let end = offset(text, &edit["range"]["end"])?;
        let new = edit["newText"]
            .as_str()
            .ok_or("a text edit has no newText")?;
        spans.push((start, end.max(start), new));
    }
    // Later edits first, so earlier offsets stay valid; of edits at the same place the last
    // listed goes first, so inserts end up in the order given (as LSP requires).
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse((spans[i].0, i)));
    let mut out = text.to_string();
    for (start, end, new) in order.into_iter().map(|i| spans[i]) {
        out.replace_range(start..end, new);
    }
    Ok(out)
}

/// The byte offset of an LSP position (UTF-16 columns; `\n`, `\r\n` and `\r` end lines),
/// clamped to the line's end and the text's end as LSP clients do.
fn offset(text: &str, position: &Value) -> Result<usize, String> {
    let line = position["line"].as_u64().ok_or("a position has no line")?;
    let character = position["character"]
        .as_u64()
        .ok_or("a position has no character")?;
    let bytes = text.as_bytes();
    let mut at = 0;
    for _ in 0..line {
        match text[at..].find(['\n', '\r']) {
            Some(i) => {
                at += i + 1;
                if bytes[at - 1] == b'\r' && bytes.get(at) == Some(&b'\n') {
                    at += 1;
                }
            }
            None => return Ok(text.len()),
        }
    }
    let mut units = 0;
    for (i, c) in text[at..].char_indices() {
        if units >= character || c == '\n' || c == '\r' {
            return Ok(at + i);
        }
        units += c.len_utf16() as u64;
    }
    Ok(text.len())
}

/// The path of a `file://` URI, or an error naming it.
pub(crate) fn uri_to_path(uri: &str) -> Result<PathBuf, String> {
    crate::uri::to_path(uri).ok_or_else(|| format!("not a file URI: {uri}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn edit(l0: u64, c0: u64, l1: u64, c1: u64, new: &str) -> Value {
        json!({"range": {"start": {"line": l0, "character": c0},
            "end": {"line": l1, "character": c1}}, "newText": new})
    }

    #[test]
    fn applies_edits_with_utf16_columns_from_the_end() {
        let text = "a😀b\r\nsecond\nthird";
        let edits = [
            edit(0, 0, 0, 0, "<"),
            edit(0, 3, 0, 4, "B"),
            edit(2, 0, 2, 5, "3rd"),
            edit(0, 0, 0, 0, ">"),
        ];
        assert_eq!(
            apply_text_edits(text, &edits),
            Ok("<>a😀B\r\nsecond\n3rd".to_string())
        );
    }

    #[test]
    fn a_uri_that_is_not_a_file_is_an_error() {
        assert_eq!(
            uri_to_path("untitled:x"),
            Err("not a file URI: untitled:x".to_string())
        );
    }
}
