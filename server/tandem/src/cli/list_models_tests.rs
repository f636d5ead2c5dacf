use std::sync::Arc;
use std::time::Duration;

use tandem_ai::registry::{AgentDir, LoadOptions};

use super::*;

fn registry(dir: &tempfile::TempDir, keys: &[(&str, &str)]) -> ModelRegistry {
    let env: Vec<(String, String)> = keys
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let options = LoadOptions {
        env: Arc::new(move |name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())),
        command_timeout: Duration::from_secs(5),
    };
    ModelRegistry::load_with(AgentDir::new(dir.path()), options)
}

fn listing(registry: &ModelRegistry, search: Option<&str>) -> (String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    list_models(registry, search, &mut out, &mut err).expect("writes");
    let text = |b: Vec<u8>| String::from_utf8(b).expect("utf8");
    (text(out), text(err))
}

#[test]
fn token_counts_read_like_pis() {
    let cases = [
        (512, "512"),
        (1_000, "1K"),
        (8_192, "8.2K"),
        (16_384, "16.4K"),
        (128_000, "128K"),
        (131_072, "131.1K"),
        (1_000_000, "1M"),
        (1_048_576, "1.0M"),
        (2_000_000, "2M"),
    ];
    for (count, text) in cases {
        assert_eq!(format_token_count(count), text, "{count}");
    }
}

#[test]
fn fuzzy_search_is_an_in_order_subsequence_per_token() {
    assert!(fuzzy_matches("sonnet", "anthropic claude-sonnet-4-6"));
    assert!(fuzzy_matches("ant snt46", "anthropic claude-sonnet-4-6"));
    assert!(fuzzy_matches("OPUS", "anthropic claude-opus-4-6"));
    assert!(!fuzzy_matches("tennos", "anthropic claude-sonnet-4-6"));
    // Letters and digits may be typed the other way round.
    assert!(fuzzy_matches("5gpt", "openai gpt-5"));
    assert!(!fuzzy_matches("5gpt!", "openai gpt-5"));
    assert!(fuzzy_matches("", "anything"));
}

#[test]
fn only_providers_with_keys_are_listed_sorted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let r = registry(&dir, &[("DEEPSEEK_API_KEY", "k")]);
    let (out, err) = listing(&r, None);
    assert_eq!(err, "");
    assert_eq!(
        out,
        "provider  model              context  max-out  thinking  images\n\
         deepseek  deepseek-chat      128K     8.2K     no        no    \n\
         deepseek  deepseek-reasoner  128K     65.5K    yes       no    \n"
    );
}

#[test]
fn search_filters_and_reports_no_match() {
    let dir = tempfile::tempdir().expect("temp dir");
    let r = registry(&dir, &[("DEEPSEEK_API_KEY", "k"), ("OPENAI_API_KEY", "k")]);
    let (out, _) = listing(&r, Some("reasoner"));
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.contains("deepseek-reasoner"), "{out}");
    let (out, _) = listing(&r, Some("nothing-like-this"));
    assert_eq!(out, "No models matching \"nothing-like-this\"\n");
}

#[test]
fn without_keys_nothing_is_listed_and_stderr_says_what_to_set() {
    let dir = tempfile::tempdir().expect("temp dir");
    let r = registry(&dir, &[]);
    let (out, err) = listing(&r, None);
    assert_eq!(out, "");
    assert!(err.starts_with("No models available"), "{err}");
    assert!(
        err.contains(&dir.path().join("models.json").display().to_string()),
        "{err}"
    );
}

#[test]
fn models_json_problems_are_reported_and_custom_providers_listed() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("models.json"),
        r#"{"providers": {"local": {"baseUrl": "http://localhost:8080/v1",
            "api": "openai-completions", "apiKey": "none",
            "models": [{"id": "qwen-local", "contextWindow": 32768}]}}}"#,
    )
    .expect("write");
    let r = registry(&dir, &[]);
    let (out, err) = listing(&r, Some("local"));
    assert_eq!(
        out,
        "provider  model       context  max-out  thinking  images\n\
         local     qwen-local  32.8K    16.4K    no        no    \n"
    );
    assert_eq!(err, "");
    std::fs::write(dir.path().join("models.json"), "{ not json").expect("write");
    let (_, err) = listing(&registry(&dir, &[]), None);
    assert!(
        err.starts_with("Warning: problems loading models.json or auth.json:\n  "),
        "{err}"
    );
}
