//! The YAML header of skill and prompt-template files, split off the body the way pi does.
//!
//! A file has frontmatter when it starts with `---` and a later line starts with `---`; the
//! text between is YAML. Skill descriptions are often multi-line YAML (`description: |`), so
//! the header is parsed by a real YAML parser (yaml-rust2) rather than by splitting lines.
//! Values come back as JSON values, which every caller already knows how to inspect.

use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

/// A file split into its header fields and its body.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frontmatter {
    /// Header fields; empty when the file has no header (or the header is not a mapping).
    pub fields: Map<String, Value>,
    /// The text after the header, trimmed; the whole text (newlines normalized) without one.
    pub body: String,
}

impl Frontmatter {
    /// The field `key` when it is a string.
    pub fn string(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
}

/// Why a header could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid YAML frontmatter: {message} at line {line}, column {column}")]
pub struct FrontmatterError {
    /// What the parser found wrong.
    pub message: String,
    /// Line in the file (1-based; the opening `---` is line 1).
    pub line: usize,
    /// Column (1-based).
    pub column: usize,
}

/// Splits `content` into header and body and parses the header.
pub fn parse(content: &str) -> Result<Frontmatter, FrontmatterError> {
    let normalized = content.replace("\r\n", "\n").replace('\r', "\n");
    let Some((yaml, body)) = split(&normalized) else {
        return Ok(Frontmatter {
            fields: Map::new(),
            body: normalized,
        });
    };
    let body = body.trim().to_string();
    let docs = YamlLoader::load_from_str(yaml).map_err(|e| FrontmatterError {
        message: e.info().to_string(),
        // The YAML starts on the line after the opening `---`.
        line: e.marker().line() + 1,
        column: e.marker().col() + 1,
    })?;
    let fields = match docs.into_iter().next().map(to_json) {
        Some(Value::Object(fields)) => fields,
        _ => Map::new(),
    };
    Ok(Frontmatter { fields, body })
}

/// The body of `content` without its header; the whole text when the header is unreadable.
pub fn strip(content: &str) -> String {
    let normalized = content.replace("\r\n", "\n").replace('\r', "\n");
    match split(&normalized) {
        Some((_, body)) => body.trim().to_string(),
        None => normalized,
    }
}

/// `(yaml, rest)` when the text opens with `---` and a later line starts with `---`.
fn split(normalized: &str) -> Option<(&str, &str)> {
    if !normalized.starts_with("---") {
        return None;
    }
    let end = normalized.get(3..)?.find("\n---")? + 3;
    // Like pi, the header text starts after `---` and one more character (the newline).
    let yaml = normalized.get(4..end).unwrap_or("");
    let rest = normalized.get(end + 4..).unwrap_or("");
    Some((yaml, rest))
}

fn to_json(yaml: Yaml) -> Value {
    match yaml {
        Yaml::Real(text) => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .unwrap_or(Value::String(text)),
        Yaml::Integer(n) => Value::Number(n.into()),
        Yaml::String(s) => Value::String(s),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(items) => Value::Array(items.into_iter().map(to_json).collect()),
        Yaml::Hash(hash) => Value::Object(
            hash.into_iter()
                .map(|(k, v)| (key_text(k), to_json(v)))
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

fn key_text(key: Yaml) -> String {
    match key {
        Yaml::String(s) | Yaml::Real(s) => s,
        Yaml::Integer(n) => n.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields_and_trimmed_body() {
        let fm = parse(
            "---\r\nname: x\r\ndescription: Does x.\r\nversion: 1.0\r\n---\r\n\r\n# X\r\n\r\n",
        )
        .expect("valid");
        assert_eq!(fm.string("name"), Some("x"));
        assert_eq!(fm.string("description"), Some("Does x."));
        assert_eq!(fm.fields.get("version"), Some(&serde_json::json!(1.0)));
        assert_eq!(fm.body, "# X");
    }

    #[test]
    fn multi_line_values_keep_their_newlines() {
        let fm = parse("---\ndescription: |\n  One.\n  Two.\n---\nBody").expect("valid");
        assert_eq!(fm.string("description"), Some("One.\nTwo.\n"));
        let fm = parse("---\ndescription: >\n  One\n  two.\n---\nBody").expect("valid");
        assert_eq!(fm.string("description"), Some("One two.\n"));
    }

    #[test]
    fn no_header_or_unclosed_header_is_all_body() {
        let fm = parse("# Title\n\ntext\n").expect("valid");
        assert!(fm.fields.is_empty());
        assert_eq!(fm.body, "# Title\n\ntext\n");
        let fm = parse("---\nname: x\nno end").expect("valid");
        assert!(fm.fields.is_empty());
        assert_eq!(fm.body, "---\nname: x\nno end");
        let fm = parse("---\n---\nbody").expect("valid");
        assert!(fm.fields.is_empty());
        assert_eq!(fm.body, "body");
    }

    #[test]
    fn invalid_yaml_says_where() {
        let err = parse("---\nname: a\ndescription: [unclosed\n---\nBody").expect_err("invalid");
        let text = err.to_string();
        assert!(text.starts_with("invalid YAML frontmatter: "), "{text}");
        assert!(text.contains(" at line "), "{text}");
    }

    #[test]
    fn strip_keeps_only_the_body() {
        assert_eq!(strip("---\na: b\n---\n\nHello\n"), "Hello");
        assert_eq!(strip("Hello\n"), "Hello\n");
    }
}
