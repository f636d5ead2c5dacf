//! Which environment variables hold each provider's API key (pi's table), and the message for a
//! missing key.

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

/// What to tell a user whose provider has no key: the variable to set and where models.json is.
pub fn missing_key_message(provider: &str) -> String {
    let where_json = "\"apiKey\" for the provider in models.json (~/.pi/agent/models.json, or $PI_CODING_AGENT_DIR/models.json)";
    match env_var_names(provider) {
        [] => format!("No API key for provider: {provider}. Set {where_json}, or store a key in auth.json."),
        [only] => format!("No API key for provider: {provider}. Set the environment variable {only}, or set {where_json}."),
        names => format!(
            "No API key for provider: {provider}. Set one of the environment variables {}, or set {where_json}.",
            names.join(", ")
        ),
    }
}
