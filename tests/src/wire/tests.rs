//! Every encoding read back by Tandem's own decoders: what the encoder meant (text, calls, stop
//! reason, usage) is exactly what the decoder reports.

use serde_json::json;
use tandem_ai::http::VecSource;
use tandem_ai::providers::{anthropic, google, openai_completions, openai_responses};
use tandem_ai::{
    Api, AssistantBlock, AssistantMessage, AssistantStream, InputKind, Model, ModelCost, StopReason,
};

use super::*;

fn model(api: WireApi) -> Model {
    Model {
        id: "mock-model".into(),
        name: "mock-model".into(),
        api: Api::parse(api.name()),
        provider: "mock".into(),
        base_url: api.base_url("http://127.0.0.1:1"),
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 16_384,
        headers: None,
        compat: None,
    }
}

/// Decodes `body` as `api`'s stream, through the same writer a real call uses.
async fn decode(api: WireApi, body: String) -> AssistantMessage {
    let model = model(api);
    let (mut writer, stream) = AssistantStream::channel(&model);
    let task = tokio::spawn(async move {
        let source = VecSource::from_body(&body);
        let outcome = match api {
            WireApi::OpenAiCompletions => {
                openai_completions::decode(source, &mut writer, &model).await
            }
            WireApi::OpenAiResponses => openai_responses::decode(source, &mut writer, &model).await,
            WireApi::AnthropicMessages => anthropic::decode(source, &mut writer, &model).await,
            WireApi::GoogleGenerativeAi => google::decode(source, &mut writer, &model).await,
        };
        match outcome {
            Ok(reason) => writer.finish(reason).await,
            Err(e) => writer.fail(StopReason::Error, e.to_string()).await,
        }
    });
    let message = stream.result().await;
    task.await.expect("decoder task");
    message
}

fn sample() -> Turn {
    Turn::text("Let me read the file — “hello.txt” 👋.")
        .with_tool_call("call_read_1", "read", json!({"path": "hello.txt"}))
        .with_tool_call(
            "call_edit_2",
            "edit",
            json!({"path": "hello.txt", "edits": [{"oldText": "hello world", "newText": "hello there"}]}),
        )
        .with_usage(1200, 45, 1024)
}

/// The id Tandem reports for a call the encoder was given as `id`.
fn decoded_id(api: WireApi, id: &str, message: &AssistantMessage) -> bool {
    message.tool_calls().any(|c| match api {
        WireApi::OpenAiResponses => c.id.starts_with(&format!("{id}|fc_")),
        _ => c.id == id,
    })
}

#[tokio::test]
async fn text_and_tool_calls_decode_in_every_api() {
    let turn = sample();
    for api in WireApi::ALL {
        let message = decode(api, super::turn(api, &turn)).await;
        assert_eq!(
            message.stop_reason,
            StopReason::ToolUse,
            "{api:?}: {message:?}"
        );
        assert_eq!(message.error_message, None, "{api:?}");
        assert_eq!(
            message.text(),
            "Let me read the file — “hello.txt” 👋.",
            "{api:?}"
        );
        assert!(
            matches!(message.content[0], AssistantBlock::Text(_)),
            "{api:?}"
        );
        let calls: Vec<_> = message.tool_calls().collect();
        assert_eq!(calls.len(), 2, "{api:?}");
        assert_eq!(calls[0].name, "read");
        assert_eq!(calls[0].arguments, json!({"path": "hello.txt"}), "{api:?}");
        assert_eq!(calls[1].name, "edit");
        assert_eq!(calls[1].arguments, turn.tool_calls[1].args, "{api:?}");
        assert!(
            decoded_id(api, "call_read_1", &message),
            "{api:?}: {calls:?}"
        );
        assert!(
            decoded_id(api, "call_edit_2", &message),
            "{api:?}: {calls:?}"
        );
        let u = &message.usage;
        assert_eq!(
            (u.input, u.output, u.cache_read),
            (1200, 45, 1024),
            "{api:?}"
        );
        assert_eq!(u.total_tokens, 1200 + 45 + 1024, "{api:?}");
        assert!(message.response_id.is_some() || api == WireApi::AnthropicMessages);
    }
}

#[tokio::test]
async fn plain_answers_stop_and_cut_answers_report_length() {
    for api in WireApi::ALL {
        let message = decode(
            api,
            turn(api, &Turn::text("Done: I changed world to there.")),
        )
        .await;
        assert_eq!(
            message.stop_reason,
            StopReason::Stop,
            "{api:?}: {message:?}"
        );
        assert_eq!(message.text(), "Done: I changed world to there.");
        assert_eq!(message.content.len(), 1, "{api:?}");
        assert_eq!((message.usage.input, message.usage.output), (100, 20));

        let cut = Turn::text("It was a dark and").with_finish(Finish::Length);
        let message = decode(api, turn(api, &cut)).await;
        assert_eq!(
            message.stop_reason,
            StopReason::Length,
            "{api:?}: {message:?}"
        );
        assert_eq!(message.text(), "It was a dark and");
    }
}

#[tokio::test]
async fn a_lone_tool_call_without_text_or_arguments_decodes() {
    for api in WireApi::ALL {
        let t = Turn::tool_call("call_ls", "ls", json!({}));
        let message = decode(api, turn(api, &t)).await;
        assert_eq!(
            message.stop_reason,
            StopReason::ToolUse,
            "{api:?}: {message:?}"
        );
        assert_eq!(message.content.len(), 1, "{api:?}");
        let call = message.tool_calls().next().expect("one call");
        assert_eq!((call.name.as_str(), &call.arguments), ("ls", &json!({})));
    }
}

#[test]
fn the_same_turn_gives_the_same_bytes_and_responses_ids_can_be_given_whole() {
    let t = sample();
    for api in WireApi::ALL {
        assert_eq!(turn(api, &t), turn(api, &t));
    }
    let given = Turn::tool_call("call_A|fc_B", "ls", json!({}));
    let body = turn(WireApi::OpenAiResponses, &given);
    assert!(body.contains(r#""call_id":"call_A""#), "{body}");
    assert!(body.contains(r#""id":"fc_B""#), "{body}");
}

#[test]
fn pieces_never_split_a_character() {
    assert_eq!(pieces("héllo wörld", 4), vec!["héll", "o wö", "rld"]);
    assert_eq!(pieces("", 4), Vec::<&str>::new());
    assert_eq!(pieces("abcd", 4), vec!["abcd"]);
}

#[test]
fn error_answers_carry_status_headers_and_the_provider_wording() {
    for api in WireApi::ALL {
        let limited = rate_limited(api);
        assert_eq!(limited.status().as_u16(), 429);
        assert_eq!(
            limited.headers().get("retry-after").map(|v| v.as_bytes()),
            Some(&b"0"[..])
        );
        let overflow = context_overflow(api);
        assert_eq!(overflow.status().as_u16(), 400);
        let text = String::from_utf8_lossy(overflow.body()).to_string();
        let mut failed = AssistantMessage::empty(Api::parse(api.name()), "mock", "mock-model");
        failed.stop_reason = StopReason::Error;
        failed.error_message = Some(text);
        assert!(
            tandem_ai::overflow::is_context_overflow(&failed, None),
            "{api:?}"
        );
    }
}

#[test]
fn base_urls_and_paths_match_each_provider() {
    let root = "http://127.0.0.1:9";
    let urls: Vec<_> = WireApi::ALL.iter().map(|a| a.base_url(root)).collect();
    assert_eq!(
        urls,
        [
            "http://127.0.0.1:9/v1",
            "http://127.0.0.1:9/v1",
            "http://127.0.0.1:9",
            "http://127.0.0.1:9/v1beta"
        ]
    );
    assert_eq!(
        WireApi::GoogleGenerativeAi.request_path("m"),
        "/v1beta/models/m:streamGenerateContent?alt=sse"
    );
}
