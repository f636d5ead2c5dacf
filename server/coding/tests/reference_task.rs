//! pi's reference task, end to end: the real scripted provider drives a real `Agent` with the
//! real tools over a workspace, and the tool results must equal what pi 0.73.1 recorded in
//! `shared/reference/pi-0.73.1-session.jsonl` (read content, edit text and diff details).

use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{Agent, AgentMessage, AgentOptions};
use tandem_ai::{providers::scripted::demo_model, Message};
use tandem_coding::tools::{tools, DEFAULT_TOOLS};
use tandem_coding::{ChangeOutcome, ScriptedWorkspace, ToolEnv, Workspace as _};

const SCRIPT: &str = r#"{"chunkSize": 5, "turns": [
  {"text": "Let me read the file.", "toolCalls": [{"id": "call_0_57c7c3", "name": "read", "arguments": {"path": "hello.txt"}}]},
  {"toolCalls": [{"id": "call_0_81fbed", "name": "edit", "arguments": {"path": "hello.txt", "edits": [{"oldText": "hello world", "newText": "hello there"}]}}]},
  {"text": "Done: I changed world to there."}
]}"#;

fn tool_results(agent: &Agent) -> Vec<Value> {
    agent
        .messages()
        .into_iter()
        .filter_map(|m| match m {
            AgentMessage::Llm(m @ Message::ToolResult(_)) => {
                let mut v = serde_json::to_value(&m).expect("serializes");
                v.as_object_mut().map(|o| o.remove("timestamp"));
                Some(v)
            }
            _ => None,
        })
        .collect()
}

async fn run(workspace: Arc<ScriptedWorkspace>, dir: &std::path::Path) -> Agent {
    let script = dir.join("script.json");
    std::fs::write(&script, SCRIPT).expect("script");
    let mut model = demo_model();
    model.base_url = script.to_string_lossy().into_owned();
    let root = workspace.roots()[0].clone();
    let env = Arc::new(ToolEnv::new(workspace, root));
    let mut options = AgentOptions::new(model);
    options.tools = tools(&env, &DEFAULT_TOOLS);
    let agent = Agent::new(options);
    agent
        .prompt_text("change world to there in hello.txt", Vec::new())
        .await
        .expect("idle agent");
    agent
}

#[tokio::test]
async fn the_reference_task_gives_pis_tool_results() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("project");
    std::fs::create_dir(&root).expect("project dir");
    std::fs::write(root.join("hello.txt"), "hello world\nsecond line\n").expect("file");
    let workspace = Arc::new(ScriptedWorkspace::new(&root));
    let agent = run(workspace.clone(), dir.path()).await;

    // The same two results pi recorded, field for field (timestamps aside).
    let reference: Vec<Value> = include_str!("../../../fixtures/reference/pi-0.73.1-session.jsonl")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "toolResult")
        .map(|e| {
            let mut m = e["message"].clone();
            m.as_object_mut().map(|o| o.remove("timestamp"));
            m
        })
        .collect();
    assert_eq!(reference.len(), 2);
    // pi 1.6 also records how long each tool ran, which pi 0.73.1 did not.
    let ours: Vec<Value> = tool_results(&agent)
        .into_iter()
        .map(|mut m| {
            let ran = m.as_object_mut().and_then(|o| o.shift_remove("durationMs"));
            assert!(ran.is_some_and(|ms| ms.is_u64()), "{m}");
            m
        })
        .collect();
    assert_eq!(ours, reference);

    assert_eq!(
        std::fs::read_to_string(root.join("hello.txt")).expect("file"),
        "hello there\nsecond line\n"
    );
    let last = agent.messages().last().cloned().expect("messages");
    assert_eq!(
        last.as_assistant().map(|a| a.text()),
        Some("Done: I changed world to there.".into())
    );
    // The edit went through the workspace as a proposal with the exact replaced range.
    let proposals = workspace.proposals();
    assert_eq!(proposals.len(), 1);
    assert_eq!(proposals[0].edits.len(), 1);
    assert_eq!(proposals[0].edits[0].range, 0..11);
}

#[tokio::test]
async fn a_rejected_edit_leaves_the_file_and_tells_the_model() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("project");
    std::fs::create_dir(&root).expect("project dir");
    std::fs::write(root.join("hello.txt"), "hello world\nsecond line\n").expect("file");
    let workspace = Arc::new(ScriptedWorkspace::new(&root));
    workspace.answer_changes([ChangeOutcome::Rejected {
        reason: Some("not now".into()),
    }]);
    let agent = run(workspace, dir.path()).await;

    assert_eq!(
        std::fs::read_to_string(root.join("hello.txt")).expect("file"),
        "hello world\nsecond line\n"
    );
    let results = tool_results(&agent);
    assert_eq!(results[1]["isError"], json!(true));
    let text = results[1]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("The user rejected the edit to"), "{text}");
    assert!(text.contains("not now"), "{text}");
}
