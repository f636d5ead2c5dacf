//! What each known settings.json key must hold, and the check that drops values of the wrong
//! kind (reporting each) so that one typo costs one setting, not the whole file.
//!
//! Checking a `serde_json::Value` against a small table, rather than relying on a derived
//! `Deserialize` alone, lets every problem be reported at once with its key path
//! (`retry.maxRetries`) and a plain description of what was found. Unknown keys are left
//! alone: they may be pi's UI settings or Tandem keys this version does not know yet.

use serde_json::{Map, Value};

/// The kind of value a key holds.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Bool,
    Text,
    /// A whole number of 0 or more (token counts, milliseconds, attempts).
    Count,
    /// An array of strings.
    TextList,
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// An object with these known keys.
    Object(&'static [(&'static str, Kind)]),
    /// An object whose every value is of this kind, keyed by anything (`provider/modelId`).
    Map(&'static Kind),
    /// A whole number of milliseconds, or `"disabled"` (pi 1.6's timeouts; `0` disables too).
    MillisOrDisabled,
}

const QUEUE_MODES: &[&str] = &["all", "one-at-a-time"];
const THINKING_LEVELS: &[&str] = &["off", "minimal", "low", "medium", "high", "xhigh", "max"];
const COMPACTION_TOKENS: &[(&str, Kind)] = &[
    ("reserveTokens", Kind::Count),
    ("keepRecentTokens", Kind::Count),
];

/// The known keys of pi's (`mcpServers`, Tandem's, is checked entry by entry in `mcp.rs`; other
/// keys pass unchecked).
const SCHEMA: &[(&str, Kind)] = &[
    ("defaultProvider", Kind::Text),
    ("defaultModel", Kind::Text),
    ("defaultThinkingLevel", Kind::OneOf(THINKING_LEVELS)),
    (
        "modelThinkingLevels",
        Kind::Map(&Kind::OneOf(THINKING_LEVELS)),
    ),
    ("defaultTools", Kind::TextList),
    ("extensions", Kind::TextList),
    ("npmCommand", Kind::TextList),
    ("sessionDir", Kind::Text),
    ("httpProxy", Kind::Text),
    ("httpIdleTimeoutMs", Kind::MillisOrDisabled),
    ("extensionEventTimeoutMs", Kind::MillisOrDisabled),
    (
        "transport",
        Kind::OneOf(&["auto", "sse", "websocket", "websocket-cached"]),
    ),
    ("steeringMode", Kind::OneOf(QUEUE_MODES)),
    ("followUpMode", Kind::OneOf(QUEUE_MODES)),
    (
        "compaction",
        Kind::Object(&[
            ("enabled", Kind::Bool),
            ("reserveTokens", Kind::Count),
            ("keepRecentTokens", Kind::Count),
            (
                "modelOverrides",
                Kind::Map(&Kind::Object(COMPACTION_TOKENS)),
            ),
        ]),
    ),
    (
        "branchSummary",
        Kind::Object(&[("reserveTokens", Kind::Count), ("skipPrompt", Kind::Bool)]),
    ),
    (
        "retry",
        Kind::Object(&[
            ("enabled", Kind::Bool),
            ("maxRetries", Kind::Count),
            ("baseDelayMs", Kind::Count),
            ("maxDelayMs", Kind::Count),
            ("maxAgentDelayMs", Kind::Count),
            (
                "provider",
                Kind::Object(&[
                    ("timeoutMs", Kind::Count),
                    ("maxRetries", Kind::Count),
                    ("maxRetryDelayMs", Kind::Count),
                ]),
            ),
        ]),
    ),
    ("shellPath", Kind::Text),
    ("shellCommandPrefix", Kind::Text),
    ("enabledModels", Kind::TextList),
    (
        "thinkingBudgets",
        Kind::Object(&[
            ("minimal", Kind::Count),
            ("low", Kind::Count),
            ("medium", Kind::Count),
            ("high", Kind::Count),
        ]),
    ),
    (
        "images",
        Kind::Object(&[("autoResize", Kind::Bool), ("blockImages", Kind::Bool)]),
    ),
    ("skills", Kind::TextList),
    ("prompts", Kind::TextList),
    ("enableSkillCommands", Kind::Bool),
    ("hideThinkingBlock", Kind::Bool),
    ("externalEditor", Kind::Text),
    ("quietStartup", Kind::Bool),
    ("theme", Kind::Text),
    (
        "diagnostics",
        Kind::Object(&[
            ("afterEdit", Kind::Bool),
            ("maxItems", Kind::Count),
            ("settleMs", Kind::Count),
            ("quietMs", Kind::Count),
            ("sources", Kind::TextList),
            ("ignoreSources", Kind::TextList),
            ("minSeverity", Kind::OneOf(&["error", "warning"])),
        ]),
    ),
    (
        "defaultProjectTrust",
        Kind::OneOf(&["ask", "always", "never"]),
    ),
];

/// A value of the wrong kind, found and removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Mismatch {
    /// Dotted key path, with `[i]` for array items: `retry.maxRetries`, `skills[1]`.
    pub key: String,
    /// What the key must hold.
    pub expected: String,
    /// What it held.
    pub found: String,
}

/// Removes from `root` every known key whose value has the wrong kind, and says which.
/// `null` is accepted everywhere: it means "not set".
pub(super) fn check(root: &mut Map<String, Value>) -> Vec<Mismatch> {
    let mut found = Vec::new();
    check_object(root, SCHEMA, "", &mut found);
    found
}

fn check_object(
    object: &mut Map<String, Value>,
    schema: &[(&str, Kind)],
    prefix: &str,
    found: &mut Vec<Mismatch>,
) {
    for (key, kind) in schema {
        let path = format!("{prefix}{key}");
        let Some(value) = object.get_mut(*key) else {
            continue;
        };
        if value.is_null() {
            continue;
        }
        let keep = match kind {
            Kind::Object(fields) => match value.as_object_mut() {
                Some(inner) => {
                    check_object(inner, fields, &format!("{path}."), found);
                    true
                }
                None => {
                    found.push(mismatch(path, "an object", value));
                    false
                }
            },
            Kind::Map(entry) => match value.as_object_mut() {
                Some(inner) => {
                    check_entries(inner, **entry, &path, found);
                    true
                }
                None => {
                    found.push(mismatch(path, "an object", value));
                    false
                }
            },
            kind => match check_leaf(*kind, value) {
                Ok(()) => true,
                Err((at, expected)) => {
                    let (path, shown) = match at {
                        Some(index) => (format!("{path}[{index}]"), &value[index]),
                        None => (path, &*value),
                    };
                    found.push(mismatch(path, &expected, shown));
                    false
                }
            },
        };
        if !keep {
            object.remove(*key);
        }
    }
}

/// Checks every entry of a `Kind::Map` object against `kind`, removing the ones that do not fit.
fn check_entries(
    object: &mut Map<String, Value>,
    kind: Kind,
    path: &str,
    found: &mut Vec<Mismatch>,
) {
    let keys: Vec<String> = object.keys().cloned().collect();
    for key in keys {
        let entry_path = format!("{path}.{key}");
        let Some(value) = object.get_mut(&key) else {
            continue;
        };
        let keep = match (kind, value.as_object_mut()) {
            (Kind::Object(fields), Some(inner)) => {
                check_object(inner, fields, &format!("{entry_path}."), found);
                true
            }
            (Kind::Object(_), None) => {
                found.push(mismatch(entry_path, "an object", value));
                false
            }
            (kind, _) => match check_leaf(kind, value) {
                Ok(()) => true,
                Err((_, expected)) => {
                    found.push(mismatch(entry_path, &expected, value));
                    false
                }
            },
        };
        if !keep {
            object.remove(&key);
        }
    }
}

/// `Err((array index, expected))` when `value` does not fit `kind`.
fn check_leaf(kind: Kind, value: &Value) -> Result<(), (Option<usize>, String)> {
    let fits = match kind {
        Kind::Bool => value.is_boolean(),
        Kind::Text => value.is_string(),
        Kind::Count => value.as_u64().is_some(),
        Kind::OneOf(choices) => value.as_str().is_some_and(|s| choices.contains(&s)),
        Kind::TextList => {
            let Some(items) = value.as_array() else {
                return Err((None, "an array of strings".to_string()));
            };
            return match items.iter().position(|item| !item.is_string()) {
                Some(index) => Err((Some(index), "a string".to_string())),
                None => Ok(()),
            };
        }
        Kind::Object(_) | Kind::Map(_) => value.is_object(),
        Kind::MillisOrDisabled => value.as_u64().is_some() || value.as_str() == Some("disabled"),
    };
    if fits {
        return Ok(());
    }
    let expected = match kind {
        Kind::Bool => "true or false".to_string(),
        Kind::Text => "a string".to_string(),
        Kind::Count if value.is_number() => "a whole number of 0 or more".to_string(),
        Kind::Count => "a number".to_string(),
        Kind::OneOf(choices) => {
            let quoted: Vec<String> = choices.iter().map(|c| format!("\"{c}\"")).collect();
            format!("one of {}", quoted.join(", "))
        }
        Kind::TextList => "an array of strings".to_string(),
        Kind::Object(_) | Kind::Map(_) => "an object".to_string(),
        Kind::MillisOrDisabled => {
            "a whole number of milliseconds (0 disables) or \"disabled\"".to_string()
        }
    };
    Err((None, expected))
}

fn mismatch(key: String, expected: &str, value: &Value) -> Mismatch {
    Mismatch {
        key,
        expected: expected.to_string(),
        found: describe(value),
    }
}

/// What a value is, for "expected X, found Y": its kind, and its value when short and safe to
/// show (numbers, booleans, and strings up to 40 characters — settings hold no secrets, and the
/// value is what the user needs to find the mistake).
pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(n) => format!("a number ({n})"),
        Value::String(s) if s.chars().count() <= 40 => format!("a string (\"{s}\")"),
        Value::String(_) => "a string".to_string(),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

/// `fields[name]`, when present, is an array of strings (a server's `args`, say).
pub(super) fn check_strings(fields: &Map<String, Value>, name: &str) -> Result<(), String> {
    let Some(value) = fields.get(name) else {
        return Ok(());
    };
    let Some(items) = value.as_array() else {
        return Err(format!(
            "{name}: expected an array of strings, found {}",
            describe(value)
        ));
    };
    match items.iter().enumerate().find(|(_, i)| !i.is_string()) {
        Some((index, item)) => Err(format!(
            "{name}[{index}]: expected a string, found {}",
            describe(item)
        )),
        None => Ok(()),
    }
}

/// `fields.env`, when present, is an object of strings. A wrong value is named by its kind
/// only: environment variables often hold secrets.
pub(super) fn check_env(fields: &Map<String, Value>) -> Result<(), String> {
    let Some(env) = fields.get("env") else {
        return Ok(());
    };
    let Some(vars) = env.as_object() else {
        return Err(format!(
            "env: expected an object of strings, found {}",
            describe(env)
        ));
    };
    match vars.iter().find(|(_, v)| !v.is_string()) {
        Some((key, value)) => {
            let kind = match value {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::Array(_) => "an array",
                Value::Object(_) => "an object",
            };
            Err(format!("env.{key}: expected a string, found {kind}"))
        }
        None => Ok(()),
    }
}

/// After the project file was deep-merged over the global one: puts each of the project's
/// entries under `key` (`mcpServers`, `languageServers`) back whole, so that it replaces the
/// global entry of its name instead of merging into it.
pub(super) fn replace_merged_entries(
    merged: &mut Map<String, Value>,
    project: &Map<String, Value>,
    key: &str,
) {
    let (Some(Value::Object(project_entries)), Some(Value::Object(merged_entries))) =
        (project.get(key), merged.get_mut(key))
    else {
        return;
    };
    for (name, entry) in project_entries {
        merged_entries.insert(name.clone(), entry.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(value: Value) -> (Value, Vec<String>) {
        let Value::Object(mut map) = value else {
            panic!("object expected")
        };
        let found = check(&mut map)
            .into_iter()
            .map(|m| format!("{}: expected {}, found {}", m.key, m.expected, m.found))
            .collect();
        (Value::Object(map), found)
    }

    #[test]
    fn wrong_kinds_are_removed_and_named_by_path() {
        let (kept, found) = run(json!({
            "defaultModel": 5,
            "steeringMode": "some",
            "retry": {"enabled": false, "maxRetries": "3", "baseDelayMs": -1},
            "images": true,
            "enabledModels": ["a", 2],
            "skills": "dir",
            "unknownKey": {"anything": 1},
            "compaction": null
        }));
        assert_eq!(
            found,
            vec![
                "defaultModel: expected a string, found a number (5)",
                "steeringMode: expected one of \"all\", \"one-at-a-time\", found a string (\"some\")",
                "retry.maxRetries: expected a number, found a string (\"3\")",
                "retry.baseDelayMs: expected a whole number of 0 or more, found a number (-1)",
                "enabledModels[1]: expected a string, found a number (2)",
                "images: expected an object, found a boolean (true)",
                "skills: expected an array of strings, found a string (\"dir\")",
            ]
        );
        assert_eq!(
            kept,
            json!({
                "retry": {"enabled": false},
                "unknownKey": {"anything": 1},
                "compaction": null
            })
        );
    }
}
