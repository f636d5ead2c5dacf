//! Slash commands: `/model` (picker and name), `/resume` of an earlier session, `/new`.

use serde_json::json;
use tandem_tests::wire::{Turn, WireApi};

use crate::support::tmux::Launch;
use crate::support::{read_jsonl, Sandbox, MODEL};
use crate::{open, ready, send, wait_text};

fn two_models() -> Sandbox {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_models(json!({"providers": {"mock": {
        "baseUrl": WireApi::OpenAiCompletions.base_url(&sandbox.mock.base_url()),
        "api": "openai-completions",
        "apiKey": "test-key",
        "models": [{"id": "mock-model"}, {"id": "other-model", "name": "The Other One"}],
    }}}));
    sandbox
}

#[test]
fn model_picker_switches_the_model_for_the_next_turn() {
    let sandbox = two_models();
    sandbox.answer(&Turn::text("From the other model."));
    let tmux = open(&sandbox, &[], 100, 40);
    send(&tmux, "/model");
    wait_text(&tmux, "mock/other-model");
    tmux.send_text("other");
    tmux.send_keys(&["Enter"]);
    wait_text(&tmux, "Model: mock/other-model");
    send(&tmux, "hi");
    wait_text(&tmux, "From the other model.");
    let request = sandbox.requests()[0].json().expect("JSON request");
    assert_eq!(request["model"], "other-model");
    // By name too.
    send(&tmux, "/model mock/mock-model");
    wait_text(&tmux, "Model: mock/mock-model");
    send(&tmux, "/model no-such-thing");
    wait_text(&tmux, "No available model matches");
}

#[test]
fn resume_picks_an_earlier_session_and_continues_it() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("The earlier answer."));
    sandbox
        .run(&["-p", "an earlier question about turtles"])
        .expect_code(0);
    let earlier = sandbox.only_session();
    sandbox.answer(&Turn::text("Continued answer."));
    let tmux = open(&sandbox, &["--no-session"], 100, 40);
    send(&tmux, "/resume");
    wait_text(&tmux, "an earlier question about turtles");
    tmux.send_keys(&["Enter"]);
    let screen = wait_text(&tmux, "Resumed the session.");
    assert!(
        screen.contains("› an earlier question about turtles"),
        "{screen}"
    );
    assert!(screen.contains("The earlier answer."), "{screen}");
    ready(&tmux);
    send(&tmux, "and tortoises?");
    wait_text(&tmux, "Continued answer.");
    ready(&tmux);
    // The same file, continued.
    assert_eq!(sandbox.only_session(), earlier);
    let entries = read_jsonl(&earlier);
    let prompts: Vec<&str> = entries
        .iter()
        .filter(|e| e["message"]["role"] == "user")
        .filter_map(|e| e["message"]["content"][0]["text"].as_str())
        .collect();
    assert_eq!(
        prompts,
        ["an earlier question about turtles", "and tortoises?"]
    );
    // The model saw the earlier turn.
    let last = sandbox
        .requests()
        .last()
        .expect("a request")
        .json()
        .expect("JSON");
    assert!(last.to_string().contains("The earlier answer."));
}

#[test]
fn unknown_commands_and_hotkeys() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let tmux = open(&sandbox, &[], 100, 40);
    send(&tmux, "/hotkeys");
    wait_text(&tmux, "Alt+Enter");
    // A slash word that is no command (nor template) goes to the model as a prompt: pi's
    // behaviour; completion lists the commands.
    tmux.send_text("/mo");
    wait_text(&tmux, "Pick or set the model");
    tmux.send_keys(&["Escape"]);
    tmux.send_keys(&["C-c"]);
    ready(&tmux);
    assert!(sandbox.requests().is_empty());
}

#[test]
fn tree_goes_back_to_a_prompt_and_branches_from_there() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("First answer."));
    sandbox.answer(&Turn::text("Second answer."));
    sandbox.answer(&Turn::text("Answer on the branch."));
    let tmux = open(&sandbox, &[], 100, 40);
    send(&tmux, "first question");
    wait_text(&tmux, "First answer.");
    ready(&tmux);
    send(&tmux, "second question");
    wait_text(&tmux, "Second answer.");
    ready(&tmux);
    send(&tmux, "/tree");
    let screen = wait_text(&tmux, "← current");
    assert!(screen.contains("› first question"), "{screen}");
    // The current leaf is the second answer; one up is the second prompt.
    tmux.send_keys(&["Up", "Enter"]);
    // The second exchange is left behind: a summary is offered; the first choice is none.
    wait_text(&tmux, "Keep a summary of the branch you leave");
    tmux.send_keys(&["Enter"]);
    wait_text(&tmux, "Moved in the session tree");
    // The prompt is back in the editor: replace it and send.
    tmux.send_keys(&["C-c"]);
    send(&tmux, "a different second question");
    wait_text(&tmux, "Answer on the branch.");
    ready(&tmux);
    // The model saw only the first exchange before the new prompt.
    let last = sandbox
        .requests()
        .last()
        .expect("a request")
        .json()
        .expect("JSON")
        .to_string();
    assert!(last.contains("First answer."), "{last}");
    assert!(!last.contains("Second answer."), "{last}");
    // Both branches are in the one file, under the same parent.
    let entries = read_jsonl(&sandbox.only_session());
    let parent_of = |text: &str| {
        entries
            .iter()
            .find(|e| e["message"]["content"][0]["text"] == text)
            .map(|e| e["parentId"].clone())
            .expect("the prompt's entry")
    };
    assert_eq!(
        parent_of("a different second question"),
        parent_of("second question")
    );
}

/// The branch left can be summarized by the model: the summary is recorded where the
/// conversation continues and the model reads it with the next prompt.
#[test]
fn tree_can_summarize_the_branch_it_leaves() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("First answer."));
    sandbox.answer(&Turn::text("Second answer."));
    sandbox.answer(&Turn::text(
        "They asked a second question and got an answer.",
    ));
    sandbox.answer(&Turn::text("Answer after the summary."));
    let tmux = open(&sandbox, &[], 100, 40);
    send(&tmux, "first question");
    wait_text(&tmux, "First answer.");
    ready(&tmux);
    send(&tmux, "second question");
    wait_text(&tmux, "Second answer.");
    ready(&tmux);
    send(&tmux, "/tree");
    wait_text(&tmux, "← current");
    tmux.send_keys(&["Up", "Enter"]);
    wait_text(&tmux, "Keep a summary of the branch you leave");
    tmux.send_keys(&["Down", "Enter"]);
    let screen = wait_text(&tmux, "Moved in the session tree");
    // The conversation shown again holds the summary, and the prompt is back in the editor.
    let screen = if screen.contains("They asked a second question") {
        screen
    } else {
        wait_text(&tmux, "They asked a second question")
    };
    assert!(screen.contains("Summary of a branch left"), "{screen}");
    // The summary request carried the branch left, and nothing else was asked.
    let requests = sandbox.requests();
    assert_eq!(requests.len(), 3);
    let asked = requests[2].json().expect("JSON").to_string();
    assert!(
        asked.contains("second question") && asked.contains("Second answer."),
        "{asked}"
    );
    assert!(asked.contains("<conversation>"), "{asked}");
    tmux.send_keys(&["C-c"]);
    send(&tmux, "go on");
    wait_text(&tmux, "Answer after the summary.");
    ready(&tmux);
    let last = sandbox
        .requests()
        .last()
        .expect("a request")
        .json()
        .expect("JSON")
        .to_string();
    assert!(
        last.contains("They asked a second question and got an answer."),
        "{last}"
    );
    assert!(!last.contains("Second answer."), "{last}");
    let entries = read_jsonl(&sandbox.only_session());
    let summary = entries
        .iter()
        .find(|e| e["type"] == "branch_summary")
        .expect("a branch_summary entry");
    let prompt = entries
        .iter()
        .find(|e| e["message"]["content"][0]["text"] == "go on")
        .expect("the new prompt");
    assert_eq!(prompt["parentId"], summary["id"]);

    // With `branchSummary.skipPrompt` nothing is asked.
    sandbox.write_settings(serde_json::json!({"branchSummary": {"skipPrompt": true}}));
    send(&tmux, "/reload");
    wait_text(&tmux, "Reloaded the configuration.");
    send(&tmux, "/tree");
    wait_text(&tmux, "← current");
    tmux.send_keys(&["Up", "Enter"]);
    let screen = wait_text(&tmux, "Moved in the session tree");
    assert!(!screen.contains("Keep a summary"), "{screen}");
}

#[test]
fn resume_flag_without_a_session_opens_the_picker() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("Old answer."));
    sandbox.run(&["-p", "an old question"]).expect_code(0);
    let tmux = Launch::tandem(&sandbox, &["--model", MODEL, "-r"])
        .size(100, 40)
        .start();
    wait_text(&tmux, "Resume a session");
    tmux.send_keys(&["Enter"]);
    let screen = wait_text(&tmux, "Resumed the session.");
    assert!(screen.contains("› an old question"), "{screen}");
    // In print mode the picker is refused with what to do instead.
    let run = sandbox.run(&["-r", "-p", "hi"]);
    run.expect_code(1);
    assert!(
        run.stderr.contains("needs the interactive mode"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_projects_templates_wait_for_trust_and_reload_reads_new_ones() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    std::fs::create_dir_all(sandbox.cwd.join(".pi/prompts")).expect("prompts dir");
    sandbox.write(
        ".pi/prompts/review.md",
        "---\ndescription: Review the code\n---\nPlease review the code carefully.",
    );
    sandbox.answer(&Turn::text("Reviewed."));
    sandbox.answer(&Turn::text("Summarized."));
    let tmux = Launch::tandem(&sandbox, &["--model", MODEL])
        .size(100, 40)
        .start();
    // The folder's trust is asked first; nothing of the project is used before it.
    let screen = wait_text(&tmux, "Trust it for this session only");
    assert!(
        screen.contains("review.md") || screen.contains(".pi"),
        "{screen}"
    );
    tmux.send_keys(&["Down", "Enter"]);
    wait_text(&tmux, "The folder is trusted");
    ready(&tmux);
    tmux.send_text("/rev");
    wait_text(&tmux, "Review the code");
    tmux.send_keys(&["Tab", "Enter"]);
    wait_text(&tmux, "Reviewed.");
    ready(&tmux);
    let first = sandbox.requests()[0].json().expect("JSON").to_string();
    assert!(
        first.contains("Please review the code carefully."),
        "{first}"
    );
    // A template added later is found after /reload.
    std::fs::create_dir_all(sandbox.agent_dir.join("prompts")).expect("user prompts");
    sandbox.write_agent_file(
        "prompts/summarize.md",
        "---\ndescription: Summarize it\n---\nSummarize in one line.",
    );
    send(&tmux, "/reload");
    wait_text(&tmux, "Reloaded the configuration.");
    tmux.send_text("/summ");
    wait_text(&tmux, "Summarize it");
    tmux.send_keys(&["Tab", "Enter"]);
    wait_text(&tmux, "Summarized.");
    let second = sandbox.requests()[1].json().expect("JSON").to_string();
    assert!(second.contains("Summarize in one line."), "{second}");
}

#[test]
fn compact_name_session_and_undo() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_settings(json!({"compaction": {"keepRecentTokens": 1}}));
    sandbox.write("a.txt", "one\n");
    sandbox.answer(&Turn::tool_call(
        "call_1",
        "write",
        json!({"path": "a.txt", "content": "two\n"}),
    ));
    sandbox.answer(&Turn::text("Wrote it."));
    sandbox.answer(&Turn::text("## Summary\nThe user changed a.txt."));
    let tmux = open(&sandbox, &[], 100, 40);
    send(&tmux, "write two");
    wait_text(&tmux, "Wrote it.");
    ready(&tmux);
    assert_eq!(sandbox.read("a.txt"), "two\n");
    send(&tmux, "/name my work");
    wait_text(&tmux, "Session named \"my work\".");
    wait_text(&tmux, "· my work");
    send(&tmux, "/session");
    wait_text(&tmux, "1 prompts, 2 answers, 1 tool calls");
    send(&tmux, "/compact");
    wait_text(&tmux, "Context compacted");
    ready(&tmux);
    send(&tmux, "/undo");
    wait_text(&tmux, "a.txt");
    tmux.wait_for("the undo", crate::WAIT, |_| {
        sandbox.read("a.txt") == "one\n"
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let kinds: Vec<String> = read_jsonl(&sandbox.only_session())
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(kinds.contains(&"compaction".to_string()), "{kinds:?}");
    assert!(kinds.contains(&"session_info".to_string()), "{kinds:?}");
}

/// Runs a tmux command on `tmux`'s own server; its standard output.
fn tmux_command(tmux: &crate::support::tmux::Tmux, args: &[&str]) -> String {
    let out = std::process::Command::new("tmux")
        .arg("-S")
        .arg(tmux.socket())
        .args(args)
        .output()
        .expect("runs tmux");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn copy_export_new_fork_mcp_and_quit() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.answer(&Turn::text("The first answer, to copy."));
    sandbox.answer(&Turn::text("Answer in the fork."));
    let tmux = open(&sandbox, &[], 100, 40);
    // OSC 52 reaches tmux's buffers when the terminal takes it.
    tmux_command(&tmux, &["set", "-s", "set-clipboard", "on"]);
    send(&tmux, "question one");
    wait_text(&tmux, "The first answer, to copy.");
    ready(&tmux);
    send(&tmux, "/copy");
    wait_text(&tmux, "Copied the last answer");
    tmux.wait_for("the clipboard", crate::WAIT, |_| {
        tmux_command(&tmux, &["show-buffer"]) == "The first answer, to copy."
    })
    .unwrap_or_else(|e| panic!("{e}"));
    send(&tmux, "/export page.html");
    wait_text(&tmux, "Exported to");
    let page = std::fs::read_to_string(sandbox.cwd.join("page.html")).expect("the page");
    assert!(page.contains("The first answer, to copy."));
    send(&tmux, "/mcp");
    wait_text(&tmux, "No MCP tools");
    // /fork: back to the first prompt, in a new session file.
    send(&tmux, "/fork");
    wait_text(&tmux, "Fork from which prompt?");
    tmux.send_keys(&["Enter"]);
    wait_text(&tmux, "Forked: edit the prompt and send it.");
    tmux.send_keys(&["C-c"]);
    send(&tmux, "question one, again");
    wait_text(&tmux, "Answer in the fork.");
    ready(&tmux);
    // /new: an empty session; nothing is written until it has a prompt.
    send(&tmux, "/new");
    wait_text(&tmux, "New session.");
    assert_eq!(
        sandbox.session_files().len(),
        2,
        "{:?}",
        sandbox.session_files()
    );
    send(&tmux, "/quit");
    assert_eq!(tmux.wait_for_exit(crate::WAIT), Ok(0));
}
