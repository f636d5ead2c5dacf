//! Reading session files and provider requests so pi's and Tandem's can be compared.
//!
//! Two runs of the same task differ only in generated values: the session id, entry ids,
//! timestamps and the working directory. [`normalize`] replaces those with stable stand-ins
//! (entry ids become `e0`, `e1`, … in file order and parent links follow them), after checking
//! that each has pi's shape, so everything else can be compared with `==`.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Value};
use tandem_tests::mock_llm::RecordedRequest;

/// The file's lines parsed as JSON; panics naming the line when one is not JSON.
pub fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse_lines(&text, path)
}

/// Parses JSONL text (every line must end with a newline).
pub fn parse_lines(text: &str, path: &Path) -> Vec<Value> {
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "{} does not end with a newline",
        path.display()
    );
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: not JSON ({e}): {line}", path.display(), i + 1))
        })
        .collect()
}

/// The `type` of each line.
pub fn types(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l["type"].as_str().unwrap_or("<no type>").to_string())
        .collect()
}

/// The role the system prompt is sent with: `system`, or `developer` for reasoning models.
pub fn prompt_role(request: &RecordedRequest) -> String {
    let body = request.json().expect("request body is JSON");
    let role = body["messages"][0]["role"].as_str().unwrap_or_default();
    assert!(
        role == "system" || role == "developer",
        "the first message is not the system prompt: {body}"
    );
    role.to_string()
}

/// The conversation a chat-completions request carries: its messages after the system prompt
/// (the prompts differ by design: each program describes itself).
pub fn conversation(request: &RecordedRequest) -> Vec<Value> {
    prompt_role(request);
    let body = request.json().expect("request body is JSON");
    let messages = body["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("request without messages: {body}"));
    messages[1..].to_vec()
}

/// The reference task as chat-completions messages, as pi sends them: the user's task, the
/// read call and its result, the edit call and its result, the final answer.
pub fn task_conversation() -> Vec<Value> {
    vec![
        json!({"role": "user", "content": [{"type": "text", "text": super::TASK}]}),
        json!({"role": "assistant", "content": "Let me read the file.", "tool_calls": [{
            "id": "call_read_1", "type": "function",
            "function": {"name": "read", "arguments": "{\"path\":\"hello.txt\"}"}}]}),
        json!({"role": "tool", "content": super::HELLO, "tool_call_id": "call_read_1"}),
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_edit_2", "type": "function",
            "function": {"name": "edit", "arguments":
                "{\"path\":\"hello.txt\",\"edits\":[{\"oldText\":\"hello world\",\"newText\":\"hello there\"}]}"}}]}),
        json!({"role": "tool", "content": "Successfully replaced 1 block(s) in hello.txt.",
            "tool_call_id": "call_edit_2"}),
        json!({"role": "assistant", "content": "Done: I changed world to there."}),
    ]
}

/// The thinking task ([`super::THINKING_TASK`]) as chat-completions messages: each thinking
/// block goes back as `reasoning_content`, the field it arrived in.
pub fn thinking_conversation() -> Vec<Value> {
    vec![
        user(super::THINKING_TASK),
        json!({"role": "assistant", "content": null, "reasoning_content": "I should read it.",
            "tool_calls": [{"id": "call_think_1", "type": "function",
                "function": {"name": "read", "arguments": "{\"path\":\"hello.txt\"}"}}]}),
        json!({"role": "tool", "content": super::HELLO, "tool_call_id": "call_think_1"}),
        json!({"role": "assistant", "content": "It says hello world.",
            "reasoning_content": "Now answer."}),
    ]
}

/// A user message as chat completions carries it.
pub fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}]})
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `2026-11-30T07:13:25.974Z`.
fn is_iso_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22];
    b.len() == 24
        && digits.iter().all(|&i| b[i].is_ascii_digit())
        && [
            (4, b'-'),
            (7, b'-'),
            (10, b'T'),
            (13, b':'),
            (16, b':'),
            (19, b'.'),
            (23, b'Z'),
        ]
        .iter()
        .all(|&(i, c)| b[i] == c)
}

/// `01a22b4d-25d5-77de-8d60-df9ef5711e8b`.
fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(p, len)| is_hex(p, len))
}

/// Replaces generated values with stand-ins after checking their shapes.
pub fn normalize(lines: &[Value]) -> Vec<Value> {
    let mut ids: HashMap<String, String> = HashMap::new();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let mut line = line.clone();
        let ts = line["timestamp"].as_str().unwrap_or_default();
        assert!(is_iso_timestamp(ts), "line {}: timestamp {ts:?}", i + 1);
        line["timestamp"] = json!("<timestamp>");
        if line["type"] == "session" {
            let id = line["id"].as_str().unwrap_or_default();
            assert!(is_uuid(id), "header id {id:?} is not a UUID");
            line["id"] = json!("<session id>");
            line["cwd"] = json!("<cwd>");
        } else {
            let id = line["id"].as_str().unwrap_or_default().to_string();
            assert!(is_hex(&id, 8), "line {}: entry id {id:?}", i + 1);
            let stand_in = format!("e{}", ids.len());
            ids.insert(id, stand_in.clone());
            line["id"] = json!(stand_in);
            line["parentId"] = match line["parentId"].as_str() {
                Some(parent) => json!(ids
                    .get(parent)
                    .cloned()
                    .unwrap_or_else(|| format!("<unknown parent {parent}>"))),
                None => line["parentId"].clone(),
            };
        }
        if let Some(message) = line.get_mut("message") {
            assert!(
                message["timestamp"].is_u64(),
                "line {}: message.timestamp",
                i + 1
            );
            message["timestamp"] = json!(0);
        }
        out.push(line);
    }
    out
}

/// The session file name pi uses: `<header timestamp with : and . as ->_<session id>.jsonl`.
pub fn expected_file_name(header: &Value) -> String {
    let ts = header["timestamp"].as_str().unwrap_or_default();
    let id = header["id"].as_str().unwrap_or_default();
    format!("{}_{id}.jsonl", ts.replace([':', '.'], "-"))
}

/// The session folder pi uses for `cwd`: `--<cwd without its leading /, / as ->--`.
pub fn expected_dir_name(cwd: &Path) -> String {
    let cwd = cwd.to_string_lossy();
    format!("--{}--", cwd.trim_start_matches('/').replace('/', "-"))
}

/// The system prompt and tool names a session's `system` messages declare at its last entry,
/// replayed the way pi 1.6 documents it (written here independently of either program): along
/// the path from the last line to the root, the latest compaction's `systemMessage` (when there
/// is one) and then the `system` messages after it, or every `system` message when there is no
/// compaction. `content` texts add to the prompt, `sections` are set by name (`null` removes
/// one; a name keeps its first place unless it was removed), tools are added and removed by
/// name. The prompt is the non-empty contents, then the sections, joined by blank lines.
pub fn declared_system(lines: &[Value]) -> (String, Vec<String>) {
    let by_id: HashMap<&str, &Value> = lines
        .iter()
        .filter_map(|l| l["id"].as_str().map(|id| (id, l)))
        .collect();
    let mut path = Vec::new();
    let mut current = lines.last().filter(|l| l["type"] != "session");
    while let Some(entry) = current {
        path.push(entry);
        current = entry["parentId"]
            .as_str()
            .and_then(|p| by_id.get(p).copied());
    }
    path.reverse();
    let start = path.iter().rposition(|e| e["type"] == "compaction");
    let mut systems: Vec<&Value> = Vec::new();
    if let Some(at) = start {
        if path[at]["systemMessage"].is_object() {
            systems.push(&path[at]["systemMessage"]);
        }
    }
    systems.extend(
        path[start.map_or(0, |at| at + 1)..]
            .iter()
            .filter(|e| e["type"] == "message" && e["message"]["role"] == "system")
            .map(|e| &e["message"]),
    );
    let mut content: Vec<String> = Vec::new();
    let mut sections: Vec<(String, String)> = Vec::new();
    let mut tools: Vec<String> = Vec::new();
    for message in systems {
        let text = match &message["content"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        if !text.is_empty() {
            content.push(text);
        }
        for (name, value) in message["sections"].as_object().into_iter().flatten() {
            let at = sections.iter().position(|(n, _)| n == name);
            match (value.as_str(), at) {
                (None, Some(at)) => {
                    sections.remove(at);
                }
                (Some(text), Some(at)) => sections[at].1 = text.to_string(),
                (Some(text), None) => sections.push((name.clone(), text.to_string())),
                (None, None) => {}
            }
        }
        for removed in message["toolsRemoved"].as_array().into_iter().flatten() {
            tools.retain(|t| Some(t.as_str()) != removed["name"].as_str());
        }
        for added in message["toolsAdded"].as_array().into_iter().flatten() {
            let name = added["name"].as_str().unwrap_or_default().to_string();
            if !tools.contains(&name) {
                tools.push(name);
            }
        }
    }
    let content = content.join("\n\n");
    let prompt = std::iter::once(content.as_str())
        .chain(sections.iter().map(|(_, t)| t.as_str()))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    (prompt, tools)
}

/// The system prompt and tool names a chat-completions request carries.
pub fn sent_system(request: &RecordedRequest) -> (String, Vec<String>) {
    prompt_role(request);
    let body = request.json().expect("request body is JSON");
    let prompt = body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    (prompt, tools)
}
