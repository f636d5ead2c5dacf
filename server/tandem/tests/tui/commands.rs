//! Slash commands: `/model` (picker and name), `/resume` of an earlier session, `/new`.

use serde_json::json;
use tandem_tests::wire::{Turn, WireApi};

use crate::support::{read_jsonl, Sandbox};
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
