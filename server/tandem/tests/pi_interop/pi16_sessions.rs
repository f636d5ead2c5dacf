//! Sessions beside the real pi 1.6: the lines both write for the same task; sessions pi 1.6
//! compacted or forked (through its RPC mode) and sessions Tandem compacted or retried in, each
//! resumed by pi 1.6 and by Tandem, which must send the model the same conversation, each with
//! the prompt and tools its copy of the file declares, and leave every existing byte alone.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tandem_tests::mock_llm::{MockLlm, MockResponse};

use crate::reference_task_by_both;
use crate::support_pi::pi_rpc::PiRpc;
use crate::support_pi::transcript::{self, conversation, normalize, types};
use crate::support_pi::{pi16_bin, run_reference_task, sse, Agent, Sandbox, MODEL};

/// The second prompt of a two-prompt session: long enough that a compaction keeping 50 tokens
/// cuts right before it (a whole turn kept, so pi asks the model for one summary).
fn second_prompt() -> String {
    format!("now explain {}", "why the change was right ".repeat(16))
}

const SECOND_ANSWER: &str = "Because the file said world.";
const SUMMARY: &str = "The user had hello.txt changed from world to there.";

/// Blanks a `system` message's sections and tool declarations (each program's own prompt and
/// tools), keeping the keys and their order.
fn blank_system(lines: &mut [Value]) {
    for line in lines {
        if let Some(message) = line.get_mut("message").and_then(Value::as_object_mut) {
            if message.get("role").and_then(Value::as_str) == Some("system") {
                for key in ["sections", "toolsAdded", "toolsRemoved"] {
                    if let Some(field) = message.get_mut(key) {
                        *field = json!("…");
                    }
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_16_and_tandem_write_the_same_lines_for_the_same_task() {
    pi16_bin();
    let mock = MockLlm::start().await.expect("mock LLM");
    let ((_pi_box, pi_file), (_tandem_box, tandem_file)) =
        reference_task_by_both(&mock, Agent::Pi16).await;

    let mut tandem_lines = transcript::lines(&tandem_file);
    let checkpoint = tandem_lines.pop().expect("Tandem's lines");
    assert_eq!(
        checkpoint["customType"], "tandem.checkpoint",
        "{checkpoint}"
    );
    let mut theirs = normalize(&transcript::lines(&pi_file));
    let mut ours = normalize(&tandem_lines);
    for (label, lines) in [("Tandem", &ours), ("pi 1.6", &theirs)] {
        let system = &lines[3]["message"];
        assert_eq!(system["role"], "system", "{label}: {system}");
        assert_eq!(system["content"], "", "{label}");
        assert!(system["sections"]["preamble"].is_string(), "{label}");
        assert!(system["sections"]["cwd"].is_string(), "{label}");
        let names: Vec<&str> = system["toolsAdded"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(
            ["read", "bash", "edit", "write"]
                .iter()
                .all(|t| names.contains(t)),
            "{label} declares {names:?}"
        );
    }
    blank_system(&mut ours);
    blank_system(&mut theirs);
    // How long each call and tool took differs between any two runs.
    for line in ours.iter_mut().chain(theirs.iter_mut()) {
        if let Some(message) = line["message"].as_object_mut() {
            if message.contains_key("durationMs") {
                message.insert("durationMs".into(), serde_json::json!("…"));
            }
        }
    }
    // Gap (the edit tool, not sessions): pi 1.6's edit result details also carry the change
    // as a unified `patch`.
    for line in &mut theirs {
        if line["message"]["toolName"] == "edit" {
            if let Some(details) = line["message"]["details"].as_object_mut() {
                details.shift_remove("patch");
            }
        }
    }
    assert_eq!(types(&ours), types(&theirs), "entry types (left: Tandem)");
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(
            a.to_string(),
            b.to_string(),
            "line {}: Tandem (left) differs from pi 1.6 (right)",
            i + 1
        );
    }
}

/// Copies `file` for each resumer, resumes each copy with one follow-up, and checks: the same
/// conversation from both (returned), each one's prompt and tools as its copy declares them,
/// and the copy's earlier bytes untouched.
async fn resume_with_both(mock: &MockLlm, sandbox: &Sandbox, file: &Path) -> Vec<Value> {
    let copies = sandbox.home.join("copies");
    std::fs::create_dir_all(&copies).expect("copies dir");
    let mut sent = Vec::new();
    for agent in [Agent::Pi16, Agent::Tandem] {
        let copy: PathBuf = copies.join(format!("{agent:?}.jsonl"));
        std::fs::copy(file, &copy).expect("copy the session");
        let before = std::fs::read(&copy).expect("read copy");
        mock.enqueue(sse::text("chatcmpl-resume", "Resumed."));
        let path = copy.to_string_lossy().into_owned();
        let stdout = sandbox
            .run_ok(agent, &["--session", &path, "-p", "one more thing"])
            .await;
        assert_eq!(stdout.trim_end(), "Resumed.", "{agent:?}");
        let requests = mock.requests();
        let request = requests.last().expect("the follow-up request");
        let after = std::fs::read(&copy).expect("read copy");
        assert!(
            after.starts_with(&before),
            "{agent:?} changed the existing bytes of pi 1.6's file"
        );
        assert_eq!(
            transcript::sent_system(request),
            transcript::declared_system(&transcript::lines(&copy)),
            "{agent:?} sent a prompt or tools other than its copy declares"
        );
        sent.push(conversation(request));
    }
    let (ours, theirs) = (summary_bodies(&sent[1]), summary_bodies(&sent[0]));
    assert_eq!(
        ours, theirs,
        "Tandem (left) and pi 1.6 (right) resumed with different conversations"
    );
    sent.swap_remove(0)
}

/// The reference task, then [`second_prompt`], written by pi 1.6 in a sandbox whose settings
/// keep 50 tokens when compacting.
async fn two_prompt_session(mock: &MockLlm) -> (Sandbox, PathBuf) {
    let (sandbox, file) = run_reference_task(mock, Agent::Pi16).await;
    std::fs::write(
        sandbox.agent_dir.join("settings.json"),
        json!({"compaction": {"keepRecentTokens": 50}}).to_string(),
    )
    .expect("settings.json");
    mock.enqueue(sse::text("chatcmpl-second", SECOND_ANSWER));
    let path = file.to_string_lossy().into_owned();
    let stdout = sandbox
        .run_ok(Agent::Pi16, &["--session", &path, "-p", &second_prompt()])
        .await;
    assert_eq!(stdout.trim_end(), SECOND_ANSWER);
    (sandbox, file)
}

/// `conversation` with the words around each summary's `<summary>…</summary>` replaced by
/// `<wrapper>`: each program introduces a summary to the model in its own words (like its
/// system prompt); the summary itself must be the same.
fn summary_bodies(conversation: &[Value]) -> Vec<Value> {
    let mut out = conversation.to_vec();
    for message in &mut out {
        let text = user_text(message).to_string();
        if let (Some(start), Some(end)) = (text.find("<summary>"), text.rfind("</summary>")) {
            let body = &text[start..end + "</summary>".len()];
            message["content"][0]["text"] = json!(format!("<wrapper>{body}<wrapper>"));
        }
    }
    out
}

/// The session's compaction entry, after checking that what it keeps starts at the second
/// prompt, or at entries the model does not see just before it (they go with the message after
/// them, as in pi).
fn compaction_keeping_the_second_prompt(lines: &[Value]) -> &Value {
    let compaction = lines
        .iter()
        .find(|l| l["type"] == "compaction")
        .expect("a compaction entry");
    let kept_at = lines
        .iter()
        .position(|l| l["id"] == compaction["firstKeptEntryId"])
        .expect("the first kept entry");
    let first_kept_message = lines[kept_at..]
        .iter()
        .find(|l| l["type"] == "message")
        .expect("a kept message");
    assert_eq!(
        user_text(&first_kept_message["message"]),
        second_prompt(),
        "{compaction}"
    );
    compaction
}

fn user_text(message: &Value) -> &str {
    message["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_resumes_a_session_pi_16_compacted_as_pi_16_does() {
    pi16_bin();
    let mock = MockLlm::start().await.expect("mock LLM");
    let (sandbox, file) = two_prompt_session(&mock).await;

    mock.enqueue(sse::text("chatcmpl-summary", SUMMARY));
    let mut pi = PiRpc::start(&sandbox, &file);
    let reply = pi.command(json!({"type": "compact"})).await;
    pi.finish().await;
    assert_eq!(mock.queued(), 0, "one summary request: {reply}");

    let lines = transcript::lines(&file);
    let compaction = compaction_keeping_the_second_prompt(&lines);
    let checkpoint = &compaction["systemMessage"];
    assert_eq!(checkpoint["role"], "system", "{compaction}");
    assert!(
        checkpoint["sections"]["preamble"].is_string(),
        "{checkpoint}"
    );

    let sent = resume_with_both(&mock, &sandbox, &file).await;
    // The summary (as a user message), the kept turn, the follow-up.
    assert_eq!(sent.len(), 4, "{sent:#?}");
    assert!(user_text(&sent[0]).contains(SUMMARY), "{:#}", sent[0]);
    assert_eq!(user_text(&sent[1]), second_prompt());
    assert_eq!(sent[2]["content"], SECOND_ANSWER);
    assert_eq!(user_text(&sent[3]), "one more thing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_resumes_a_session_pi_16_forked_as_pi_16_does() {
    pi16_bin();
    let mock = MockLlm::start().await.expect("mock LLM");
    let (sandbox, file) = two_prompt_session(&mock).await;
    let lines = transcript::lines(&file);
    let second = lines
        .iter()
        .find(|l| l["message"]["role"] == "user" && user_text(&l["message"]) == second_prompt())
        .expect("the second prompt's entry");
    let second_id = second["id"].as_str().expect("id").to_string();

    // Fork before the second prompt and ask something else there.
    mock.enqueue(sse::text("chatcmpl-fork", "Forked answer."));
    let mut pi = PiRpc::start(&sandbox, &file);
    pi.command(json!({"type": "fork", "entryId": second_id}))
        .await;
    pi.prompt("a different question").await;
    pi.finish().await;
    let fork = sandbox
        .session_files()
        .into_iter()
        .find(|f| *f != file)
        .expect("the fork's file");
    let fork_lines = transcript::lines(&fork);
    assert_eq!(
        fork_lines[0]["parentSession"],
        file.to_string_lossy().as_ref(),
        "{}",
        fork_lines[0]
    );
    assert!(!fork_lines.iter().any(|l| l["id"] == second_id.as_str()));

    let sent = resume_with_both(&mock, &sandbox, &fork).await;
    let mut expected = transcript::task_conversation();
    expected.push(transcript::user("a different question"));
    expected.push(json!({"role": "assistant", "content": "Forked answer."}));
    expected.push(transcript::user("one more thing"));
    assert_eq!(sent, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_16_resumes_a_session_tandem_compacted_as_tandem_does() {
    pi16_bin();
    let mock = MockLlm::start().await.expect("mock LLM");
    let (sandbox, file) = run_reference_task(&mock, Agent::Tandem).await;
    // From now on the window is small: past 100 tokens of context Tandem compacts, keeping
    // about 50.
    let models = sandbox.agent_dir.join("models.json");
    let original = std::fs::read_to_string(&models).expect("models.json");
    let mut config: Value = serde_json::from_str(&original).expect("JSON");
    config["providers"]["mock"]["models"][0]["contextWindow"] = json!(1000);
    std::fs::write(&models, config.to_string()).expect("models.json");
    std::fs::write(
        sandbox.agent_dir.join("settings.json"),
        json!({"compaction": {"reserveTokens": 900, "keepRecentTokens": 50}}).to_string(),
    )
    .expect("settings.json");
    mock.enqueue(sse::text("chatcmpl-second", SECOND_ANSWER));
    mock.enqueue(sse::text("chatcmpl-summary", SUMMARY));
    let path = file.to_string_lossy().into_owned();
    let stdout = sandbox
        .run_ok(Agent::Tandem, &["--session", &path, "-p", &second_prompt()])
        .await;
    assert_eq!(stdout.trim_end(), SECOND_ANSWER);
    assert_eq!(mock.queued(), 0, "the answer and one summary");

    let lines = transcript::lines(&file);
    let compaction = compaction_keeping_the_second_prompt(&lines);
    assert!(
        compaction["summary"]
            .as_str()
            .is_some_and(|s| s.starts_with(SUMMARY)),
        "{compaction}"
    );
    // As pi 1.6 records it: the prompt and tools in force, stamped with the entry's time.
    let checkpoint = &compaction["systemMessage"];
    let keys: Vec<&str> = checkpoint
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        ["role", "content", "sections", "toolsAdded", "timestamp"],
        "{compaction}"
    );

    // The resumers get the large window back, so neither compacts again.
    std::fs::write(&models, original).expect("models.json");
    std::fs::remove_file(sandbox.agent_dir.join("settings.json")).expect("settings.json");
    let sent = resume_with_both(&mock, &sandbox, &file).await;
    assert_eq!(sent.len(), 4, "{sent:#?}");
    assert!(user_text(&sent[0]).contains(SUMMARY), "{:#}", sent[0]);
    assert_eq!(user_text(&sent[1]), second_prompt());
    assert_eq!(sent[2]["content"], SECOND_ANSWER);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_16_leaves_out_an_answer_tandem_retried() {
    pi16_bin();
    let mock = MockLlm::start().await.expect("mock LLM");
    let sandbox = Sandbox::new(&mock);
    std::fs::write(
        sandbox.agent_dir.join("settings.json"),
        json!({"retry": {"baseDelayMs": 1, "maxDelayMs": 5}}).to_string(),
    )
    .expect("settings.json");
    mock.enqueue(MockResponse::json(
        429,
        json!({"error": {"message": "slow down", "type": "rate_limit"}}),
    ));
    mock.enqueue(sse::text("chatcmpl-retried", "Second time lucky."));
    let stdout = sandbox
        .run_ok(Agent::Tandem, &["-p", "--model", MODEL, "say hi"])
        .await;
    assert_eq!(stdout.trim_end(), "Second time lucky.");
    let file = sandbox.only_session_file();
    let lines = transcript::lines(&file);
    let failed = lines
        .iter()
        .find(|l| l["message"]["stopReason"] == "error")
        .expect("the failed answer stays in the file");
    let edit = lines
        .iter()
        .find(|l| l["type"] == "context_edit")
        .expect("a context edit");
    assert_eq!(edit["targetId"], failed["id"], "{edit}");
    assert_eq!(edit["replacement"], Value::Null, "{edit}");

    let sent = resume_with_both(&mock, &sandbox, &file).await;
    assert_eq!(
        sent,
        [
            transcript::user("say hi"),
            json!({"role": "assistant", "content": "Second time lucky."}),
            transcript::user("one more thing"),
        ]
    );
}
