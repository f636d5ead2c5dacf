//! Which `thinkingConfig` a Gemini model gets for a thinking level.
//!
//! Gemini has two reasoning dials. Gemini 3 takes a named `thinkingLevel`, and its Pro models
//! know only `LOW` and `HIGH`; Gemini 2.5 takes a `thinkingBudget` in tokens whose allowed range
//! differs per model (2.5 Pro cannot switch thinking off at all, Flash-Lite needs at least 512).
//! A level the caller chose must therefore be translated per model family, and "off" must be
//! spelled as the least thinking each family accepts rather than omitted, because Gemini 2.5
//! Flash and every Gemini 3 model think by default.

use serde::Serialize;

use crate::model::{Model, ThinkingBudgets, ThinkingLevel};

/// Let the model decide how long to think (Gemini's "dynamic thinking").
const DYNAMIC_BUDGET: i64 = -1;

/// The wire `generationConfig.thinkingConfig`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ThinkingConfig {
    /// Ask for thought summaries in the stream; set only when the caller wants reasoning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_thoughts: Option<bool>,
    /// Gemini 3: `MINIMAL`, `LOW`, `MEDIUM` or `HIGH`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<&'static str>,
    /// Gemini 2.5: tokens, `0` for off, `-1` for dynamic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<i64>,
}

/// The Gemini model families whose thinking is configured differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// Gemini 3.x Pro: levels, only `LOW` and `HIGH`.
    Gemini3Pro,
    /// Gemini 3.x Flash and Flash-Lite: all four levels.
    Gemini3Flash,
    /// Gemini 2.5 Pro: budgets 128–32768, thinking cannot be switched off.
    Gemini25Pro,
    /// Gemini 2.5 Flash-Lite: budgets 512–24576.
    Gemini25FlashLite,
    /// Gemini 2.5 Flash: budgets 0–24576.
    Gemini25Flash,
    /// Anything else: budgets, with Gemini's own default when thinking is on.
    Other,
}

impl Family {
    fn of(model_id: &str) -> Family {
        let id = model_id.to_ascii_lowercase();
        if is_gemini3(&id, "pro") {
            Family::Gemini3Pro
        } else if is_gemini3(&id, "flash") {
            Family::Gemini3Flash
        } else if id.contains("2.5-pro") {
            Family::Gemini25Pro
        } else if id.contains("2.5-flash-lite") {
            Family::Gemini25FlashLite
        } else if id.contains("2.5-flash") {
            Family::Gemini25Flash
        } else {
            Family::Other
        }
    }
}

/// True when `id` names a Gemini 3 model of `variant`: `gemini-3-<variant>` or
/// `gemini-3.<digits>-<variant>` anywhere in the id.
fn is_gemini3(id: &str, variant: &str) -> bool {
    id.match_indices("gemini-3").any(|(at, found)| {
        let mut rest = &id[at + found.len()..];
        if let Some(after_dot) = rest.strip_prefix('.') {
            let digits = after_dot.len()
                - after_dot
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .len();
            if digits == 0 {
                return false;
            }
            rest = &after_dot[digits..];
        }
        rest.strip_prefix('-')
            .is_some_and(|tail| tail.starts_with(variant))
    })
}

/// The `thinkingConfig` for `model` at the requested `level`, or `None` to send none.
pub(super) fn thinking_config(
    model: &Model,
    level: ThinkingLevel,
    budgets: &ThinkingBudgets,
) -> Option<ThinkingConfig> {
    if !model.reasoning {
        return None;
    }
    let family = Family::of(&model.id);
    let level = model.effective_thinking(level).clamp_xhigh();
    if level == ThinkingLevel::Off {
        return disabled(family);
    }
    let (thinking_level, thinking_budget) = match family {
        Family::Gemini3Pro | Family::Gemini3Flash => (Some(gemini3_level(family, level)), None),
        _ => (None, Some(budget(family, level, budgets))),
    };
    Some(ThinkingConfig {
        include_thoughts: Some(true),
        thinking_level,
        thinking_budget,
    })
}

/// The least thinking each family accepts, without thought summaries.
fn disabled(family: Family) -> Option<ThinkingConfig> {
    let (thinking_level, thinking_budget) = match family {
        Family::Gemini3Pro => (Some("LOW"), None),
        Family::Gemini3Flash => (Some("MINIMAL"), None),
        // 2.5 Pro rejects a zero budget; leaving the config out keeps its default.
        Family::Gemini25Pro => return None,
        Family::Gemini25FlashLite | Family::Gemini25Flash | Family::Other => (None, Some(0)),
    };
    Some(ThinkingConfig {
        include_thoughts: None,
        thinking_level,
        thinking_budget,
    })
}

/// Gemini 3 level names; Pro folds the four levels onto the two it has.
fn gemini3_level(family: Family, level: ThinkingLevel) -> &'static str {
    match (family, level) {
        (Family::Gemini3Pro, ThinkingLevel::Minimal | ThinkingLevel::Low) => "LOW",
        (Family::Gemini3Pro, _) => "HIGH",
        (_, ThinkingLevel::Minimal) => "MINIMAL",
        (_, ThinkingLevel::Low) => "LOW",
        (_, ThinkingLevel::Medium) => "MEDIUM",
        _ => "HIGH",
    }
}

/// The token budget for a level: the caller's own budget for that level if set, else the
/// family's table, else dynamic.
fn budget(family: Family, level: ThinkingLevel, custom: &ThinkingBudgets) -> i64 {
    let own = match level {
        ThinkingLevel::Minimal => custom.minimal,
        ThinkingLevel::Low => custom.low,
        ThinkingLevel::Medium => custom.medium,
        _ => custom.high,
    };
    if let Some(tokens) = own {
        return i64::try_from(tokens).unwrap_or(i64::MAX);
    }
    let (minimal, high) = match family {
        Family::Gemini25Pro => (128, 32_768),
        Family::Gemini25FlashLite => (512, 24_576),
        Family::Gemini25Flash => (128, 24_576),
        _ => return DYNAMIC_BUDGET,
    };
    match level {
        ThinkingLevel::Minimal => minimal,
        ThinkingLevel::Low => 2_048,
        ThinkingLevel::Medium => 8_192,
        _ => high,
    }
}

/// True for Gemini 3 models, which need a thought signature on every replayed function call
/// and accept images inside function responses.
pub(super) fn is_gemini3_model(model_id: &str) -> bool {
    model_id.to_ascii_lowercase().contains("gemini-3")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Api, InputKind, ModelCost};

    fn model(id: &str, reasoning: bool) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: Api::GoogleGenerativeAi,
            provider: "google".into(),
            base_url: String::new(),
            reasoning,
            input: vec![InputKind::Text],
            cost: ModelCost::default(),
            context_window: 1_048_576,
            max_tokens: 65_536,
            headers: None,
            compat: None,
        }
    }

    fn config(id: &str, level: ThinkingLevel) -> Option<ThinkingConfig> {
        thinking_config(&model(id, true), level, &ThinkingBudgets::default())
    }

    fn level(name: &'static str) -> Option<ThinkingConfig> {
        Some(ThinkingConfig {
            include_thoughts: Some(true),
            thinking_level: Some(name),
            thinking_budget: None,
        })
    }

    fn budget_of(tokens: i64) -> Option<ThinkingConfig> {
        Some(ThinkingConfig {
            include_thoughts: Some(true),
            thinking_level: None,
            thinking_budget: Some(tokens),
        })
    }

    #[test]
    fn gemini3_family_detection() {
        assert!(is_gemini3("gemini-3-pro-preview", "pro"));
        assert!(is_gemini3("gemini-3.1-pro-preview", "pro"));
        assert!(is_gemini3("models/gemini-3-flash-preview", "flash"));
        assert!(is_gemini3("gemini-3.1-flash-lite-preview", "flash"));
        assert!(!is_gemini3("gemini-3.x-pro", "pro"));
        assert!(!is_gemini3("gemini-2.5-pro", "pro"));
        assert!(!is_gemini3("gemini-30-pro", "pro"));
        assert_eq!(Family::of("Gemini-3-Pro-Preview"), Family::Gemini3Pro);
    }

    #[test]
    fn gemini3_pro_has_only_low_and_high() {
        assert_eq!(
            config("gemini-3-pro-preview", ThinkingLevel::Minimal),
            level("LOW")
        );
        assert_eq!(
            config("gemini-3-pro-preview", ThinkingLevel::Low),
            level("LOW")
        );
        assert_eq!(
            config("gemini-3.1-pro-preview", ThinkingLevel::Medium),
            level("HIGH")
        );
        assert_eq!(
            config("gemini-3.1-pro-preview", ThinkingLevel::Xhigh),
            level("HIGH")
        );
    }

    #[test]
    fn gemini3_flash_has_all_four_levels() {
        let id = "gemini-3-flash-preview";
        assert_eq!(config(id, ThinkingLevel::Minimal), level("MINIMAL"));
        assert_eq!(config(id, ThinkingLevel::Low), level("LOW"));
        assert_eq!(config(id, ThinkingLevel::Medium), level("MEDIUM"));
        assert_eq!(config(id, ThinkingLevel::High), level("HIGH"));
    }

    #[test]
    fn gemini25_budgets_per_model() {
        assert_eq!(
            config("gemini-2.5-pro", ThinkingLevel::Minimal),
            budget_of(128)
        );
        assert_eq!(
            config("gemini-2.5-pro", ThinkingLevel::High),
            budget_of(32_768)
        );
        assert_eq!(
            config("gemini-2.5-flash", ThinkingLevel::Minimal),
            budget_of(128)
        );
        assert_eq!(
            config("gemini-2.5-flash", ThinkingLevel::Low),
            budget_of(2_048)
        );
        assert_eq!(
            config("gemini-2.5-flash", ThinkingLevel::Medium),
            budget_of(8_192)
        );
        assert_eq!(
            config("gemini-2.5-flash", ThinkingLevel::High),
            budget_of(24_576)
        );
        assert_eq!(
            config("gemini-2.5-flash-lite", ThinkingLevel::Minimal),
            budget_of(512)
        );
        assert_eq!(
            config("gemini-2.0-flash-thinking", ThinkingLevel::Low),
            budget_of(-1)
        );
    }

    #[test]
    fn custom_budgets_win() {
        let budgets = ThinkingBudgets {
            medium: Some(5_000),
            ..ThinkingBudgets::default()
        };
        let m = model("gemini-2.5-flash", true);
        assert_eq!(
            thinking_config(&m, ThinkingLevel::Medium, &budgets),
            budget_of(5_000)
        );
        assert_eq!(
            thinking_config(&m, ThinkingLevel::Low, &budgets),
            budget_of(2_048)
        );
    }

    #[test]
    fn off_is_the_least_thinking_each_family_accepts() {
        let off = |id| config(id, ThinkingLevel::Off);
        let plain = |level, budget| {
            Some(ThinkingConfig {
                include_thoughts: None,
                thinking_level: level,
                thinking_budget: budget,
            })
        };
        assert_eq!(off("gemini-2.5-flash"), plain(None, Some(0)));
        assert_eq!(off("gemini-2.5-flash-lite"), plain(None, Some(0)));
        assert_eq!(off("gemini-2.5-pro"), None);
        assert_eq!(off("gemini-3-pro-preview"), plain(Some("LOW"), None));
        assert_eq!(off("gemini-3-flash-preview"), plain(Some("MINIMAL"), None));
    }

    #[test]
    fn models_that_cannot_reason_get_no_config() {
        let m = model("gemini-2.0-flash", false);
        assert_eq!(
            thinking_config(&m, ThinkingLevel::High, &ThinkingBudgets::default()),
            None
        );
        assert_eq!(
            thinking_config(&m, ThinkingLevel::Off, &ThinkingBudgets::default()),
            None
        );
    }
}
