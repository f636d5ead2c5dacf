//! Interoperability with the real pi 0.73.1: a session written by one program is resumed by the
//! other, and both write the same lines for the same task.
//!
//! pi is the npm package installed by `scripts/install-pi` into `target/pi` (these tests fail,
//! saying so, when it is missing). Both programs talk to one mock LLM through the custom
//! provider `mock` of a `models.json`, so every request either of them sends is recorded and
//! can be compared. The reference task is "change world to there in hello.txt": the model reads
//! the file, edits it and answers. A second task uses a reasoning model, so thinking blocks and
//! the thinking level have to cross too. The last two tests script failing tool calls and
//! compare the tool results (the texts the model reads) each program writes.
//!
//! Tandem's session files also hold its undo checkpoints (`custom` entries, `tandem.checkpoint`
//! and `tandem.undo`): pi 0.73.1 and pi 1.6 (installed by `scripts/install-pi16`) resume such a
//! file and send exactly the conversation without them (and the undo's `custom_message` note to
//! the model, as Tandem does).

mod support_pi;

#[path = "pi_interop/json_mode.rs"]
mod json_mode;
#[path = "pi_interop/pi16_sessions.rs"]
mod pi16_sessions;

use std::path::Path;

use serde_json::{json, Value};
use support_pi::calls::{differences, Call};
use support_pi::transcript::{self, conversation, normalize, types, user};
use support_pi::{pi16_bin, pi_bin, run_reference_task, run_thinking_task, sse, Agent, Sandbox};
use tandem_tests::mock_llm::MockLlm;

const FOLLOW_UP: &str = "and now?";
const FOLLOW_UP_ANSWER: &str = "Nothing else to change.";

/// After `writer` wrote `file` (its last request to `mock` carried `history` minus the final
/// answer), runs `resumer --session <file> -p "and now?"` and checks what the resumer sent and
/// wrote. Returns the body of the resumer's request.
async fn resume_and_check(
    mock: &MockLlm,
    sandbox: &Sandbox,
    file: &Path,
    (writer, resumer): (Agent, Agent),
    history: Vec<Value>,
) -> Value {
    let before = std::fs::read(file).expect("read session");
    let before_lines = transcript::lines(file);
    let writer_requests = mock.requests();
    let writer_last = writer_requests.last().expect("the writer asked the model");

    mock.enqueue(sse::text("chatcmpl-resume", FOLLOW_UP_ANSWER));
    let path = file.to_string_lossy().into_owned();
    let stdout = sandbox
        .run_ok(resumer, &["--session", &path, "-p", FOLLOW_UP])
        .await;
    assert_eq!(stdout.trim_end(), FOLLOW_UP_ANSWER);

    // The resumer's one request carries the writer's whole conversation, in order, then the
    // follow-up; up to the final answer it is exactly what the writer itself sent.
    let requests = mock.requests();
    assert_eq!(
        requests.len(),
        writer_requests.len() + 1,
        "one follow-up request"
    );
    let resumer_request = requests.last().expect("follow-up request");
    let sent = conversation(resumer_request);
    let mut expected = history;
    expected.push(user(FOLLOW_UP));
    assert_eq!(
        sent,
        expected,
        "{resumer:?} resuming {writer:?}'s session sent:\n{}",
        serde_json::to_string_pretty(&sent).unwrap_or_default()
    );
    let earlier = conversation(writer_last);
    assert_eq!(
        sent[..earlier.len()],
        earlier[..],
        "{resumer:?} re-sends the earlier turns differently from {writer:?}"
    );
    // pi 1.6 sends a reasoning model's prompt on a host other than OpenAI's as `system`, where
    // pi 0.73.1 and Tandem send `developer` (a provider difference, outside sessions).
    if writer != Agent::Pi16 && resumer != Agent::Pi16 {
        assert_eq!(
            transcript::prompt_role(resumer_request),
            transcript::prompt_role(writer_last),
            "the system prompt's role"
        );
    }
    let body = resumer_request.json().expect("JSON body");
    assert_eq!(body["model"], "mock-model", "the session's model");
    if resumer != Agent::Pi {
        // The prompt and tools sent are the ones the file's `system` messages declare.
        assert_eq!(
            transcript::sent_system(resumer_request),
            transcript::declared_system(&transcript::lines(file)),
            "{resumer:?} sent a prompt or tools other than the session declares"
        );
    }

    // The resumer appended to the writer's file and left its bytes alone.
    assert_eq!(
        sandbox.session_files(),
        vec![file.to_path_buf()],
        "no new session file"
    );
    let after = std::fs::read(file).expect("read session");
    assert!(
        after.starts_with(&before),
        "{resumer:?} changed the existing bytes of {writer:?}'s session file:\nbefore:\n{}\nafter:\n{}",
        String::from_utf8_lossy(&before),
        String::from_utf8_lossy(&after)
    );
    let mut added = transcript::parse_lines(
        std::str::from_utf8(&after[before.len()..]).expect("appended lines are UTF-8"),
        file,
    );
    if records_its_system(writer, resumer) {
        // pi 1.6 and Tandem record the prompt and tools they run with as a `system` message
        // (kept out of the conversation they send); resuming another program's file, they
        // record the difference first, and the follow-up continues after it.
        let system = added.remove(0);
        assert_eq!(system["message"]["role"], "system", "{system}");
        assert_eq!(
            &system["parentId"],
            &before_lines.last().expect("entries")["id"]
        );
        assert_eq!(added[0]["parentId"], system["id"]);
        added[0]["parentId"] = system["parentId"].clone();
    }
    assert_eq!(
        types(&added),
        ["message", "message"],
        "appended: {added:#?}"
    );
    let last_old_id = &before_lines.last().expect("entries")["id"];
    assert_eq!(
        &added[0]["parentId"], last_old_id,
        "the follow-up continues the leaf"
    );
    assert_eq!(added[1]["parentId"], added[0]["id"]);
    assert_eq!(added[0]["message"]["role"], "user");
    assert_eq!(added[0]["message"]["content"][0]["text"], FOLLOW_UP);
    let answer = &added[1]["message"];
    assert_eq!(answer["role"], "assistant");
    assert_eq!(answer["content"][0]["text"], FOLLOW_UP_ANSWER);
    assert_eq!(answer["provider"], "mock");
    assert_eq!(answer["model"], "mock-model");
    assert_eq!(answer["stopReason"], "stop");
    assert_eq!(answer["responseId"], "chatcmpl-resume");
    // The whole file still reads as one session: ids and timestamps have pi's shapes and every
    // parent is an earlier entry.
    let all = normalize(&transcript::lines(file));
    let dangling: Vec<_> = all
        .iter()
        .filter(|l| {
            l["parentId"]
                .as_str()
                .is_some_and(|p| p.starts_with("<unknown"))
        })
        .collect();
    assert!(
        dangling.is_empty(),
        "entries with unknown parents: {dangling:#?}"
    );
    body
}

/// Whether `resumer` appends a `system` message before the follow-up: pi 1.6 and Tandem do when
/// the prompt or tools they run with differ from what the file declares, which is always the
/// case for a file another program wrote (each has its own prompt).
fn records_its_system(writer: Agent, resumer: Agent) -> bool {
    resumer != Agent::Pi && writer != resumer
}

async fn reference_task_across(writer: Agent, resumer: Agent) {
    pi_bin();
    let mock = MockLlm::start().await.expect("mock LLM");
    let (sandbox, file) = run_reference_task(&mock, writer).await;
    let history = transcript::task_conversation();
    resume_and_check(&mock, &sandbox, &file, (writer, resumer), history).await;
}

async fn thinking_task_across(writer: Agent, resumer: Agent) {
    pi_bin();
    let mock = MockLlm::start().await.expect("mock LLM");
    let (sandbox, file) = run_thinking_task(&mock, writer).await;
    let writer_body = mock.requests()[0].json().expect("JSON body");
    assert_eq!(
        writer_body["reasoning_effort"], "high",
        "{writer:?} asked for high"
    );
    let history = transcript::thinking_conversation();
    let body = resume_and_check(&mock, &sandbox, &file, (writer, resumer), history).await;
    assert_eq!(
        body["reasoning_effort"], "high",
        "{resumer:?} takes the thinking level from {writer:?}'s session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_resumes_a_session_written_by_pi() {
    reference_task_across(Agent::Pi, Agent::Tandem).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_resumes_a_session_written_by_tandem() {
    reference_task_across(Agent::Tandem, Agent::Pi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_16_resumes_a_session_written_by_tandem() {
    pi16_bin();
    reference_task_across(Agent::Tandem, Agent::Pi16).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_resumes_a_session_written_by_pi_16() {
    pi16_bin();
    reference_task_across(Agent::Pi16, Agent::Tandem).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_resumes_pi_16_thinking_blocks_and_level() {
    pi16_bin();
    thinking_task_across(Agent::Pi16, Agent::Tandem).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_16_resumes_tandem_thinking_blocks_and_level() {
    pi16_bin();
    thinking_task_across(Agent::Tandem, Agent::Pi16).await;
}

/// Tandem's session after the reference task and `tandem undo` ends with a checkpoint, an undo
/// entry and the undo's note to the model; `resumer` sends exactly the task's conversation and
/// the note from it.
async fn undone_task_resumed_by(resumer: Agent) {
    let mock = MockLlm::start().await.expect("mock LLM");
    let (sandbox, file) = run_reference_task(&mock, Agent::Tandem).await;
    sandbox.run_ok(Agent::Tandem, &["undo"]).await;
    assert_eq!(
        std::fs::read_to_string(sandbox.cwd.join("hello.txt")).expect("hello.txt"),
        support_pi::HELLO,
        "the undo restored the file"
    );
    let lines = transcript::lines(&file);
    let custom: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "custom")
        .filter_map(|l| l["customType"].as_str())
        .collect();
    assert_eq!(custom, ["tandem.checkpoint", "tandem.undo"]);
    // The undo's hidden note to the model is the last entry; it reaches the model as a user
    // message, the same from every resumer.
    let note = lines.last().expect("entries");
    assert_eq!(note["type"], "custom_message", "{note}");
    assert_eq!(note["customType"], "tandem.undo-note", "{note}");
    assert_eq!(note["display"], false, "{note}");
    let mut history = transcript::task_conversation();
    history.push(user(note["content"].as_str().expect("the note's text")));
    resume_and_check(&mock, &sandbox, &file, (Agent::Tandem, resumer), history).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_resumes_a_tandem_session_with_checkpoints_and_an_undo() {
    pi_bin();
    undone_task_resumed_by(Agent::Pi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_16_resumes_a_tandem_session_with_checkpoints_and_an_undo() {
    pi16_bin();
    undone_task_resumed_by(Agent::Pi16).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_resumes_its_session_with_checkpoints_and_an_undo() {
    undone_task_resumed_by(Agent::Tandem).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_resumes_pi_thinking_blocks_and_level() {
    thinking_task_across(Agent::Pi, Agent::Tandem).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_resumes_tandem_thinking_blocks_and_level() {
    thinking_task_across(Agent::Tandem, Agent::Pi).await;
}

/// Runs the reference task with `pi` and then with Tandem, checks that both sent the same
/// conversation on every turn, and returns each one's sandbox and session file.
pub(crate) async fn reference_task_by_both(
    mock: &MockLlm,
    pi: Agent,
) -> ((Sandbox, std::path::PathBuf), (Sandbox, std::path::PathBuf)) {
    let theirs = run_reference_task(mock, pi).await;
    let ours = run_reference_task(mock, Agent::Tandem).await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 6);
    for turn in 0..3 {
        assert_eq!(
            conversation(&requests[3 + turn]),
            conversation(&requests[turn]),
            "turn {turn}: Tandem's request (left) differs from {pi:?}'s (right)"
        );
    }
    (theirs, ours)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_and_tandem_write_the_same_lines_for_the_same_task() {
    pi_bin();
    let mock = MockLlm::start().await.expect("mock LLM");
    let ((pi_box, pi_file), (tandem_box, tandem_file)) =
        reference_task_by_both(&mock, Agent::Pi).await;

    // Same file and folder names, derived the same way from the header and the cwd.
    for (sandbox, file) in [(&pi_box, &pi_file), (&tandem_box, &tandem_file)] {
        let header = &transcript::lines(file)[0];
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        assert_eq!(name, transcript::expected_file_name(header));
        let dir = file
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|n| n.to_str());
        let expected_dir = transcript::expected_dir_name(&sandbox.cwd);
        assert_eq!(dir, Some(expected_dir.as_str()));
        assert_eq!(header["cwd"], sandbox.cwd.to_string_lossy().as_ref());
    }

    let pi_lines = transcript::lines(&pi_file);
    let mut tandem_lines = transcript::lines(&tandem_file);
    // Tandem records its prompt and tools first, as pi 1.6 does and pi 0.73.1 did not
    // (`pi_16_and_tandem_write_the_same_lines_for_the_same_task` compares that line).
    // pi 1.6's message fields (durations, raw stop reasons, …) are pi 0.73.1's lines' only
    // other difference.
    tandem_lines
        .iter_mut()
        .for_each(tandem_tests::pi_fields::without_pi_16_fields);
    let system = tandem_lines.remove(3);
    assert_eq!(system["message"]["role"], "system", "{system}");
    tandem_lines[3]["parentId"] = system["parentId"].clone();
    // Tandem ends the run with its checkpoint (a `custom` entry pi does not write, and skips
    // when it loads the file); the rest is line for line what pi wrote.
    let checkpoint = tandem_lines.pop().expect("Tandem's lines");
    assert_eq!(checkpoint["type"], "custom", "{checkpoint}");
    assert_eq!(
        checkpoint["customType"], "tandem.checkpoint",
        "{checkpoint}"
    );
    assert_eq!(
        types(&tandem_lines),
        types(&pi_lines),
        "entry types (left: Tandem, right: pi)"
    );
    let (pi_norm, tandem_norm) = (normalize(&pi_lines), normalize(&tandem_lines));
    for (i, (ours, theirs)) in tandem_norm.iter().zip(&pi_norm).enumerate() {
        assert_eq!(
            ours,
            theirs,
            "line {}: Tandem (left) differs from pi (right)",
            i + 1
        );
    }
    // Keys in the same order too: pi's readers do not care, but the two files then differ
    // only in generated values, byte for byte.
    for (i, (ours, theirs)) in tandem_norm.iter().zip(&pi_norm).enumerate() {
        assert_eq!(
            ours.to_string(),
            theirs.to_string(),
            "line {}: key order differs (left: Tandem, right: pi)",
            i + 1
        );
    }
}

/// Tool failures the model sees: the same texts from both programs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_error_results_match_pi() {
    pi_bin();
    let calls = [
        Call {
            label: "bash exiting non-zero with output on both streams",
            name: "bash",
            arguments: json!({"command": "echo out; echo err >&2; exit 3"}),
        },
        Call {
            label: "edit whose old text is absent",
            name: "edit",
            arguments: json!({"path": "hello.txt", "edits": [{"oldText": "nope", "newText": "x"}]}),
        },
        Call {
            label: "edit of a missing file",
            name: "edit",
            arguments: json!({"path": "missing.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
        },
        Call {
            label: "an unknown tool",
            name: "frobnicate",
            arguments: json!({"x": 1}),
        },
        Call {
            label: "read past the end",
            name: "read",
            arguments: json!({"path": "hello.txt", "offset": 99}),
        },
        // Deliberately different: for a missing file or a directory pi passes Node's raw error
        // (`ENOENT: no such file or directory, access '<path>'`, `EISDIR: illegal operation on
        // a directory, read`); Tandem says `File not found: <path>` and suggests `ls`.
    ];
    let diffs = differences(&calls).await;
    assert!(
        diffs.is_empty(),
        "tool results differ from pi's:\n{}",
        diffs.join("\n")
    );
}

/// Arguments that fail the tool's schema: pi 0.73.1 validates with TypeBox and words the errors
/// its way (`must have required properties a, b`, paths joined with `.`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validation_errors_match_pi() {
    pi_bin();
    let calls = [
        Call {
            label: "a wrong type at the top level",
            name: "read",
            arguments: json!({"path": "hello.txt", "offset": "abc"}),
        },
        Call {
            label: "arguments that are not an object",
            name: "read",
            arguments: json!(["hello.txt"]),
        },
        Call {
            label: "a missing required property",
            name: "read",
            arguments: json!({"file": "hello.txt"}),
        },
        Call {
            label: "two missing required properties",
            name: "write",
            arguments: json!({}),
        },
        Call {
            label: "a missing required property in an array item",
            name: "edit",
            arguments: json!({"path": "hello.txt", "edits": [{"newText": "x"}]}),
        },
        Call {
            label: "a wrong type in an array item",
            name: "edit",
            arguments: json!({"path": "hello.txt", "edits": [{"oldText": {"a": 1}, "newText": "x"}]}),
        },
    ];
    let diffs = differences(&calls).await;
    assert!(
        diffs.is_empty(),
        "validation errors differ from pi's:\n{}",
        diffs.join("\n")
    );
}
