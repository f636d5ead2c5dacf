//! The request body: conversation → Responses input items, plus the call's settings.
//!
//! The input is a flat list of items rather than role-tagged messages with nested blocks: one
//! assistant turn becomes its reasoning items, output messages and function calls in order, and
//! each tool result becomes a `function_call_output`. Replaying an earlier turn of the same model
//! sends back the very items it produced (see the parent module for where their ids live), so
//! the service can reconnect reasoning to the calls it led to even though nothing is stored
//! server-side (`store: false`).

use serde_json::{json, Map, Value};

use super::{js_len, normalize_tool_call_id, short_hash, TextSignature, MAX_ID_LEN};
use crate::error::ProviderError;
use crate::http::HttpRequest;
use crate::model::{Model, ThinkingLevel};
use crate::options::{CacheRetention, StreamOptions};
use crate::transform::transform_messages;
use crate::types::{
    join_text, AssistantBlock, AssistantMessage, Context, Message, ToolResultMessage, UserBlock,
    UserContent, UserMessage,
};

/// Used when a model has no base URL, as the OpenAI SDK does.
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Builds the streaming `POST /responses` request for one call.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
) -> Result<HttpRequest, ProviderError> {
    // With thinking off no `reasoning` field is sent: models that always reason then use their
    // default effort (pi adds an undocumented prompt hint here; Tandem does not).
    let input = convert_messages(model, context)?;
    let level = model.effective_thinking(options.reasoning);
    let reasoning = model.reasoning && level != ThinkingLevel::Off;

    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("input".into(), Value::Array(input));
    body.insert("stream".into(), json!(true));
    if options.cache_retention != CacheRetention::None {
        if let Some(session) = &options.session_id {
            body.insert("prompt_cache_key".into(), json!(session));
        }
    }
    let base_url = match model.base_url.trim_end_matches('/') {
        "" => DEFAULT_BASE_URL,
        url => url,
    };
    // Long retention is an api.openai.com feature; other hosts reject the field.
    if options.cache_retention == CacheRetention::Long && base_url.contains("api.openai.com") {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
    body.insert("store".into(), json!(false));
    let max_tokens = options.max_tokens_for(model.max_tokens);
    if max_tokens > 0 {
        body.insert("max_output_tokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !context.tools.is_empty() {
        let tools: Vec<Value> = context
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": false,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if reasoning {
        body.insert(
            "reasoning".into(),
            json!({"effort": level.as_str(), "summary": "auto"}),
        );
        // Without the encrypted content the reasoning could not be replayed with store: false.
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }

    let mut headers = vec![("Authorization".to_string(), format!("Bearer {api_key}"))];
    if let Some(model_headers) = &model.headers {
        headers.extend(model_headers.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    headers.extend(options.headers.iter().map(|(k, v)| (k.clone(), v.clone())));

    Ok(HttpRequest {
        provider: model.provider.clone(),
        url: format!("{base_url}/responses"),
        headers,
        body: Value::Object(body),
        secrets: vec![api_key.to_string()],
    })
}

/// The `input` list: the system prompt, then every message as Responses items.
fn convert_messages(model: &Model, context: &Context) -> Result<Vec<Value>, ProviderError> {
    let messages = transform_messages(&context.messages, model, |id| {
        normalize_tool_call_id(model, id)
    });
    let mut input = Vec::new();
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        // Reasoning models take instructions in the developer role.
        let role = if model.reasoning {
            "developer"
        } else {
            "system"
        };
        input.push(json!({"role": role, "content": system}));
    }
    let images = model.accepts_images();
    // Counts converted messages; names assistant messages that have no id of their own.
    let mut index = 0usize;
    for message in &messages {
        let items = match message {
            Message::User(user) => user_items(user, images),
            Message::Assistant(assistant) => assistant_items(assistant, model, index)?,
            Message::ToolResult(result) => vec![tool_result_item(result, images)],
        };
        if items.is_empty() {
            continue;
        }
        input.extend(items);
        index += 1;
    }
    Ok(input)
}

/// A user message; empty when nothing is left after dropping images the model cannot see.
fn user_items(user: &UserMessage, images: bool) -> Vec<Value> {
    let content: Vec<Value> = match &user.content {
        UserContent::Text(text) => vec![json!({"type": "input_text", "text": text})],
        UserContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|block| match block {
                UserBlock::Text(t) => Some(json!({"type": "input_text", "text": t.text})),
                UserBlock::Image(image) if images => {
                    Some(image_part(&image.mime_type, &image.data))
                }
                UserBlock::Image(_) => None,
            })
            .collect(),
    };
    if content.is_empty() {
        return Vec::new();
    }
    vec![json!({"role": "user", "content": content})]
}

fn image_part(mime_type: &str, data: &str) -> Value {
    json!({
        "type": "input_image",
        "detail": "auto",
        "image_url": format!("data:{mime_type};base64,{data}"),
    })
}

/// One assistant turn as its output items, in the order the model produced them.
fn assistant_items(
    message: &AssistantMessage,
    model: &Model,
    index: usize,
) -> Result<Vec<Value>, ProviderError> {
    // Another model of the same provider and API: its function-call item ids were paired with
    // reasoning items this model never saw, which the service would try to validate.
    let sibling_model =
        message.model != model.id && message.provider == model.provider && message.api == model.api;
    let mut items = Vec::new();
    for block in &message.content {
        match block {
            AssistantBlock::Thinking(thinking) => {
                // Only signed reasoning can be replayed; the signature is the item itself.
                let Some(signature) = thinking
                    .thinking_signature
                    .as_deref()
                    .filter(|s| !s.is_empty())
                else {
                    continue;
                };
                let item = serde_json::from_str::<Value>(signature).map_err(|e| {
                    ProviderError::Request(format!(
                        "Cannot replay the conversation to {}/{}: a stored reasoning item is not valid JSON ({e}). The session file may be damaged; switch models or start a new session.",
                        model.provider, model.id
                    ))
                })?;
                items.push(item);
            }
            AssistantBlock::Text(text) => {
                let signature = TextSignature::parse(text.text_signature.as_deref());
                let id = match signature.as_ref().map(|s| s.id.as_str()) {
                    None => format!("msg_{index}"),
                    Some(id) if js_len(id) > MAX_ID_LEN => format!("msg_{}", short_hash(id)),
                    Some(id) => id.to_string(),
                };
                let mut item = json!({
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text.text, "annotations": []}],
                    "status": "completed",
                    "id": id,
                });
                if let Some(phase) = signature.and_then(|s| s.phase) {
                    item["phase"] = json!(phase);
                }
                items.push(item);
            }
            AssistantBlock::ToolCall(call) => {
                let mut parts = call.id.split('|');
                let call_id = parts.next().unwrap_or("");
                let item_id = parts
                    .next()
                    .filter(|id| !(sibling_model && id.starts_with("fc_")));
                let mut item = Map::new();
                item.insert("type".into(), json!("function_call"));
                if let Some(item_id) = item_id {
                    item.insert("id".into(), json!(item_id));
                }
                item.insert("call_id".into(), json!(call_id));
                item.insert("name".into(), json!(call.name));
                item.insert("arguments".into(), json!(call.arguments.to_string()));
                items.push(Value::Object(item));
            }
        }
    }
    Ok(items)
}

/// A tool result; images go along as input parts when the model can see them.
fn tool_result_item(result: &ToolResultMessage, images: bool) -> Value {
    let text = join_text(&result.content);
    let has_images = result
        .content
        .iter()
        .any(|b| matches!(b, UserBlock::Image(_)));
    let call_id = result.tool_call_id.split('|').next().unwrap_or("");
    let output = if has_images && images {
        let mut parts = Vec::new();
        if !text.is_empty() {
            parts.push(json!({"type": "input_text", "text": text}));
        }
        for block in &result.content {
            if let UserBlock::Image(image) = block {
                parts.push(image_part(&image.mime_type, &image.data));
            }
        }
        Value::Array(parts)
    } else if text.is_empty() {
        json!("(see attached image)")
    } else {
        json!(text)
    };
    json!({"type": "function_call_output", "call_id": call_id, "output": output})
}

#[cfg(test)]
mod tests {
    use super::super::test_support::model;
    use super::*;
    use crate::model::{Api, InputKind};
    use crate::types::{
        ImageContent, StopReason, TextContent, ThinkingContent, Tool, ToolCall, Usage,
    };

    fn user(text: &str) -> Message {
        Message::User(UserMessage {
            content: UserContent::Text(text.into()),
            timestamp: 1,
        })
    }

    fn image() -> UserBlock {
        UserBlock::Image(ImageContent {
            data: "iVBORw0KGgo=".into(),
            mime_type: "image/png".into(),
        })
    }

    fn text_block(text: &str) -> UserBlock {
        UserBlock::Text(TextContent {
            text: text.into(),
            text_signature: None,
        })
    }

    fn assistant(model: &Model, content: Vec<AssistantBlock>, stop: StopReason) -> Message {
        Message::Assistant(AssistantMessage {
            content,
            api: model.api.clone(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            usage: Usage::default(),
            stop_reason: stop,
            timestamp: 2,
            response_id: None,
            error_message: None,
            raw_stop_reason: None,
            duration_ms: None,
            thinking_level: None,
            failure: None,
        })
    }

    fn call(id: &str) -> AssistantBlock {
        AssistantBlock::ToolCall(ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: json!({"path": "a.txt"}),
            thought_signature: None,
        })
    }

    fn body(model: &Model, context: &Context, options: &StreamOptions) -> Value {
        build_request(model, context, options, "sk-test")
            .expect("request builds")
            .body
    }

    fn chat_model() -> Model {
        let mut m = model("gpt-4.1");
        m.reasoning = false;
        m.input = vec![InputKind::Text];
        m
    }

    #[test]
    fn plain_request_body_url_and_headers() {
        let mut m = chat_model();
        m.base_url = "https://api.openai.com/v1/".into();
        m.headers = Some([("X-Team".to_string(), "a".to_string())].into());
        let context = Context {
            system_prompt: Some("Be brief.".into()),
            messages: vec![user("hi")],
            tools: vec![],
        };
        let options = StreamOptions {
            temperature: Some(0.2),
            session_id: Some("sess-1".into()),
            headers: [("X-Team".to_string(), "b".to_string())].into(),
            ..StreamOptions::default()
        };
        let request = build_request(&m, &context, &options, "sk-test").expect("builds");
        assert_eq!(request.url, "https://api.openai.com/v1/responses");
        assert_eq!(
            request.headers,
            vec![
                ("Authorization".to_string(), "Bearer sk-test".to_string()),
                ("X-Team".to_string(), "a".to_string()),
                ("X-Team".to_string(), "b".to_string()),
            ]
        );
        assert_eq!(request.secrets, vec!["sk-test".to_string()]);
        assert_eq!(
            request.body,
            json!({
                "model": "gpt-4.1",
                "input": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                ],
                "stream": true,
                "prompt_cache_key": "sess-1",
                "store": false,
                "max_output_tokens": 32000,
                "temperature": 0.2,
            })
        );
        // Key order follows pi's body.
        let keys: Vec<&String> = request.body.as_object().expect("object").keys().collect();
        assert_eq!(
            keys,
            [
                "model",
                "input",
                "stream",
                "prompt_cache_key",
                "store",
                "max_output_tokens",
                "temperature"
            ]
        );
    }

    #[test]
    fn cache_retention_controls_the_cache_fields() {
        let m = chat_model();
        let context = Context {
            messages: vec![user("hi")],
            ..Context::default()
        };
        let mut options = StreamOptions {
            session_id: Some("s".into()),
            cache_retention: CacheRetention::Long,
            max_tokens: Some(500),
            ..StreamOptions::default()
        };
        let b = body(&m, &context, &options);
        assert_eq!(b["prompt_cache_key"], "s");
        assert_eq!(b["prompt_cache_retention"], "24h");
        assert_eq!(b["max_output_tokens"], 500);

        let mut proxy = m.clone();
        proxy.base_url = "https://proxy.example/v1".into();
        assert!(body(&proxy, &context, &options)
            .get("prompt_cache_retention")
            .is_none());

        options.cache_retention = CacheRetention::None;
        let b = body(&m, &context, &options);
        assert!(b.get("prompt_cache_key").is_none());
        assert!(b.get("prompt_cache_retention").is_none());
    }

    #[test]
    fn tools_are_functions_without_strict_mode() {
        let context = Context {
            messages: vec![user("list files")],
            tools: vec![Tool {
                name: "ls".into(),
                description: "List a directory".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            }],
            ..Context::default()
        };
        let b = body(&chat_model(), &context, &StreamOptions::default());
        assert_eq!(
            b["tools"],
            json!([{
                "type": "function",
                "name": "ls",
                "description": "List a directory",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                "strict": false,
            }])
        );
    }

    #[test]
    fn reasoning_levels() {
        let context = Context {
            system_prompt: Some("sys".into()),
            messages: vec![user("think")],
            tools: vec![],
        };
        let with = |m: &Model, level| {
            body(
                m,
                &context,
                &StreamOptions {
                    reasoning: level,
                    ..StreamOptions::default()
                },
            )
        };
        let gpt5 = model("gpt-5");
        for (level, effort) in [
            (ThinkingLevel::Minimal, "minimal"),
            (ThinkingLevel::Low, "low"),
            (ThinkingLevel::Medium, "medium"),
            (ThinkingLevel::High, "high"),
            // gpt-5 has no xhigh, so it is clamped.
            (ThinkingLevel::Xhigh, "high"),
        ] {
            let b = with(&gpt5, level);
            assert_eq!(b["reasoning"], json!({"effort": effort, "summary": "auto"}));
            assert_eq!(b["include"], json!(["reasoning.encrypted_content"]));
            assert_eq!(b["input"][0]["role"], "developer");
            assert_eq!(b["input"].as_array().map(Vec::len), Some(2));
        }
        assert_eq!(
            with(&model("gpt-5.2"), ThinkingLevel::Xhigh)["reasoning"]["effort"],
            "xhigh"
        );

        // Off: no reasoning field and nothing added to the input.
        let mut lower = model("gpt-5");
        lower.name = "gpt-5".into();
        for m in [&lower, &gpt5] {
            let off = with(m, ThinkingLevel::Off);
            assert!(off.get("reasoning").is_none());
            assert!(off.get("include").is_none());
            assert_eq!(off["input"].as_array().map(Vec::len), Some(2));
        }

        // A model that cannot reason ignores the level.
        let b = with(&chat_model(), ThinkingLevel::High);
        assert!(b.get("reasoning").is_none());
        assert_eq!(b["input"][0]["role"], "system");
    }

    #[test]
    fn images_in_user_messages_and_tool_results() {
        let m = model("gpt-5");
        let context = Context {
            messages: vec![
                Message::User(UserMessage {
                    content: UserContent::Blocks(vec![text_block("what is this?"), image()]),
                    timestamp: 1,
                }),
                assistant(&m, vec![call("call_1|fc_1")], StopReason::ToolUse),
                Message::ToolResult(ToolResultMessage {
                    content: vec![text_block("a screenshot"), image()],
                    ..ToolResultMessage::text("call_1|fc_1", "read", "", false)
                }),
            ],
            ..Context::default()
        };
        let b = body(&m, &context, &StreamOptions::default());
        let data_url = "data:image/png;base64,iVBORw0KGgo=";
        assert_eq!(
            b["input"][0],
            json!({"role": "user", "content": [
                {"type": "input_text", "text": "what is this?"},
                {"type": "input_image", "detail": "auto", "image_url": data_url},
            ]})
        );
        assert_eq!(
            b["input"][2],
            json!({"type": "function_call_output", "call_id": "call_1", "output": [
                {"type": "input_text", "text": "a screenshot"},
                {"type": "input_image", "detail": "auto", "image_url": data_url},
            ]})
        );

        // A text-only model: images are dropped, an image-only user message disappears and an
        // image-only tool result says where the image went.
        let mut blind = m.clone();
        blind.input = vec![InputKind::Text];
        let context = Context {
            messages: vec![
                Message::User(UserMessage {
                    content: UserContent::Blocks(vec![image()]),
                    timestamp: 1,
                }),
                user("hello"),
                assistant(&blind, vec![call("call_1|fc_1")], StopReason::ToolUse),
                Message::ToolResult(ToolResultMessage {
                    content: vec![image()],
                    ..ToolResultMessage::text("call_1|fc_1", "read", "", false)
                }),
            ],
            ..Context::default()
        };
        let b = body(&blind, &context, &StreamOptions::default());
        let input = b["input"].as_array().expect("input");
        assert_eq!(input.len(), 3);
        assert_eq!(input[0]["content"][0]["text"], "hello");
        assert_eq!(input[2]["output"], "(see attached image)");
    }

    #[test]
    fn replayed_turn_sends_back_reasoning_message_and_call_items() {
        let m = model("gpt-5");
        let reasoning_item = json!({
            "id": "rs_1",
            "type": "reasoning",
            "encrypted_content": "gAAAAB",
            "summary": [{"type": "summary_text", "text": "Plan"}],
        });
        let context = Context {
            messages: vec![
                user("read a.txt"),
                assistant(
                    &m,
                    vec![
                        AssistantBlock::Thinking(ThinkingContent {
                            thinking: "Plan".into(),
                            thinking_signature: Some(reasoning_item.to_string()),
                            redacted: None,
                        }),
                        AssistantBlock::Text(TextContent {
                            text: "Reading it.".into(),
                            text_signature: Some(
                                r#"{"v":1,"id":"msg_7","phase":"commentary"}"#.into(),
                            ),
                        }),
                        call("call_1|fc_1"),
                    ],
                    StopReason::ToolUse,
                ),
                Message::ToolResult(ToolResultMessage::text(
                    "call_1|fc_1",
                    "read",
                    "hello",
                    false,
                )),
                assistant(
                    &m,
                    vec![
                        // Unsigned thinking cannot be replayed.
                        AssistantBlock::Thinking(ThinkingContent {
                            thinking: "unsigned".into(),
                            thinking_signature: None,
                            redacted: None,
                        }),
                        AssistantBlock::Text(TextContent {
                            text: "It says hello.".into(),
                            text_signature: None,
                        }),
                    ],
                    StopReason::Stop,
                ),
                // Failed turns are never replayed.
                assistant(
                    &m,
                    vec![AssistantBlock::Text(TextContent {
                        text: "partial".into(),
                        text_signature: None,
                    })],
                    StopReason::Error,
                ),
                user("thanks"),
            ],
            ..Context::default()
        };
        let b = body(&m, &context, &StreamOptions::default());
        assert_eq!(
            b["input"],
            json!([
                {"role": "user", "content": [{"type": "input_text", "text": "read a.txt"}]},
                reasoning_item,
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Reading it.", "annotations": []}],
                 "status": "completed", "id": "msg_7", "phase": "commentary"},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read",
                 "arguments": "{\"path\":\"a.txt\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "hello"},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "It says hello.", "annotations": []}],
                 "status": "completed", "id": "msg_3"},
                {"role": "user", "content": [{"type": "input_text", "text": "thanks"}]},
            ])
        );
    }

    #[test]
    fn turns_from_other_models_lose_their_private_ids() {
        let m = model("gpt-5");
        let sibling = model("gpt-5-mini");
        let mut codex = model("gpt-5-codex");
        codex.provider = "openai-codex".into();
        let mut claude = model("claude-sonnet-4-5");
        claude.api = Api::AnthropicMessages;
        claude.provider = "anthropic".into();
        let long_id = format!("msg_{}", "z".repeat(70));
        let context = Context {
            messages: vec![
                user("go"),
                assistant(&sibling, vec![call("call_1|fc_1")], StopReason::ToolUse),
                Message::ToolResult(ToolResultMessage::text("call_1|fc_1", "read", "a", false)),
                assistant(&codex, vec![call("call.2|item.2")], StopReason::ToolUse),
                Message::ToolResult(ToolResultMessage::text("call.2|item.2", "read", "b", false)),
                assistant(
                    &claude,
                    vec![
                        AssistantBlock::Thinking(ThinkingContent {
                            thinking: "claude thought".into(),
                            thinking_signature: Some("EqQBsig".into()),
                            redacted: None,
                        }),
                        call("toolu_01"),
                    ],
                    StopReason::ToolUse,
                ),
                Message::ToolResult(ToolResultMessage::text("toolu_01", "read", "c", false)),
                assistant(
                    &m,
                    vec![AssistantBlock::Text(TextContent {
                        text: "done".into(),
                        text_signature: Some(long_id.clone()),
                    })],
                    StopReason::Stop,
                ),
            ],
            ..Context::default()
        };
        let b = body(&m, &context, &StreamOptions::default());
        let input = b["input"].as_array().expect("input");
        // Same provider and API, other model: the fc_ item id is left out.
        assert_eq!(
            input[1],
            json!({"type": "function_call", "call_id": "call_1", "name": "read",
                   "arguments": "{\"path\":\"a.txt\"}"})
        );
        // Another provider's paired id is sanitized, and its result follows.
        assert_eq!(input[3]["id"], "fc_item_2");
        assert_eq!(input[3]["call_id"], "call_2");
        assert_eq!(input[4]["call_id"], "call_2");
        // Another API: thinking became text, a plain id stays as it is.
        assert_eq!(input[5]["type"], "message");
        assert_eq!(input[5]["content"][0]["text"], "claude thought");
        assert_eq!(input[6]["call_id"], "toolu_01");
        assert!(input[6].get("id").is_none());
        // An over-long message id is shortened with pi's hash.
        assert_eq!(input[8]["id"], format!("msg_{}", short_hash(&long_id)));
    }

    #[test]
    fn a_damaged_reasoning_item_is_reported() {
        let m = model("gpt-5");
        let context = Context {
            messages: vec![
                user("hi"),
                assistant(
                    &m,
                    vec![AssistantBlock::Thinking(ThinkingContent {
                        thinking: String::new(),
                        thinking_signature: Some("{not json".into()),
                        redacted: None,
                    })],
                    StopReason::Stop,
                ),
            ],
            ..Context::default()
        };
        let err =
            build_request(&m, &context, &StreamOptions::default(), "k").expect_err("damaged item");
        assert!(err.to_string().contains("openai/gpt-5"), "{err}");
    }
}
