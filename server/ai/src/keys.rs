//! Which environment variables hold each provider's API key (pi's table), and the message for a
//! missing key.

use std::path::Path;

/// Environment variables for `provider`'s key, in priority order.
pub fn env_var_names(provider: &str) -> &'static [&'static str] {
    match provider {
        "openai" => &["OPENAI_API_KEY"],
        "anthropic" => &["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"],
        "google" => &["GEMINI_API_KEY"],
        "azure-openai-responses" => &["AZURE_OPENAI_API_KEY"],
        "groq" => &["GROQ_API_KEY"],
        "cerebras" => &["CEREBRAS_API_KEY"],
        "xai" => &["XAI_API_KEY"],
        "openrouter" => &["OPENROUTER_API_KEY"],
        "mistral" => &["MISTRAL_API_KEY"],
        "deepseek" => &["DEEPSEEK_API_KEY"],
        "zai" => &["ZAI_API_KEY"],
        "huggingface" => &["HF_TOKEN"],
        "github-copilot" => &["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"],
        _ => &[],
    }
}

/// The first non-empty key among `provider`'s environment variables.
pub fn env_api_key(provider: &str) -> Option<String> {
    env_var_names(provider)
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|v| !v.trim().is_empty())
}

/// What to tell a user whose provider has no key: the variable to set and where models.json
/// is (described generically; prefer [`missing_key_message_at`] when the path is known).
pub fn missing_key_message(provider: &str) -> String {
    compose_missing(
        provider,
        "models.json (~/.pi/agent/models.json, or $PI_CODING_AGENT_DIR/models.json)",
    )
}

/// What to tell a user whose provider has no key, naming the models.json actually in use.
pub fn missing_key_message_at(provider: &str, models_json: &Path) -> String {
    compose_missing(provider, &models_json.display().to_string())
}

fn compose_missing(provider: &str, models_json: &str) -> String {
    let in_json = format!("add \"apiKey\" for \"{provider}\" under \"providers\" in {models_json}");
    match env_var_names(provider) {
        [] => format!(
            "No API key for provider: {provider}. Pass --api-key, {in_json}, or store a key for it in auth.json."
        ),
        [only] => format!(
            "No API key for provider: {provider}. Set the environment variable {only}, or {in_json}."
        ),
        names => format!(
            "No API key for provider: {provider}. Set one of the environment variables {}, or {in_json}.",
            names.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_variable_and_the_file() {
        let text = missing_key_message_at("groq", Path::new("/cfg/models.json"));
        assert!(text.contains("GROQ_API_KEY"), "{text}");
        assert!(text.contains("/cfg/models.json"), "{text}");
        let text = missing_key_message_at("anthropic", Path::new("/cfg/models.json"));
        assert!(
            text.contains("ANTHROPIC_OAUTH_TOKEN, ANTHROPIC_API_KEY"),
            "{text}"
        );
        let text = missing_key_message("ollama");
        assert!(
            text.contains("\"ollama\"") && text.contains("models.json"),
            "{text}"
        );
    }
}
