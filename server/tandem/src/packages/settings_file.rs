//! The `packages` list of a settings.json, read and written in place. Only the text of the
//! `packages` value changes (the key is added before the closing brace when absent): the file's
//! other keys, their order, its comments and its formatting stay as they were. The file is
//! written whole to a temporary file beside it and renamed over it, so a reader never sees half
//! of it; a symlinked settings.json is written where the link points.
//!
//! Settings files are JSON with comments and trailing commas ([`tandem_ai::jsonc`]): the
//! comments are blanked with every byte kept in place, so positions found in the blanked text
//! are positions in the file.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// A settings file's `packages` entries (strings or `{source, …}` objects), empty when the
/// file or the key is absent.
pub fn read(path: &Path) -> Result<Vec<Value>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("could not read {}: {e}", path.display())),
    };
    let root = parse(&text, path)?;
    match root.get("packages") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.clone()),
        Some(_) => Err(format!(
            "\"packages\" in {} is not a list; make it a list of sources, then try again",
            path.display()
        )),
    }
}

/// Replaces the `packages` value of the settings file at `path` with `packages` (creating the
/// file and its directory when needed), atomically.
pub fn write(path: &Path, packages: &[Value]) -> Result<(), String> {
    let target = real_target(path);
    let text = match std::fs::read_to_string(&target) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("could not read {}: {e}", target.display())),
    };
    let value = Value::Array(packages.to_vec());
    let new_text = match text.as_deref() {
        Some(text) if !text.trim().trim_start_matches('\u{feff}').trim().is_empty() => {
            parse(text, path)?;
            edit(text, &value).ok_or_else(|| {
                format!(
                    "could not find where to write \"packages\" in {}; add `\"packages\": []` \
                     to it by hand, then try again",
                    path.display()
                )
            })?
        }
        _ => format!("{{\n  \"packages\": {}\n}}\n", render(&value, "  ")),
    };
    write_atomically(&target, &new_text)
}

/// The file a settings path stands for: a symlink's target, so the link survives.
fn real_target(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// The file's top-level object, or why it cannot be edited.
fn parse(text: &str, path: &Path) -> Result<serde_json::Map<String, Value>, String> {
    match tandem_ai::jsonc::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(format!(
            "{} does not hold a JSON object; fix it, then try again",
            path.display()
        )),
        Err(e) => Err(format!(
            "{} is not valid JSON ({e}); fix it, then try again (it was not changed)",
            path.display()
        )),
    }
}

/// `text` with its top-level `packages` value replaced by `value`, or the key added.
fn edit(text: &str, value: &Value) -> Option<String> {
    // Positions in the blanked text are positions in `body` (the text without a leading BOM).
    let bom = if text.starts_with('\u{feff}') {
        "\u{feff}"
    } else {
        ""
    };
    let body = &text[bom.len()..];
    let blanked = tandem_ai::jsonc::to_json(body);
    let b = blanked.as_bytes();
    if b.len() != body.len() {
        return None;
    }
    let object = scan_object(b)?;
    let edited = match object.members.iter().rev().find(|m| m.key == "packages") {
        Some(member) => {
            let indent = line_indent(body, member.key_start).unwrap_or("  ");
            format!(
                "{}{}{}",
                &body[..member.value_start],
                render(value, indent),
                &body[member.value_end..]
            )
        }
        None => insert(body, &object, value),
    };
    Some(format!("{bom}{edited}"))
}

/// A new `"packages"` member before the object's closing brace.
fn insert(body: &str, object: &Object, value: &Value) -> String {
    let indent = object
        .members
        .first()
        .and_then(|m| line_indent(body, m.key_start))
        .unwrap_or("  ");
    let close = object.close;
    let line_start = body[..close].rfind('\n').map_or(0, |n| n + 1);
    let brace_alone = body[line_start..close].trim().is_empty() && line_start > 0;
    let member = format!("{indent}\"packages\": {}", render(value, indent));
    let (at, member) = if brace_alone {
        (line_start, format!("{member}\n"))
    } else {
        (close, format!("\n{member}\n"))
    };
    match object.members.last() {
        Some(last) if !has_comma(&body[last.value_end..close]) => format!(
            "{},{}{}{}",
            &body[..last.value_end],
            &body[last.value_end..at],
            member,
            &body[at..]
        ),
        _ => format!("{}{}{}", &body[..at], member, &body[at..]),
    }
}

/// Whether the text between a value and the closing brace (blanks and comments) holds a comma
/// outside its comments: a trailing comma.
fn has_comma(between: &str) -> bool {
    let bytes = between.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b',' => return true,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = between[i..].find('\n').map_or(bytes.len(), |n| i + n);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = between[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |n| i + 2 + n + 2);
            }
            _ => i += 1,
        }
    }
    false
}

/// The blanks before `at` on its line, when nothing else is there.
fn line_indent(body: &str, at: usize) -> Option<&str> {
    let start = body[..at].rfind('\n').map_or(0, |n| n + 1);
    let before = &body[start..at];
    (before.chars().all(|c| c == ' ' || c == '\t')).then_some(before)
}

/// `value` as pi writes settings (two-space indentation), continued lines indented by `indent`.
fn render(value: &Value, indent: &str) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_else(|_| "[]".to_string());
    let mut out = String::new();
    for (n, line) in pretty.lines().enumerate() {
        if n > 0 {
            out.push('\n');
            out.push_str(indent);
        }
        out.push_str(line);
    }
    out
}

/// A top-level member: where its key and value are.
struct Member {
    key: String,
    key_start: usize,
    value_start: usize,
    value_end: usize,
}

/// The top-level object's members and where its closing brace is.
struct Object {
    members: Vec<Member>,
    close: usize,
}

/// Scans blanked (plain) JSON for the top-level object's members.
fn scan_object(b: &[u8]) -> Option<Object> {
    let mut i = skip_blanks(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut members = Vec::new();
    loop {
        i = skip_blanks(b, i);
        match b.get(i)? {
            b'}' => return Some(Object { members, close: i }),
            b'"' => {}
            _ => return None,
        }
        let key_start = i;
        let key_end = string_end(b, i)?;
        let key: String = serde_json::from_slice(&b[key_start..key_end]).ok()?;
        i = skip_blanks(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let value_start = skip_blanks(b, i + 1);
        let value_end = value_end(b, value_start)?;
        members.push(Member {
            key,
            key_start,
            value_start,
            value_end,
        });
        i = skip_blanks(b, value_end);
        match b.get(i)? {
            b',' => i += 1,
            b'}' => return Some(Object { members, close: i }),
            _ => return None,
        }
    }
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// Just past the string opening at `i`.
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Just past the value starting at `i`.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
            {
                j += 1;
            }
            Some(j)
        }
    }
}

/// Writes `text` to `path` through a temporary file in the same directory and a rename,
/// keeping the file's permissions.
fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    let failed = |e: std::io::Error| format!("could not write {}: {e}", path.display());
    let mut temp = tempfile::Builder::new()
        .prefix(".settings.")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(failed)?;
    temp.write_all(text.as_bytes()).map_err(failed)?;
    temp.as_file().sync_all().map_err(failed)?;
    let permissions = match std::fs::metadata(path) {
        Ok(meta) => meta.permissions(),
        Err(_) => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::Permissions::from_mode(0o644)
        }
    };
    std::fs::set_permissions(temp.path(), permissions).map_err(failed)?;
    temp.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn edited(text: &str, value: Value) -> String {
        let out = edit(text, &value).expect("edited");
        let parsed: Value = tandem_ai::jsonc::from_str(&out).expect("still parses");
        assert_eq!(parsed["packages"], value, "{out}");
        out
    }

    #[test]
    fn an_existing_value_is_replaced_and_everything_else_kept() {
        let text = "{\n  // keep me\n  \"theme\": \"dark\", /* and me */\n  \"packages\": [\"npm:a\"],\n  \"x\": 1,\n}\n";
        let out = edited(text, json!(["npm:a", "../pkg"]));
        assert_eq!(
            out,
            "{\n  // keep me\n  \"theme\": \"dark\", /* and me */\n  \"packages\": [\n    \"npm:a\",\n    \"../pkg\"\n  ],\n  \"x\": 1,\n}\n"
        );
    }

    #[test]
    fn the_key_is_added_before_the_closing_brace() {
        let out = edited("{\n  \"theme\": \"dark\" // why\n}\n", json!(["npm:a"]));
        assert_eq!(
            out,
            "{\n  \"theme\": \"dark\", // why\n  \"packages\": [\n    \"npm:a\"\n  ]\n}\n"
        );
        let out = edited("{\n\t\"a\": 1,\n\t// last\n}", json!([]));
        assert_eq!(out, "{\n\t\"a\": 1,\n\t// last\n\t\"packages\": []\n}");
        assert_eq!(edited("{}", json!([])), "{\n  \"packages\": []\n}");
        assert_eq!(
            edited("\u{feff}{\"a\": \"}\"}", json!([])),
            "\u{feff}{\"a\": \"}\",\n  \"packages\": []\n}"
        );
    }

    #[test]
    fn files_are_written_atomically_and_broken_ones_left_alone() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join(".pi/settings.json");
        write(&path, &[json!("npm:a")]).expect("created");
        assert_eq!(read(&path).expect("read"), [json!("npm:a")]);
        std::fs::write(&path, "{\"a\": nope}").expect("write");
        let err = write(&path, &[]).expect_err("broken");
        assert!(err.contains("is not valid JSON"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "{\"a\": nope}"
        );
        let leftovers = std::fs::read_dir(dir.path().join(".pi"))
            .expect("dir")
            .count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }
}
