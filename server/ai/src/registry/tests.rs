//! Registry behaviour against real files in temporary agent directories. Environment variables
//! are injected through [`LoadOptions::env`], so tests never touch the process environment.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::model::{Api, InputKind, MaxTokensField, ModelCost};

struct Setup {
    dir: tempfile::TempDir,
    env: HashMap<String, String>,
}

impl Setup {
    fn new() -> Setup {
        Setup {
            dir: tempfile::tempdir().expect("temp dir"),
            env: HashMap::new(),
        }
    }

    fn models_json(self, text: &str) -> Setup {
        std::fs::write(self.dir.path().join("models.json"), text).expect("write models.json");
        self
    }

    fn auth_json(self, text: &str) -> Setup {
        std::fs::write(self.dir.path().join("auth.json"), text).expect("write auth.json");
        self
    }

    fn env(mut self, name: &str, value: &str) -> Setup {
        self.env.insert(name.to_string(), value.to_string());
        self
    }

    fn load(&self) -> ModelRegistry {
        let env = self.env.clone();
        let options = LoadOptions {
            env: Arc::new(move |name| env.get(name).cloned()),
            command_timeout: Duration::from_secs(5),
        };
        ModelRegistry::load_with(AgentDir::new(self.dir.path()), options)
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }
}

fn no_errors(r: &ModelRegistry) {
    assert!(r.load_errors().is_empty(), "{:?}", r.load_errors());
}

#[test]
fn without_files_the_registry_serves_the_catalog() {
    let r = Setup::new().load();
    no_errors(&r);
    assert_eq!(r.all().len(), catalog::builtin_models().len());
    assert!(r.find("openai", "gpt-4.1").is_some());
    assert!(r.available().is_empty());
}

#[test]
fn a_custom_provider_gets_pi_defaults() {
    let r = Setup::new()
        .models_json(
            r#"{"providers": {"ollama": {
                "baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "ollama",
                "models": [{"id": "llama3.1:8b"}, {"id": "qwen3", "reasoning": true, "input": ["text", "image"],
                            "contextWindow": 32768, "maxTokens": 4096, "api": "anthropic-messages",
                            "baseUrl": "http://other/v1",
                            "cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 0}}]
            }}}"#,
        )
        .load();
    no_errors(&r);
    let m = r.find("ollama", "llama3.1:8b").expect("custom model");
    assert_eq!(m.name, "llama3.1:8b");
    assert_eq!(m.api, Api::OpenAiCompletions);
    assert_eq!(m.base_url, "http://localhost:11434/v1");
    assert!(!m.reasoning);
    assert_eq!(m.input, vec![InputKind::Text]);
    assert_eq!(m.cost, ModelCost::default());
    assert_eq!((m.context_window, m.max_tokens), (128_000, 16_384));
    assert!(m.headers.is_none() && m.compat.is_none());

    let q = r.find("ollama", "qwen3").expect("second model");
    assert_eq!(q.api, Api::AnthropicMessages);
    assert_eq!(q.base_url, "http://other/v1");
    assert!(q.reasoning && q.accepts_images());
    assert_eq!(
        (q.context_window, q.max_tokens, q.cost.output),
        (32_768, 4_096, 2.0)
    );
    assert_eq!(r.all().len(), catalog::builtin_models().len() + 2);
    assert_eq!(r.require_api_key("ollama", None).unwrap(), "ollama");
}

#[test]
fn a_provider_entry_changes_built_in_models_and_overrides_change_one() {
    let r = Setup::new()
        .env("ORG_HEADER", "org-42")
        .models_json(
            r#"{"providers": {"openai": {
                "baseUrl": "https://proxy.example/v1",
                "headers": {"X-Org": "ORG_HEADER", "X-Cmd": "!echo from-cmd"},
                "modelOverrides": {"gpt-4.1": {"name": "Cheap 4.1", "cost": {"input": 0.1},
                                                "maxTokens": 1000, "headers": {"X-Model": "yes"},
                                                "compat": {"maxTokensField": "max_tokens"}}}
            }}}"#,
        )
        .load();
    no_errors(&r);
    let builtin = catalog::find("openai", "gpt-4.1").unwrap();
    let m = r.find("openai", "gpt-4.1").unwrap();
    assert_eq!(m.base_url, "https://proxy.example/v1");
    assert_eq!(m.name, "Cheap 4.1");
    assert_eq!(m.cost.input, 0.1);
    assert_eq!(
        m.cost.output, builtin.cost.output,
        "unlisted prices are kept"
    );
    assert_eq!(m.max_tokens, 1000);
    assert_eq!(m.context_window, builtin.context_window);
    let headers = m.headers.as_ref().unwrap();
    assert_eq!(headers["X-Org"], "org-42");
    assert_eq!(headers["X-Cmd"], "from-cmd");
    assert_eq!(headers["X-Model"], "yes");
    assert_eq!(
        m.compat.as_ref().unwrap().max_tokens_field,
        Some(MaxTokensField::MaxTokens)
    );

    let other = r.find("openai", "gpt-4o").unwrap();
    assert_eq!(other.base_url, "https://proxy.example/v1");
    assert!(!other.headers.as_ref().unwrap().contains_key("X-Model"));
    assert_eq!(
        other.max_tokens,
        catalog::find("openai", "gpt-4o").unwrap().max_tokens
    );
    assert_eq!(
        r.find("anthropic", "claude-opus-4-6"),
        catalog::find("anthropic", "claude-opus-4-6")
    );
}

#[test]
fn compat_merges_with_the_built_in_and_custom_models_replace_built_ins() {
    let r = Setup::new()
        .models_json(
            r#"{"providers": {"mistral": {
                "compat": {"requiresToolResultName": false},
                "baseUrl": "https://eu.mistral.example/v1", "apiKey": "k",
                "models": [{"id": "mistral-large-latest", "name": "Mine", "api": "openai-completions"}]
            }}}"#,
        )
        .load();
    no_errors(&r);
    let small = r.find("mistral", "mistral-small-latest").unwrap();
    let compat = small.compat.as_ref().unwrap();
    assert_eq!(
        compat.requires_tool_result_name,
        Some(false),
        "the file wins"
    );
    assert_eq!(
        compat.supports_developer_role,
        Some(false),
        "the catalog's other fields stay"
    );
    let large: Vec<_> = r
        .all()
        .iter()
        .filter(|m| m.id == "mistral-large-latest")
        .collect();
    assert_eq!(large.len(), 1);
    assert_eq!(large[0].name, "Mine");
    assert_eq!(large[0].context_window, 128_000);
}

#[test]
fn a_custom_model_listed_twice_is_the_later_definition_in_the_first_place() {
    let r = Setup::new()
        .models_json(
            r#"{"providers": {"local": {"baseUrl": "http://127.0.0.1:8080/v1",
                "api": "openai-completions", "apiKey": "k",
                "models": [{"id": "a", "name": "first"}, {"id": "b"}, {"id": "a", "name": "second"}]}}}"#,
        )
        .load();
    no_errors(&r);
    let local: Vec<(&str, &str)> = r
        .all()
        .iter()
        .filter(|m| m.provider == "local")
        .map(|m| (m.id.as_str(), m.name.as_str()))
        .collect();
    assert_eq!(local, [("a", "second"), ("b", "b")]);
}

#[test]
fn auth_header_sends_the_resolved_key_as_a_bearer_token() {
    let r = Setup::new()
        .env("LOCAL_KEY", "sk-local")
        .models_json(
            r#"{"providers": {"local": {"baseUrl": "http://127.0.0.1:8080/v1", "api": "openai-completions",
                "apiKey": "LOCAL_KEY", "authHeader": true, "headers": {"X-A": "a"},
                "models": [{"id": "m", "headers": {"X-A": "model-wins"}}]}}}"#,
        )
        .load();
    no_errors(&r);
    let headers = r.find("local", "m").unwrap().headers.clone().unwrap();
    assert_eq!(headers["Authorization"], "Bearer sk-local");
    assert_eq!(headers["X-A"], "model-wins");
}

#[test]
fn invalid_models_json_is_reported_with_file_and_path_and_built_ins_remain() {
    let s = Setup::new().models_json(
        r#"{"providers": {
            "ollama": {"baseUrl": "http://x", "api": "openai-completions", "apiKey": "k",
                       "models": [{"id": "a", "contextWindow": "big"}, {"name": "no id", "input": ["text", "audio"]}]},
            "openai": {"modelOverrides": {"gpt-4.1": {"compat": {"maxTokensField": "tokens"}}}},
            "broken": {"models": [{"id": "b"}]}
        }}"#,
    );
    let r = s.load();
    let file = s.path("models.json");
    let shown: Vec<String> = r.load_errors().iter().map(|e| e.to_string()).collect();
    let expect = [
        format!("{file}: at /providers/ollama/models/0/contextWindow: expected a positive whole number, found a string"),
        format!("{file}: at /providers/ollama/models/1/id: is missing"),
        format!("{file}: at /providers/ollama/models/1/input/1: expected \"text\" or \"image\", found a string"),
        format!("{file}: at /providers/broken: \"baseUrl\" is required when the provider defines \"models\""),
    ];
    for line in &expect {
        assert!(shown.contains(line), "missing {line:?} in {shown:#?}");
    }
    assert!(
        shown.iter().any(|l| l.starts_with(&format!("{file}: at /providers/openai/modelOverrides/gpt-4.1/compat/maxTokensField: unknown variant"))),
        "{shown:#?}"
    );
    assert!(
        shown
            .iter()
            .any(|l| l.contains("/providers/broken") && l.contains("\"api\"")),
        "{shown:#?}"
    );
    assert_eq!(
        r.all(),
        catalog::builtin_models(),
        "nothing of the broken file is applied"
    );
}

#[test]
fn models_json_that_is_not_json_names_the_file() {
    let s = Setup::new().models_json("{\"providers\": {\"x\" 1}}");
    let r = s.load();
    let text = r.load_errors()[0].to_string();
    assert!(
        text.starts_with(&format!("{}: is not valid JSON", s.path("models.json"))),
        "{text}"
    );
    assert!(text.contains("line 1"), "{text}");
    assert_eq!(r.all().len(), catalog::builtin_models().len());
}

#[test]
fn a_failing_header_command_is_reported_and_the_header_left_out() {
    let r = Setup::new()
        .models_json(
            r#"{"providers": {"groq": {"headers": {"X-Bad": "!exit 3", "X-Ok": "fine"}}}}"#,
        )
        .load();
    let errors = r.load_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].pointer.as_deref(),
        Some("/providers/groq/headers/X-Bad")
    );
    assert!(errors[0].message.contains("exit code 3"), "{}", errors[0]);
    let headers = r
        .find("groq", "llama-3.3-70b-versatile")
        .unwrap()
        .headers
        .clone()
        .unwrap();
    assert_eq!(headers.len(), 1);
    assert_eq!(headers["X-Ok"], "fine");
}

const ALL_SOURCES_AUTH: &str = r#"{"groq": {"type": "api_key", "key": "from-auth"}}"#;
const ALL_SOURCES_MODELS: &str = r#"{"providers": {"groq": {"apiKey": "from-models-json"}}}"#;

#[test]
fn the_runtime_key_wins_over_everything() {
    let r = Setup::new()
        .auth_json(ALL_SOURCES_AUTH)
        .models_json(ALL_SOURCES_MODELS)
        .env("GROQ_API_KEY", "from-env")
        .load();
    no_errors(&r);
    assert_eq!(
        r.resolve_api_key("groq", Some("from-flag"))
            .unwrap()
            .as_deref(),
        Some("from-flag")
    );
}

#[test]
fn auth_json_wins_over_the_environment() {
    let r = Setup::new()
        .auth_json(ALL_SOURCES_AUTH)
        .models_json(ALL_SOURCES_MODELS)
        .env("GROQ_API_KEY", "from-env")
        .load();
    assert_eq!(
        r.resolve_api_key("groq", None).unwrap().as_deref(),
        Some("from-auth")
    );
    assert_eq!(
        r.resolve_api_key("groq", Some("")).unwrap().as_deref(),
        Some("from-auth")
    );
}

#[test]
fn the_environment_wins_over_models_json() {
    let r = Setup::new()
        .models_json(ALL_SOURCES_MODELS)
        .env("GROQ_API_KEY", "from-env")
        .load();
    assert_eq!(
        r.resolve_api_key("groq", None).unwrap().as_deref(),
        Some("from-env")
    );
    let only_json = Setup::new().models_json(ALL_SOURCES_MODELS).load();
    assert_eq!(
        only_json.resolve_api_key("groq", None).unwrap().as_deref(),
        Some("from-models-json")
    );
    assert!(only_json.has_key("groq"));
    assert!(only_json.available().iter().all(|m| m.provider == "groq"));
}

#[test]
fn key_values_may_be_commands_variable_names_or_literals() {
    let r = Setup::new()
        .env("MY_SECRET_VAR", "from-var")
        .auth_json(
            r#"{"openai": {"type": "api_key", "key": "!printf '  sk-cmd \\n'"},
                "xai": {"type": "api_key", "key": "MY_SECRET_VAR"},
                "groq": {"type": "api_key", "key": "gsk-literal=="}}"#,
        )
        .load();
    no_errors(&r);
    assert_eq!(r.require_api_key("openai", None).unwrap(), "sk-cmd");
    assert_eq!(r.require_api_key("xai", None).unwrap(), "from-var");
    assert_eq!(r.require_api_key("groq", None).unwrap(), "gsk-literal==");
}

#[test]
fn a_failing_key_command_names_provider_source_and_status() {
    let s = Setup::new().auth_json(
        r#"{"openai": {"type": "api_key", "key": "!printf 'sk-%s' leak; echo 'not signed in' >&2; exit 1"}}"#,
    );
    let err = s.load().resolve_api_key("openai", None).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("provider openai"), "{text}");
    assert!(text.contains(&s.path("auth.json")), "{text}");
    assert!(
        text.contains("exit code 1") && text.contains("not signed in"),
        "{text}"
    );
    assert!(!text.contains("sk-leak"), "{text}");
}

#[test]
fn a_slow_key_command_times_out() {
    let s = Setup::new().models_json(r#"{"providers": {"groq": {"apiKey": "!sleep 5"}}}"#);
    let env = s.env.clone();
    let options = LoadOptions {
        env: Arc::new(move |name| env.get(name).cloned()),
        command_timeout: Duration::from_millis(200),
    };
    let r = ModelRegistry::load_with(AgentDir::new(s.dir.path()), options);
    let err = r.resolve_api_key("groq", None).unwrap_err();
    assert!(
        matches!(
            &err,
            KeyError::Command {
                source: CommandError::TimedOut { .. },
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("models.json"), "{err}");
}

#[test]
fn a_missing_key_names_the_variable_and_this_models_json() {
    let s = Setup::new();
    let err = s.load().require_api_key("mistral", None).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("MISTRAL_API_KEY"), "{text}");
    assert!(text.contains(&s.path("models.json")), "{text}");
    assert_eq!(err.provider(), "mistral");
}

#[test]
fn oauth_logins_are_used_until_they_expire() {
    let r = Setup::new()
        .auth_json(
            r#"{"anthropic": {"type": "oauth", "refresh": "r", "access": "sk-ant-oat-live", "expires": 99999999999999},
                "openai": {"type": "oauth", "refresh": "r", "access": "old", "expires": 1000}}"#,
        )
        .load();
    assert_eq!(
        r.require_api_key("anthropic", None).unwrap(),
        "sk-ant-oat-live"
    );
    let err = r.resolve_api_key("openai", None).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, KeyError::OAuthExpired { .. }), "{text}");
    assert!(
        text.contains("OPENAI_API_KEY") && text.contains("/login"),
        "{text}"
    );
    assert!(!text.contains("old"), "{text}");
}

#[test]
fn a_failing_key_command_makes_its_provider_unavailable_and_says_why() {
    let r = Setup::new()
        .auth_json(
            r#"{"groq": {"type": "api_key", "key": "!echo 'vault is locked' >&2; exit 2"},
                "xai": {"type": "api_key", "key": "xai-literal-key-123"}}"#,
        )
        .load();
    no_errors(&r);
    assert!(!r.has_key("groq"));
    assert!(r.has_key("xai"));
    assert!(r.available().iter().all(|m| m.provider == "xai"));
    let problems = r.key_problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    let text = problems[0].to_string();
    assert!(text.contains("provider groq"), "{text}");
    assert!(text.contains("vault is locked"), "{text}");
}
