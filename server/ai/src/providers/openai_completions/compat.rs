//! Which dialect of Chat Completions a server speaks.
//!
//! Dozens of servers copy OpenAI's Chat Completions API, each with small differences: some reject
//! `store` or the `developer` role, some want `max_tokens` instead of `max_completion_tokens`,
//! some switch reasoning on with their own field. A model's `compat` object (models.json) may
//! state any of these; whatever it leaves out is guessed here from the provider name and base
//! URL, so well-known services and local servers work without configuration. Resolving once into
//! a struct with no optional fields keeps the request builder free of guessing.

use std::collections::BTreeMap;

use crate::model::{MaxTokensField, Model, ProviderRouting, ThinkingFormat};

/// How reasoning is requested from the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningFormat {
    /// Top-level `reasoning_effort` (OpenAI and most compatible servers).
    Effort,
    /// OpenRouter's unified `reasoning: {effort}` object.
    OpenRouter,
    /// Top-level `enable_thinking` (Z.ai).
    Zai,
    /// Top-level `enable_thinking` (Qwen).
    Qwen,
    /// `chat_template_kwargs.enable_thinking` (Qwen chat templates on vLLM/SGLang).
    QwenChatTemplate,
}

impl From<ThinkingFormat> for ReasoningFormat {
    fn from(format: ThinkingFormat) -> Self {
        match format {
            ThinkingFormat::OpenAi => ReasoningFormat::Effort,
            ThinkingFormat::Zai => ReasoningFormat::Zai,
            ThinkingFormat::Qwen => ReasoningFormat::Qwen,
            ThinkingFormat::QwenChatTemplate => ReasoningFormat::QwenChatTemplate,
        }
    }
}

/// The rules tool-call ids must follow when history is replayed to this server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolIdStyle {
    /// `[A-Za-z0-9_-]`, at most 40 characters (OpenAI's limit).
    OpenAi,
    /// Exactly 9 characters `[A-Za-z0-9]`, as Mistral requires.
    Mistral,
}

/// Every compat setting with a concrete value: explicit `model.compat` fields, the rest detected.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedCompat {
    /// Send `store: false`.
    pub supports_store: bool,
    /// A reasoning model's system prompt goes in a `developer` message (else `system`).
    pub supports_developer_role: bool,
    /// Send an effort when reasoning is requested.
    pub supports_reasoning_effort: bool,
    /// Thinking level name → the value the server expects.
    pub reasoning_effort_map: BTreeMap<String, String>,
    /// Send `stream_options.include_usage`.
    pub supports_usage_in_streaming: bool,
    /// The field carrying the output limit.
    pub max_tokens_field: MaxTokensField,
    /// Tool results carry the tool's `name`.
    pub requires_tool_result_name: bool,
    /// A user message right after tool results needs a bridging assistant message.
    pub requires_assistant_after_tool_result: bool,
    /// Replayed reasoning goes back as plain assistant text.
    pub requires_thinking_as_text: bool,
    /// How reasoning is switched on.
    pub reasoning_format: ReasoningFormat,
    /// Tool definitions carry `strict: false`.
    pub supports_strict_mode: bool,
    /// OpenRouter upstream routing, sent when the base URL is OpenRouter's.
    pub open_router_routing: ProviderRouting,
    /// Tool-call id rules.
    pub tool_id_style: ToolIdStyle,
}

/// What the provider name and base URL say about the server.
struct Server {
    zai: bool,
    xai: bool,
    groq: bool,
    chutes: bool,
    open_router: bool,
    mistral: bool,
    local: bool,
    non_standard: bool,
}

impl Server {
    fn detect(model: &Model) -> Server {
        let provider = model.provider.to_ascii_lowercase();
        let url = model.base_url.to_ascii_lowercase();
        let is = |name: &str| provider == name;
        let at = |fragment: &str| url.contains(fragment);
        let (port, on_localhost) = port_and_locality(&model.base_url);

        let zai = is("zai") || at("api.z.ai");
        let xai = is("xai") || at("api.x.ai");
        let chutes = at("chutes.ai");
        let mistral = is("mistral") || at("mistral.ai");
        let ollama = is("ollama") || port == Some(11434);
        let llama_cpp = is("llama.cpp") || is("llamacpp") || (port == Some(8080) && on_localhost);
        let vllm = is("vllm") || port == Some(8000);
        let local = ollama || llama_cpp || vllm;
        let non_standard = is("cerebras")
            || at("cerebras.ai")
            || xai
            || chutes
            || is("deepseek")
            || at("deepseek.com")
            || zai
            || is("opencode")
            || at("opencode.ai")
            || mistral
            || local;
        Server {
            zai,
            xai,
            groq: is("groq") || at("groq.com"),
            chutes,
            open_router: is("openrouter") || at("openrouter.ai"),
            mistral,
            local,
            non_standard,
        }
    }
}

/// The explicit port of `base_url` and whether its host is this machine.
fn port_and_locality(base_url: &str) -> (Option<u16>, bool) {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return (None, false);
    };
    let local = matches!(
        url.host_str(),
        Some("localhost" | "127.0.0.1" | "0.0.0.0" | "[::1]" | "::1")
    );
    (url.port(), local)
}

/// The settings guessed from the provider and base URL alone.
fn detect(model: &Model) -> ResolvedCompat {
    let server = Server::detect(model);
    let mut reasoning_effort_map = BTreeMap::new();
    if server.groq && model.id == "qwen/qwen3-32b" {
        // Groq's Qwen 3 knows only the effort "default".
        for level in ["minimal", "low", "medium", "high", "xhigh"] {
            reasoning_effort_map.insert(level.to_string(), "default".to_string());
        }
    }
    let reasoning_format = if server.zai {
        ReasoningFormat::Zai
    } else if server.open_router {
        ReasoningFormat::OpenRouter
    } else {
        ReasoningFormat::Effort
    };
    ResolvedCompat {
        supports_store: !server.non_standard,
        supports_developer_role: !server.non_standard,
        supports_reasoning_effort: !server.xai && !server.zai && !server.mistral && !server.local,
        reasoning_effort_map,
        supports_usage_in_streaming: true,
        max_tokens_field: if server.chutes || server.mistral || server.local {
            MaxTokensField::MaxTokens
        } else {
            MaxTokensField::MaxCompletionTokens
        },
        requires_tool_result_name: server.mistral,
        requires_assistant_after_tool_result: false,
        requires_thinking_as_text: server.mistral,
        reasoning_format,
        supports_strict_mode: true,
        open_router_routing: ProviderRouting::default(),
        tool_id_style: if server.mistral {
            ToolIdStyle::Mistral
        } else {
            ToolIdStyle::OpenAi
        },
    }
}

/// The compat settings for `model`: its explicit `compat` fields, the rest auto-detected.
pub fn resolve_compat(model: &Model) -> ResolvedCompat {
    let detected = detect(model);
    let Some(explicit) = &model.compat else {
        return detected;
    };
    ResolvedCompat {
        supports_store: explicit.supports_store.unwrap_or(detected.supports_store),
        supports_developer_role: explicit
            .supports_developer_role
            .unwrap_or(detected.supports_developer_role),
        supports_reasoning_effort: explicit
            .supports_reasoning_effort
            .unwrap_or(detected.supports_reasoning_effort),
        reasoning_effort_map: explicit
            .reasoning_effort_map
            .clone()
            .unwrap_or(detected.reasoning_effort_map),
        supports_usage_in_streaming: explicit
            .supports_usage_in_streaming
            .unwrap_or(detected.supports_usage_in_streaming),
        max_tokens_field: explicit
            .max_tokens_field
            .unwrap_or(detected.max_tokens_field),
        requires_tool_result_name: explicit
            .requires_tool_result_name
            .unwrap_or(detected.requires_tool_result_name),
        requires_assistant_after_tool_result: explicit
            .requires_assistant_after_tool_result
            .unwrap_or(detected.requires_assistant_after_tool_result),
        requires_thinking_as_text: explicit
            .requires_thinking_as_text
            .unwrap_or(detected.requires_thinking_as_text),
        reasoning_format: explicit
            .thinking_format
            .map(ReasoningFormat::from)
            .unwrap_or(detected.reasoning_format),
        supports_strict_mode: explicit
            .supports_strict_mode
            .unwrap_or(detected.supports_strict_mode),
        open_router_routing: explicit.open_router_routing.clone().unwrap_or_default(),
        tool_id_style: detected.tool_id_style,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Api, InputKind, ModelCost, OpenAiCompat};
    use MaxTokensField::{MaxCompletionTokens as Mct, MaxTokens as Mt};

    fn model(provider: &str, base_url: &str, id: &str) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: Api::OpenAiCompletions,
            provider: provider.into(),
            base_url: base_url.into(),
            reasoning: true,
            input: vec![InputKind::Text],
            cost: ModelCost::default(),
            context_window: 128_000,
            max_tokens: 16_000,
            headers: None,
            compat: None,
        }
    }

    /// (provider, base URL, store, developer role, effort, max-tokens field, format, tool
    /// result name, thinking as text, id style)
    type Row = (
        &'static str,
        &'static str,
        bool,
        bool,
        bool,
        MaxTokensField,
        ReasoningFormat,
        bool,
        bool,
        ToolIdStyle,
    );

    #[test]
    fn detection_by_provider_and_base_url() {
        use ReasoningFormat::{Effort, OpenRouter, Zai};
        use ToolIdStyle::{Mistral, OpenAi};
        #[rustfmt::skip]
        let rows: &[Row] = &[
            ("openai", "https://api.openai.com/v1", true, true, true, Mct, Effort, false, false, OpenAi),
            ("custom", "https://example.com/v1", true, true, true, Mct, Effort, false, false, OpenAi),
            ("cerebras", "https://api.cerebras.ai/v1", false, false, true, Mct, Effort, false, false, OpenAi),
            ("x", "https://api.cerebras.ai/v1", false, false, true, Mct, Effort, false, false, OpenAi),
            ("xai", "https://api.x.ai/v1", false, false, false, Mct, Effort, false, false, OpenAi),
            ("x", "https://api.x.ai/v1", false, false, false, Mct, Effort, false, false, OpenAi),
            ("deepseek", "https://api.deepseek.com", false, false, true, Mct, Effort, false, false, OpenAi),
            ("x", "https://api.deepseek.com/v1", false, false, true, Mct, Effort, false, false, OpenAi),
            ("x", "https://llm.chutes.ai/v1", false, false, true, Mt, Effort, false, false, OpenAi),
            ("zai", "https://example.com", false, false, false, Mct, Zai, false, false, OpenAi),
            ("x", "https://api.z.ai/api/paas/v4", false, false, false, Mct, Zai, false, false, OpenAi),
            ("opencode", "https://example.com", false, false, true, Mct, Effort, false, false, OpenAi),
            ("x", "https://opencode.ai/zen/v1", false, false, true, Mct, Effort, false, false, OpenAi),
            ("groq", "https://api.groq.com/openai/v1", true, true, true, Mct, Effort, false, false, OpenAi),
            ("openrouter", "https://example.com", true, true, true, Mct, OpenRouter, false, false, OpenAi),
            ("x", "https://openrouter.ai/api/v1", true, true, true, Mct, OpenRouter, false, false, OpenAi),
            ("mistral", "https://example.com", false, false, false, Mt, Effort, true, true, Mistral),
            ("x", "https://api.mistral.ai/v1", false, false, false, Mt, Effort, true, true, Mistral),
            ("ollama", "http://gpu-box:9999/v1", false, false, false, Mt, Effort, false, false, OpenAi),
            ("x", "http://localhost:11434/v1", false, false, false, Mt, Effort, false, false, OpenAi),
            ("x", "http://10.0.0.5:11434/v1", false, false, false, Mt, Effort, false, false, OpenAi),
            ("llama.cpp", "http://gpu-box:9999/v1", false, false, false, Mt, Effort, false, false, OpenAi),
            ("llamacpp", "http://gpu-box:9999/v1", false, false, false, Mt, Effort, false, false, OpenAi),
            ("x", "http://localhost:8080/v1", false, false, false, Mt, Effort, false, false, OpenAi),
            ("x", "http://127.0.0.1:8080/v1", false, false, false, Mt, Effort, false, false, OpenAi),
            ("x", "https://proxy.example.com:8080/v1", true, true, true, Mct, Effort, false, false, OpenAi),
            ("vllm", "http://gpu-box:9999/v1", false, false, false, Mt, Effort, false, false, OpenAi),
            ("x", "http://gpu-box:8000/v1", false, false, false, Mt, Effort, false, false, OpenAi),
            ("x", "not a url", true, true, true, Mct, Effort, false, false, OpenAi),
        ];
        for row in rows {
            let (provider, url, ..) = *row;
            let c = resolve_compat(&model(provider, url, "m"));
            let got = (
                provider,
                url,
                c.supports_store,
                c.supports_developer_role,
                c.supports_reasoning_effort,
                c.max_tokens_field,
                c.reasoning_format,
                c.requires_tool_result_name,
                c.requires_thinking_as_text,
                c.tool_id_style,
            );
            assert_eq!(got, *row, "detection for {provider} at {url}");
            assert!(c.supports_usage_in_streaming, "{provider} {url}");
            assert!(c.supports_strict_mode, "{provider} {url}");
            assert!(!c.requires_assistant_after_tool_result, "{provider} {url}");
        }
    }

    #[test]
    fn groq_qwen3_maps_every_effort_to_default() {
        let c = resolve_compat(&model(
            "groq",
            "https://api.groq.com/openai/v1",
            "qwen/qwen3-32b",
        ));
        assert_eq!(
            c.reasoning_effort_map.get("high").map(String::as_str),
            Some("default")
        );
        assert_eq!(c.reasoning_effort_map.len(), 5);
        let other = resolve_compat(&model("groq", "https://api.groq.com/openai/v1", "llama"));
        assert!(other.reasoning_effort_map.is_empty());
    }

    #[test]
    fn explicit_compat_fields_win_over_detection() {
        let mut m = model("ollama", "http://localhost:11434/v1", "qwen3");
        m.compat = Some(OpenAiCompat {
            supports_store: Some(true),
            supports_developer_role: Some(true),
            supports_reasoning_effort: Some(true),
            reasoning_effort_map: Some(BTreeMap::from([("high".into(), "max".into())])),
            supports_usage_in_streaming: Some(false),
            max_tokens_field: Some(Mct),
            requires_tool_result_name: Some(true),
            requires_assistant_after_tool_result: Some(true),
            requires_thinking_as_text: Some(true),
            thinking_format: Some(ThinkingFormat::QwenChatTemplate),
            supports_strict_mode: Some(false),
            open_router_routing: Some(ProviderRouting {
                only: Some(vec!["a".into()]),
                order: None,
            }),
        });
        let c = resolve_compat(&m);
        assert!(c.supports_store && c.supports_developer_role && c.supports_reasoning_effort);
        assert_eq!(
            c.reasoning_effort_map.get("high").map(String::as_str),
            Some("max")
        );
        assert!(!c.supports_usage_in_streaming);
        assert_eq!(c.max_tokens_field, Mct);
        assert!(c.requires_tool_result_name);
        assert!(c.requires_assistant_after_tool_result);
        assert!(c.requires_thinking_as_text);
        assert_eq!(c.reasoning_format, ReasoningFormat::QwenChatTemplate);
        assert!(!c.supports_strict_mode);
        assert_eq!(c.open_router_routing.only, Some(vec!["a".to_string()]));

        // A partial compat object overrides only what it names.
        let mut m = model("mistral", "https://api.mistral.ai/v1", "devstral");
        m.compat = Some(OpenAiCompat {
            max_tokens_field: Some(Mct),
            thinking_format: Some(ThinkingFormat::OpenAi),
            ..OpenAiCompat::default()
        });
        let c = resolve_compat(&m);
        assert_eq!(c.max_tokens_field, Mct);
        assert!(!c.supports_store && c.requires_tool_result_name);
        assert_eq!(c.tool_id_style, ToolIdStyle::Mistral);

        let mut m = model("openrouter", "https://openrouter.ai/api/v1", "x");
        m.compat = Some(OpenAiCompat {
            thinking_format: Some(ThinkingFormat::OpenAi),
            ..OpenAiCompat::default()
        });
        assert_eq!(resolve_compat(&m).reasoning_format, ReasoningFormat::Effort);
    }
}
