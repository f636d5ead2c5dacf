//! Model choice against real registries in temporary agent directories; keys come from an
//! injected environment, never the process's.

use std::sync::Arc;
use std::time::Duration;

use tandem_ai::registry::{AgentDir, LoadOptions};

use super::*;

fn registry(keys: &[(&str, &str)]) -> (tempfile::TempDir, ModelRegistry) {
    let dir = tempfile::tempdir().expect("temp dir");
    let env: Vec<(String, String)> = keys
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let options = LoadOptions {
        env: Arc::new(move |name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())),
        command_timeout: Duration::from_secs(5),
    };
    let registry = ModelRegistry::load_with(AgentDir::new(dir.path()), options);
    (dir, registry)
}

fn flag(
    registry: &ModelRegistry,
    provider: Option<&str>,
    model: &str,
) -> (String, Option<ThinkingLevel>) {
    let r = resolve_model_flag(registry, provider, model)
        .unwrap_or_else(|e| panic!("{provider:?} {model}: {e}"));
    assert_eq!(r.warning, None, "{model}");
    (format!("{}/{}", r.model.provider, r.model.id), r.thinking)
}

fn with_model(model: &str) -> SessionOptions {
    SessionOptions {
        model: Some(model.into()),
        ..SessionOptions::default()
    }
}

#[test]
fn model_flag_forms() {
    let (_dir, r) = registry(&[]);
    let name = |s: &str| s.to_string();
    assert_eq!(
        flag(&r, None, "openai/gpt-4o"),
        (name("openai/gpt-4o"), None)
    );
    assert_eq!(flag(&r, None, "gpt-4o"), (name("openai/gpt-4o"), None));
    assert_eq!(
        flag(&r, None, "OpenAI/GPT-4o"),
        (name("openai/gpt-4o"), None)
    );
    assert_eq!(
        flag(&r, Some("openai"), "gpt-4o"),
        (name("openai/gpt-4o"), None)
    );
    assert_eq!(
        flag(&r, Some("OPENAI"), "openai/gpt-4o"),
        (name("openai/gpt-4o"), None)
    );
    assert_eq!(
        flag(&r, None, "anthropic/claude-sonnet-4-6:high"),
        (
            name("anthropic/claude-sonnet-4-6"),
            Some(ThinkingLevel::High)
        )
    );
    // A fuzzy pattern: aliases beat dated ids, and the highest id wins across providers.
    assert_eq!(
        flag(&r, None, "sonnet:low"),
        (
            name("anthropic/claude-sonnet-4-6"),
            Some(ThinkingLevel::Low)
        )
    );
    // Ids with slashes: a known provider prefix is read as the provider first.
    assert_eq!(
        flag(&r, None, "openrouter/anthropic/claude-opus-4.6"),
        (name("openrouter/anthropic/claude-opus-4.6"), None)
    );
    assert_eq!(
        flag(&r, None, "openai/gpt-oss-120b"),
        (name("groq/openai/gpt-oss-120b"), None)
    );
    // The scripted demo model is not a model anyone gets without asking for it in models.json.
    assert!(resolve_model_flag(&r, None, "scripted/demo").is_err());
}

#[test]
fn unknown_ids_of_known_providers_become_custom_models() {
    let (_dir, r) = registry(&[]);
    let resolved = resolve_model_flag(&r, None, "openai/gpt-4p:high").expect("custom");
    assert_eq!(resolved.model.id, "gpt-4p");
    assert_eq!(resolved.model.name, "gpt-4p");
    assert_eq!(resolved.model.api, Api::OpenAiResponses);
    assert_eq!(resolved.thinking, Some(ThinkingLevel::High));
    assert_eq!(
        resolved.warning.as_deref(),
        Some(
            "Model \"gpt-4p\" not found for provider \"openai\". Using custom model id. \
             Known models close to it: openai/gpt-4o."
        )
    );
}

#[test]
fn unknown_models_and_providers_suggest_close_names() {
    let (_dir, r) = registry(&[]);
    let err = resolve_model_flag(&r, None, "claude-sonet-4-5").expect_err("unknown");
    assert_eq!(
        err.to_string(),
        "Model \"claude-sonet-4-5\" not found. Did you mean anthropic/claude-sonnet-4-5? \
         Use --list-models to see available models."
    );
    let err = resolve_model_flag(&r, None, "zzzz-unknown").expect_err("unknown");
    assert_eq!(
        err.to_string(),
        "Model \"zzzz-unknown\" not found. Use --list-models to see available models."
    );
    let err = resolve_model_flag(&r, Some("opnai"), "gpt-4o").expect_err("provider");
    let text = err.to_string();
    assert!(
        text.starts_with(
            "Unknown provider \"opnai\". Did you mean \"openai\"? \
             Known providers: anthropic, deepseek, google,"
        ),
        "{text}"
    );
    assert!(text.contains(", xai. Use --list-models"), "{text}");
    assert!(!text.contains("scripted"), "{text}");
}

#[test]
fn the_command_line_wins_and_thinking_is_clamped() {
    let (_dir, r) = registry(&[("ANTHROPIC_API_KEY", "k")]);
    let defaults = ModelDefaults {
        provider: Some("anthropic".into()),
        model: Some("claude-opus-4-6".into()),
        thinking_level: Some(ThinkingLevel::Minimal),
        enabled_models: None,
        ..ModelDefaults::default()
    };
    let choice = choose_model(&r, &with_model("openai/gpt-4o:high"), &defaults, None).expect("ok");
    assert_eq!(choice.model.id, "gpt-4o");
    assert_eq!(choice.source, ModelSource::CommandLine);
    // gpt-4o cannot reason.
    assert_eq!(choice.thinking_level, ThinkingLevel::Off);
    let mut run = with_model("claude-sonnet-4-6:high");
    run.thinking = Some(ThinkingLevel::Low);
    let choice = choose_model(&r, &run, &defaults, None).expect("ok");
    assert_eq!(choice.thinking_level, ThinkingLevel::Low);
    let choice =
        choose_model(&r, &with_model("claude-sonnet-4-6:xhigh"), &defaults, None).expect("ok");
    assert_eq!(choice.thinking_level, ThinkingLevel::High);
    let choice =
        choose_model(&r, &with_model("claude-opus-4-6:xhigh"), &defaults, None).expect("ok");
    assert_eq!(choice.thinking_level, ThinkingLevel::Xhigh);
}

#[test]
fn a_provider_alone_picks_its_default_model() {
    let (_dir, r) = registry(&[]);
    let run = SessionOptions {
        provider: Some("groq".into()),
        ..SessionOptions::default()
    };
    let choice = choose_model(&r, &run, &ModelDefaults::default(), None).expect("ok");
    assert_eq!(choice.model.id, "openai/gpt-oss-120b");
    assert_eq!(choice.source, ModelSource::CommandLine);
    let defaults = ModelDefaults {
        provider: Some("groq".into()),
        model: Some("llama-3.3-70b-versatile".into()),
        thinking_level: None,
        enabled_models: None,
        ..ModelDefaults::default()
    };
    let choice = choose_model(&r, &run, &defaults, None).expect("ok");
    assert_eq!(choice.model.id, "llama-3.3-70b-versatile");
    let run = SessionOptions {
        provider: Some("nope".into()),
        ..SessionOptions::default()
    };
    assert!(matches!(
        choose_model(&r, &run, &ModelDefaults::default(), None),
        Err(ModelError::UnknownProvider { .. })
    ));
}

#[test]
fn an_api_key_needs_a_model() {
    let (_dir, r) = registry(&[]);
    let run = SessionOptions {
        api_key: Some("sk".into()),
        ..SessionOptions::default()
    };
    let err = choose_model(&r, &run, &ModelDefaults::default(), None).expect_err("no model");
    assert_eq!(err, ModelError::ApiKeyWithoutModel);
    let mut run = with_model("openai/gpt-4o");
    run.api_key = Some("sk-run".into());
    let choice = choose_model(&r, &run, &ModelDefaults::default(), None).expect("ok");
    assert_eq!(
        require_key(&r, &choice.model, run.api_key.as_deref()),
        Ok(Some("sk-run".into()))
    );
}

#[test]
fn settings_defaults_then_first_available_then_an_error_saying_what_to_set() {
    let (_dir, r) = registry(&[("OPENAI_API_KEY", "k"), ("GROQ_API_KEY", "g")]);
    let none = ModelDefaults::default();
    let choice = choose_model(&r, &SessionOptions::default(), &none, None).expect("ok");
    assert_eq!(
        (choice.model.provider.as_str(), choice.model.id.as_str()),
        ("openai", "gpt-5.4")
    );
    assert_eq!(choice.source, ModelSource::FirstAvailable);
    assert_eq!(choice.thinking_level, DEFAULT_THINKING);
    assert!(choice.warnings.is_empty());

    // Settings win even without a key; the key check then names what to set.
    let defaults = ModelDefaults {
        provider: Some("anthropic".into()),
        model: Some("claude-sonnet-4-6".into()),
        thinking_level: Some(ThinkingLevel::High),
        enabled_models: None,
        ..ModelDefaults::default()
    };
    let choice = choose_model(&r, &SessionOptions::default(), &defaults, None).expect("ok");
    assert_eq!(choice.source, ModelSource::Settings);
    assert_eq!(choice.thinking_level, ThinkingLevel::High);
    let err = require_key(&r, &choice.model, None).expect_err("no anthropic key");
    let text = err.to_string();
    assert!(
        text.contains("ANTHROPIC_OAUTH_TOKEN, ANTHROPIC_API_KEY"),
        "{text}"
    );
    assert!(
        text.contains(&r.agent_dir().models_json().display().to_string()),
        "{text}"
    );

    // Nothing usable: an error naming what to set, never the scripted model.
    let (_dir, empty) = registry(&[]);
    let err = choose_model(&empty, &SessionOptions::default(), &none, None).expect_err("no model");
    let ModelError::NoModels(text) = &err else {
        panic!("expected NoModels, got {err:?}");
    };
    assert!(text.starts_with("No models available"), "{text}");
    for named in [
        "ANTHROPIC_API_KEY",
        "auth.json",
        "models.json",
        "--list-models",
    ] {
        assert!(text.contains(named), "{named}: {text}");
    }
}

#[test]
fn no_model_names_a_failing_key_command() {
    let (dir, _) = registry(&[]);
    std::fs::write(
        dir.path().join("models.json"),
        "{\"providers\": {\"ollama\": {\"baseUrl\": 3}}}",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("auth.json"),
        r#"{"groq": {"type": "api_key", "key": "!echo locked >&2; exit 1"}}"#,
    )
    .expect("write");
    let r = ModelRegistry::load(AgentDir::new(dir.path()));
    let err = choose_model(
        &r,
        &SessionOptions::default(),
        &ModelDefaults::default(),
        None,
    )
    .expect_err("no model");
    let text = err.to_string();
    assert!(r.load_errors()[0]
        .to_string()
        .contains("/providers/ollama/baseUrl"));
    assert!(text.contains("Unusable key:"), "{text}");
    assert!(
        text.contains("provider groq") && text.contains("locked"),
        "{text}"
    );
}

#[test]
fn a_resumed_session_keeps_its_model_and_thinking_when_it_can() {
    let (_dir, r) = registry(&[("ANTHROPIC_API_KEY", "k")]);
    let resumed = ResumedSession {
        model: Some(("anthropic".into(), "claude-haiku-4-5".into())),
        thinking_level: Some(ThinkingLevel::Low),
    };
    let defaults = ModelDefaults {
        thinking_level: Some(ThinkingLevel::High),
        ..ModelDefaults::default()
    };
    let choice =
        choose_model(&r, &SessionOptions::default(), &defaults, Some(&resumed)).expect("ok");
    assert_eq!(choice.model.id, "claude-haiku-4-5");
    assert_eq!(choice.source, ModelSource::Session);
    assert_eq!(choice.thinking_level, ThinkingLevel::Low);

    let gone = ResumedSession {
        model: Some(("openai".into(), "gpt-4o".into())),
        thinking_level: None,
    };
    let choice = choose_model(&r, &SessionOptions::default(), &defaults, Some(&gone)).expect("ok");
    assert_eq!(choice.source, ModelSource::FirstAvailable);
    assert_eq!(choice.model.id, "claude-opus-4-6");
    assert_eq!(choice.thinking_level, ThinkingLevel::High);
    assert_eq!(
        choice.warnings,
        vec!["Could not restore model openai/gpt-4o. Using anthropic/claude-opus-4-6"]
    );
}

#[test]
fn the_editors_model_is_for_sessions_without_their_own() {
    let (_dir, r) = registry(&[("ANTHROPIC_API_KEY", "k")]);
    let editor = SessionOptions {
        default_provider: Some("anthropic".into()),
        default_model: Some("claude-sonnet-4-5".into()),
        default_thinking: Some(ThinkingLevel::Minimal),
        ..SessionOptions::default()
    };
    let defaults = ModelDefaults {
        provider: Some("anthropic".into()),
        model: Some("claude-haiku-4-5".into()),
        thinking_level: Some(ThinkingLevel::High),
        enabled_models: None,
        ..ModelDefaults::default()
    };
    // A new session: the editor's over settings.json's.
    let choice = choose_model(&r, &editor, &defaults, None).expect("ok");
    assert_eq!(
        (
            choice.model.id.as_str(),
            choice.source,
            choice.thinking_level
        ),
        (
            "claude-sonnet-4-5",
            ModelSource::Editor,
            ThinkingLevel::Minimal
        )
    );
    // A reopened session keeps its own model and level.
    let resumed = ResumedSession {
        model: Some(("anthropic".into(), "claude-opus-4-6".into())),
        thinking_level: Some(ThinkingLevel::Low),
    };
    let choice = choose_model(&r, &editor, &defaults, Some(&resumed)).expect("ok");
    assert_eq!(
        (
            choice.model.id.as_str(),
            choice.source,
            choice.thinking_level
        ),
        ("claude-opus-4-6", ModelSource::Session, ThinkingLevel::Low)
    );
    // A model named on the command line wins over both.
    let pinned = SessionOptions {
        model: Some("claude-haiku-4-5".into()),
        ..editor.clone()
    };
    let choice = choose_model(&r, &pinned, &defaults, Some(&resumed)).expect("ok");
    assert_eq!(choice.source, ModelSource::CommandLine);
    assert_eq!(choice.model.id, "claude-haiku-4-5");
}

#[test]
fn a_new_session_starts_on_the_scopes_first_model() {
    let (_dir, r) = registry(&[("ANTHROPIC_API_KEY", "k"), ("OPENAI_API_KEY", "k")]);
    let defaults = ModelDefaults {
        provider: Some("anthropic".into()),
        model: Some("claude-opus-4-6".into()),
        thinking_level: None,
        enabled_models: Some(vec!["claude-sonnet-4-6".into()]),
        ..ModelDefaults::default()
    };
    // --models over enabledModels, its first match, with the pattern's thinking level.
    let run = SessionOptions {
        models: Some(vec!["openai/gpt-4o*:off,anthropic/*".into()]),
        ..SessionOptions::default()
    };
    let choice = choose_model(&r, &run, &defaults, None).expect("ok");
    assert_eq!(choice.model.id, "gpt-4o");
    assert_eq!(choice.source, ModelSource::CommandLine);
    assert_eq!(choice.thinking_level, ThinkingLevel::Off);
    // enabledModels when there is no --models, before defaultModel.
    let choice = choose_model(&r, &SessionOptions::default(), &defaults, None).expect("ok");
    assert_eq!(choice.model.id, "claude-sonnet-4-6");
    assert_eq!(choice.source, ModelSource::Settings);
    // --model wins; a resumed session keeps its model.
    let choice = choose_model(&r, &with_model("openai/gpt-4o"), &defaults, None).expect("ok");
    assert_eq!(choice.model.id, "gpt-4o");
    let resumed = ResumedSession {
        model: Some(("anthropic".into(), "claude-opus-4-6".into())),
        thinking_level: None,
    };
    let choice = choose_model(&r, &run, &defaults, Some(&resumed)).expect("ok");
    assert_eq!(choice.model.id, "claude-opus-4-6");
    // A pattern that matches nothing is a warning, and the next step decides.
    let nothing = SessionOptions {
        models: Some(vec!["no-such-model-anywhere".into()]),
        ..SessionOptions::default()
    };
    let choice = choose_model(&r, &nothing, &defaults, None).expect("ok");
    assert_eq!(choice.model.id, "claude-opus-4-6");
    assert_eq!(
        choice.warnings,
        ["No models match pattern \"no-such-model-anywhere\""]
    );
}

#[test]
fn max_is_clamped_down_to_the_highest_level_a_model_has() {
    let (_dir, r) = registry(&[("ANTHROPIC_API_KEY", "k"), ("OPENAI_API_KEY", "k")]);
    let pick = |model: &str| {
        choose_model(&r, &with_model(model), &ModelDefaults::default(), None)
            .expect("ok")
            .thinking_level
    };
    // Claude's adaptive thinking has a `max` effort; gpt-5.2 stops at xhigh; others at high.
    assert_eq!(pick("claude-opus-4-6:max"), ThinkingLevel::Max);
    assert_eq!(pick("claude-sonnet-4-6:max"), ThinkingLevel::Max);
    assert_eq!(pick("openai/gpt-5.2:max"), ThinkingLevel::Xhigh);
    assert_eq!(pick("claude-haiku-4-5:max"), ThinkingLevel::High);
    assert_eq!(pick("openai/gpt-4o:max"), ThinkingLevel::Off);
}

#[test]
fn model_thinking_levels_start_new_sessions_of_that_model_only() {
    let (_dir, r) = registry(&[("ANTHROPIC_API_KEY", "k")]);
    let defaults = ModelDefaults {
        thinking_level: Some(ThinkingLevel::Minimal),
        model_thinking_levels: [(
            "anthropic/claude-sonnet-4-6".to_string(),
            ThinkingLevel::High,
        )]
        .into_iter()
        .collect(),
        ..ModelDefaults::default()
    };
    let level = |run: &SessionOptions, resumed: Option<&ResumedSession>| {
        choose_model(&r, run, &defaults, resumed)
            .expect("ok")
            .thinking_level
    };
    // The entry of the chosen model, over defaultThinkingLevel.
    assert_eq!(
        level(&with_model("claude-sonnet-4-6"), None),
        ThinkingLevel::High
    );
    // Another model: defaultThinkingLevel.
    assert_eq!(
        level(&with_model("claude-haiku-4-5"), None),
        ThinkingLevel::Minimal
    );
    // --thinking and a `:level` suffix win.
    let mut run = with_model("claude-sonnet-4-6:low");
    assert_eq!(level(&run, None), ThinkingLevel::Low);
    run.thinking = Some(ThinkingLevel::Medium);
    assert_eq!(level(&run, None), ThinkingLevel::Medium);
    // A resumed session keeps its own level.
    let resumed = ResumedSession {
        model: Some(("anthropic".into(), "claude-sonnet-4-6".into())),
        thinking_level: Some(ThinkingLevel::Low),
    };
    assert_eq!(
        level(&SessionOptions::default(), Some(&resumed)),
        ThinkingLevel::Low
    );
}
