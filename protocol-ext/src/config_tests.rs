use serde_json::json;

use super::*;

#[test]
fn full_settings_round_trip() {
    let config = TandemConfig {
        model: Some(ModelRef {
            provider: "openrouter".into(),
            id: "anthropic/claude-sonnet-4.5".into(),
        }),
        thinking_level: Some(ThinkingLevel::Low),
        edit_mode: Some(EditMode::Auto),
        bash_permission: Some(BashPermission::Deny),
        agent_dir: Some("~/.pi/agent".into()),
        edit_timeout_ms: None,
        save_before_commands: Some(false),
        tools: Some(vec!["read".into(), "grep".into()]),
    };
    let wire = json!({"model": "openrouter/anthropic/claude-sonnet-4.5", "thinkingLevel": "low",
        "editMode": "auto", "bashPermission": "deny", "agentDir": "~/.pi/agent",
        "saveBeforeCommands": false, "tools": ["read", "grep"]});
    assert_eq!(serde_json::to_value(&config).unwrap(), wire);
    assert_eq!(
        serde_json::from_value::<TandemConfig>(wire.clone()).unwrap(),
        config
    );
    let parsed = TandemConfig::from_initialization_options(&wire);
    assert_eq!(parsed.config, config);
    assert!(parsed.warnings.is_empty());
}

#[test]
fn defaults_are_confirm_and_ask() {
    let parsed = TandemConfig::from_initialization_options(&Value::Null);
    assert_eq!(parsed, ConfigParse::default());
    assert_eq!(parsed.config.edit_mode(), EditMode::Confirm);
    assert_eq!(parsed.config.bash_permission(), BashPermission::Ask);
    assert_eq!(serde_json::to_value(&parsed.config).unwrap(), json!({}));
}

#[test]
fn initialization_options_may_nest_under_tandem() {
    let parsed = TandemConfig::from_initialization_options(
        &json!({"tandem": {"editMode": "auto"}, "other": 1}),
    );
    assert_eq!(parsed.config.edit_mode(), EditMode::Auto);
    assert!(parsed.warnings.is_empty());
}

#[test]
fn settings_read_the_tandem_section() {
    let parsed = TandemConfig::from_settings(&json!({"tandem": {"bashPermission": "allow"},
        "rust-analyzer": {}}))
    .unwrap();
    assert_eq!(parsed.config.bash_permission(), BashPermission::Allow);
    assert_eq!(TandemConfig::from_settings(&json!({"python": {}})), None);
    assert_eq!(TandemConfig::from_settings(&Value::Null), None);
}

#[test]
fn bad_values_warn_name_the_key_and_keep_the_rest() {
    let parsed = TandemConfig::parse(
        &json!({"editMode": "yolo", "model": "gpt-4o", "thinkingLevel": "low",
            "bashPermission": 1, "agentDir": null, "future": true}),
        "settings.tandem",
    );
    assert_eq!(
        parsed.config,
        TandemConfig {
            thinking_level: Some(ThinkingLevel::Low),
            ..TandemConfig::default()
        }
    );
    assert_eq!(
        parsed.warnings,
        [
            "settings.tandem.model: expected `provider/id`, got \"gpt-4o\"; \
             using pi's default model",
            "settings.tandem.editMode: expected `confirm` or `auto`, got \"yolo\"; \
             using `confirm`",
            "settings.tandem.bashPermission: expected `ask`, `allow` or `deny`, got 1; \
             using `ask`",
        ]
    );
    let parsed = TandemConfig::parse(&json!("auto"), "initializationOptions");
    assert_eq!(
        parsed.warnings,
        [
            "initializationOptions: expected an object of Tandem settings, got a string; \
          using the defaults"
        ]
    );
}

#[test]
fn model_refs_split_at_the_first_slash() {
    assert_eq!(
        ModelRef::parse("anthropic/claude-sonnet-4-5"),
        Some(ModelRef {
            provider: "anthropic".into(),
            id: "claude-sonnet-4-5".into()
        })
    );
    assert_eq!(ModelRef::parse("/x"), None);
    assert_eq!(ModelRef::parse("x/"), None);
    assert_eq!(ModelRef::parse("x"), None);
    let m = ModelRef::parse("a/b/c").unwrap();
    assert_eq!((m.provider.as_str(), m.id.as_str()), ("a", "b/c"));
    assert_eq!(m.to_string(), "a/b/c");
}

#[test]
fn editor_trust_is_read_from_the_top_of_initialization_options_only() {
    use serde_json::json;
    assert_eq!(editor_trust(None), Ok(None));
    assert_eq!(editor_trust(Some(&json!({}))), Ok(None));
    assert_eq!(
        editor_trust(Some(&json!({"workspaceTrusted": true}))),
        Ok(Some(true))
    );
    assert_eq!(
        editor_trust(Some(&json!({"workspaceTrusted": false, "tandem": {}}))),
        Ok(Some(false))
    );
    // Inside the settings section it is just an unknown setting.
    assert_eq!(
        editor_trust(Some(&json!({"tandem": {"workspaceTrusted": true}}))),
        Ok(None)
    );
    let err = editor_trust(Some(&json!({"workspaceTrusted": "yes"}))).unwrap_err();
    assert!(err.contains("expected true or false"), "{err}");
}

#[test]
fn unknown_tools_are_left_out_with_a_warning() {
    let parsed = TandemConfig::parse(&json!({"tools": ["read", "fly", "ls"]}), "settings.tandem");
    assert_eq!(parsed.config.tools, Some(vec!["read".into(), "ls".into()]));
    assert_eq!(parsed.warnings.len(), 1);
    assert!(
        parsed.warnings[0].contains("settings.tandem.tools") && parsed.warnings[0].contains("fly"),
        "{:?}",
        parsed.warnings
    );
    let parsed = TandemConfig::parse(&json!({"tools": "read"}), "settings.tandem");
    assert_eq!(parsed.config.tools, None);
    assert_eq!(parsed.warnings.len(), 1);
}
