//! Session modes and configuration options: what the client can switch per session.
//!
//! Three modes decide what needs the user's consent. Bash always asks (a command can do
//! anything); edits ask, go straight through, or are refused:
//!
//! | mode | edits and writes | bash |
//! |---|---|---|
//! | `ask` (default) | ask | ask |
//! | `accept-edits` | applied | ask |
//! | `read-only` | refused | ask |
//!
//! The configuration options are the mode (again, for clients that only show options), the
//! model (every model with a key, as `provider/id`), the thinking level (only the levels the
//! current model has) and automatic compaction (pi's `compaction.enabled`, for this session):
//! a boolean for clients that declare `session.configOptions.boolean` (the schema allows
//! `type: "boolean"` options only for them), else a select of `on` and `off`. The model is
//! chosen here only: ACP v1's stable schema has no `session/set_model`.

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionMode,
    SessionModeState,
};
use tandem_ai::registry::ModelRegistry;
use tandem_ai::{Model, ThinkingLevel};

use crate::host::models::is_available;

/// What edits need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Ask before every edit, write and command.
    #[default]
    Ask,
    /// Apply edits and writes without asking; commands still ask.
    AcceptEdits,
    /// Refuse edits and writes; commands still ask.
    ReadOnly,
}

impl Mode {
    /// Every mode, the default first.
    pub const ALL: [Mode; 3] = [Mode::Ask, Mode::AcceptEdits, Mode::ReadOnly];

    /// The id on the wire.
    pub fn id(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::AcceptEdits => "accept-edits",
            Mode::ReadOnly => "read-only",
        }
    }

    /// The mode called `id`.
    pub fn from_id(id: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.id() == id)
    }

    fn name(self) -> &'static str {
        match self {
            Mode::Ask => "Ask before edits and commands",
            Mode::AcceptEdits => "Accept edits",
            Mode::ReadOnly => "Read-only",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Mode::Ask => "Tandem asks before it changes a file or runs a command",
            Mode::AcceptEdits => "Tandem changes files without asking; commands still ask",
            Mode::ReadOnly => "Tandem may read and search but not change files; commands ask",
        }
    }
}

/// The modes as `session/new` announces them.
pub fn mode_state(current: Mode) -> SessionModeState {
    let modes = Mode::ALL
        .iter()
        .map(|m| SessionMode::new(m.id(), m.name()).description(m.description().to_string()))
        .collect();
    SessionModeState::new(current.id(), modes)
}

/// The id of the mode option.
pub const MODE_OPTION: &str = "mode";
/// The id of the model option.
pub const MODEL_OPTION: &str = "model";
/// The id of the thinking level option.
pub const THINKING_OPTION: &str = "thinking";
/// The id of the automatic compaction option (a boolean, or a select of [`ON`] and [`OFF`]).
pub const AUTO_COMPACT_OPTION: &str = "auto-compact";
/// The auto-compact select's value for on.
pub const ON: &str = "on";
/// The auto-compact select's value for off.
pub const OFF: &str = "off";

/// A value id that means on or off: the select's `on` / `off`, or `true` / `false` from a
/// client that sends every value as an id (acpx 0.19 does).
pub fn switch_from_id(id: &str) -> Option<bool> {
    match id {
        ON | "true" => Some(true),
        OFF | "false" => Some(false),
        _ => None,
    }
}

/// `provider/id`, the model option's value.
pub fn model_value(model: &Model) -> String {
    format!("{}/{}", model.provider, model.id)
}

/// The configuration options for a session in `mode` with `model` at `thinking`, compacting
/// automatically or not; `boolean`: the client takes boolean options.
pub fn config_options(
    mode: Mode,
    registry: &ModelRegistry,
    model: &Model,
    thinking: ThinkingLevel,
    auto_compact: bool,
    boolean: bool,
) -> Vec<SessionConfigOption> {
    let modes: Vec<SessionConfigSelectOption> = Mode::ALL
        .iter()
        .map(|m| {
            SessionConfigSelectOption::new(m.id(), m.name())
                .description(m.description().to_string())
        })
        .collect();
    let current = model_value(model);
    let mut models: Vec<SessionConfigSelectOption> = registry
        .all()
        .iter()
        .filter(|m| is_available(registry, m))
        .map(|m| SessionConfigSelectOption::new(model_value(m), display_name(m)))
        .collect();
    if !models.iter().any(|o| o.value.0.as_ref() == current) {
        models.insert(
            0,
            SessionConfigSelectOption::new(current.clone(), display_name(model)),
        );
    }
    let levels: Vec<SessionConfigSelectOption> = thinking_levels(model)
        .into_iter()
        .map(|l| SessionConfigSelectOption::new(l.as_str(), l.as_str()))
        .collect();
    vec![
        SessionConfigOption::select(MODE_OPTION, "Mode", mode.id(), modes)
            .category(SessionConfigOptionCategory::Mode)
            .description("What Tandem may do without asking".to_string()),
        SessionConfigOption::select(MODEL_OPTION, "Model", current, models)
            .category(SessionConfigOptionCategory::Model),
        SessionConfigOption::select(THINKING_OPTION, "Thinking", thinking.as_str(), levels)
            .category(SessionConfigOptionCategory::ThoughtLevel)
            .description("How much the model reasons before answering".to_string()),
        auto_compact_option(auto_compact, boolean).description(
            "Summarize older messages when the context nears the model's window".to_string(),
        ),
    ]
}

fn auto_compact_option(on: bool, boolean: bool) -> SessionConfigOption {
    if boolean {
        return SessionConfigOption::boolean(AUTO_COMPACT_OPTION, "Auto-compact", on);
    }
    let choices = vec![
        SessionConfigSelectOption::new(ON, "On"),
        SessionConfigSelectOption::new(OFF, "Off"),
    ];
    SessionConfigOption::select(
        AUTO_COMPACT_OPTION,
        "Auto-compact",
        if on { ON } else { OFF },
        choices,
    )
}

fn display_name(model: &Model) -> String {
    if model.name.is_empty() || model.name == model.id {
        model_value(model)
    } else {
        format!("{} ({})", model.name, model.provider)
    }
}

/// The levels `model` has: only `off` for a model without reasoning; `xhigh` and `max` only
/// where it offers them.
pub fn thinking_levels(model: &Model) -> Vec<ThinkingLevel> {
    ThinkingLevel::ALL
        .into_iter()
        .filter(|level| model.effective_thinking(*level) == *level)
        .collect()
}

/// The level called `id`.
pub fn thinking_from_id(id: &str) -> Option<ThinkingLevel> {
    ThinkingLevel::ALL.into_iter().find(|l| l.as_str() == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_ids_round_trip_and_ask_is_the_default() {
        for mode in Mode::ALL {
            assert_eq!(Mode::from_id(mode.id()), Some(mode));
        }
        assert_eq!(Mode::default(), Mode::Ask);
        assert_eq!(Mode::from_id("yolo"), None);
        let state = serde_json::to_value(mode_state(Mode::AcceptEdits)).unwrap();
        assert_eq!(state["currentModeId"], "accept-edits");
        assert_eq!(state["availableModes"][0]["id"], "ask");
        assert_eq!(state["availableModes"].as_array().map(Vec::len), Some(3));
    }

    #[test]
    fn auto_compact_is_a_boolean_only_for_clients_that_declare_boolean_options() {
        let as_json = |on, boolean| serde_json::to_value(auto_compact_option(on, boolean)).unwrap();
        let boolean = as_json(true, true);
        assert_eq!(
            (boolean["type"].as_str(), &boolean["currentValue"]),
            (Some("boolean"), &serde_json::json!(true))
        );
        let select = as_json(false, false);
        assert_eq!(select["type"], "select");
        assert_eq!(select["currentValue"], OFF);
        let values: Vec<&str> = select["options"]
            .as_array()
            .expect("options")
            .iter()
            .filter_map(|o| o["value"].as_str())
            .collect();
        assert_eq!(values, [ON, OFF]);
        for (id, on) in [(ON, true), ("true", true), (OFF, false), ("false", false)] {
            assert_eq!(switch_from_id(id), Some(on));
        }
        assert_eq!(switch_from_id("maybe"), None);
    }

    #[test]
    fn thinking_ids_round_trip() {
        for level in ThinkingLevel::ALL {
            assert_eq!(thinking_from_id(level.as_str()), Some(level));
        }
        assert_eq!(thinking_from_id("maximum"), None);
    }
}
