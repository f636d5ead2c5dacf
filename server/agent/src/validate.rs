//! Placeholder until the validator lands.

/// Validates and coerces `args` against `schema`.
pub fn validate_tool_arguments(
    _tool_name: &str,
    _schema: &serde_json::Value,
    args: &serde_json::Value,
) -> Result<serde_json::Value, String> {
    Ok(args.clone())
}
