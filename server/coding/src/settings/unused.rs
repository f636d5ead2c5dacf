//! The settings a file sets that Tandem does not act on, so that none is ignored silently:
//! pi 1.6's keys for its terminal UI that Tandem's terminal mode has no use for yet, pi 1.6's
//! other keys Tandem does not support yet, and keys neither knows (a typo, most often). Each is reported once per file
//! load, as a warning beside the file's other problems.

use serde_json::{Map, Value};

/// The keys (dotted paths) Tandem acts on; an object named here counts as a whole.
const HONOURED: &[&str] = &[
    "defaultProvider",
    "defaultModel",
    "defaultThinkingLevel",
    "modelThinkingLevels",
    "steeringMode",
    "followUpMode",
    "defaultTools",
    "extensions",
    "packages",
    "npmCommand",
    "sessionDir",
    "compaction.enabled",
    "compaction.reserveTokens",
    "compaction.keepRecentTokens",
    "compaction.modelOverrides",
    "retry.enabled",
    "retry.maxRetries",
    "retry.baseDelayMs",
    "retry.maxDelayMs",
    "retry.maxAgentDelayMs",
    "retry.provider.timeoutMs",
    "httpProxy",
    "httpIdleTimeoutMs",
    "extensionEventTimeoutMs",
    "transport",
    "shellPath",
    "shellCommandPrefix",
    "thinkingBudgets",
    "enabledModels",
    "skills",
    "prompts",
    "images.blockImages",
    "enableSkillCommands",
    "mcpServers",
    "defaultProjectTrust",
    "diagnostics",
    "languageServers",
    "hideThinkingBlock",
    "externalEditor",
    "quietStartup",
    "branchSummary.reserveTokens",
    "branchSummary.skipPrompt",
];

/// pi 1.6's settings for its terminal UI (settings.md: display, editor, keys, notices).
const PI_TERMINAL: &[&str] = &[
    "showCacheMissNotices",
    "doubleEscapeAction",
    "treeFilterMode",
    "theme",
    "tuiMode",
    "fullscreenExitOutput",
    "fullscreenScrollbar",
    "fullscreenCopyOnSelect",
    "fullscreenWheelScrollLines",
    "editorPaddingX",
    "outputPad",
    "autocompleteMaxVisible",
    "showHardwareCursor",
    "terminal",
    "markdown",
    "themes",
    "collapseChangelog",
];

/// pi 1.6's other settings Tandem does not act on, each with why.
const PI_OTHER: &[(&str, &str)] = &[
    (
        "cacheWarming",
        "pi 1.6's prompt-cache warming, which Tandem does not do",
    ),
    (
        "codemode",
        "pi 1.6's codemode extension, which Tandem does not have",
    ),
    (
        "sessionShareDestination",
        "pi 1.6's /share, which Tandem does not have",
    ),
    (
        "images.autoResize",
        "Tandem sends images at their own size (it does not resize them)",
    ),
    (
        "websocketConnectTimeoutMs",
        "Tandem streams over SSE only and opens no WebSocket",
    ),
    (
        "retry.provider.maxRetries",
        "Tandem does not retry inside a provider call; its own retries (retry.*) cover it",
    ),
    (
        "retry.provider.maxRetryDelayMs",
        "Tandem does not retry inside a provider call; its own retries (retry.*) cover it",
    ),
    ("selfUpdateCommand", "pi 1.6's self-update"),
    (
        "enableInstallTelemetry",
        "pi 1.6's telemetry; Tandem sends none",
    ),
    ("enableAnalytics", "pi 1.6's analytics; Tandem sends none"),
    ("warnings", "pi 1.6's provider warnings"),
];

/// What pi writes into settings.json for itself (not a choice of the user's): not reported.
const PI_BOOKKEEPING: &[&str] = &["lastChangelogVersion"];

/// Why a setting of pi's terminal interface does nothing here.
const TERMINAL_WHY: &str =
    "a setting of pi's terminal interface that Tandem's terminal mode does not act on";

/// What a file sets that Tandem does not act on, as `(key, why)`, in the file's order.
pub(super) fn unused(root: &Map<String, Value>) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    walk(root, "", &mut out);
    out
}

fn walk(object: &Map<String, Value>, prefix: &str, out: &mut Vec<(String, &'static str)>) {
    for (key, value) in object {
        let path = format!("{prefix}{key}");
        if value.is_null() || PI_BOOKKEEPING.contains(&path.as_str()) {
            continue;
        }
        if HONOURED.contains(&path.as_str()) {
            if let Some(why) = honoured_but(&path, value) {
                out.push((path, why));
            }
            continue;
        }
        let why = if PI_TERMINAL.contains(&path.as_str()) {
            Some(TERMINAL_WHY)
        } else {
            PI_OTHER
                .iter()
                .find(|(key, _)| *key == path)
                .map(|(_, why)| *why)
        };
        match (why, value) {
            (Some(why), _) => out.push((path, why)),
            // An object some of whose keys are known: look inside.
            (None, Value::Object(inner)) if known_below(&path) => {
                walk(inner, &format!("{path}."), out)
            }
            (None, _) => out.push((path, "not a setting pi 1.6 or Tandem knows (misspelt?)")),
        }
    }
}

/// A value of an honoured key that Tandem cannot follow as written.
fn honoured_but(path: &str, value: &Value) -> Option<&'static str> {
    match (path, value.as_str()) {
        ("transport", Some("websocket" | "websocket-cached")) => {
            Some("Tandem streams over SSE only: the providers are reached over SSE")
        }
        _ => None,
    }
}

fn known_below(path: &str) -> bool {
    let prefix = format!("{path}.");
    HONOURED.iter().any(|k| k.starts_with(&prefix))
        || PI_OTHER.iter().any(|(k, _)| k.starts_with(&prefix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_key_tandem_does_not_act_on_is_named_with_why() {
        let Value::Object(root) = json!({
            "defaultModel": "m",
            "compaction": {"enabled": true, "modelOverrides": {}, "reserveTokns": 1},
            "retry": {"maxRetries": 2, "provider": {"maxRetries": 1, "timeoutMs": 5, "retries": 1}},
            "images": {"autoResize": true, "blockImages": true},
            "transport": "websocket",
            "httpIdleTimeoutMs": "disabled",
            "defaultTools": ["+grep"],
            "modelThinkingLevels": {"a/b": "max"},
            "theme": "dark",
            "terminal": {"showImages": false},
            "enabledModels": ["a*"],
            "httpProxy": "http://proxy",
            "defaultModle": "typo",
            "diagnostics": {"maxItems": 3},
            "hideThinkingBlock": null,
            "lastChangelogVersion": "1.6.0",
        }) else {
            unreachable!()
        };
        let terminal = TERMINAL_WHY;
        let resize = "Tandem sends images at their own size (it does not resize them)";
        let provider_retries =
            "Tandem does not retry inside a provider call; its own retries (retry.*) cover it";
        let sse_only = "Tandem streams over SSE only: the providers are reached over SSE";
        let unknown = "not a setting pi 1.6 or Tandem knows (misspelt?)";
        let mut found = unused(&root);
        found.sort();
        assert_eq!(
            found,
            [
                ("compaction.reserveTokns".to_string(), unknown),
                ("defaultModle".to_string(), unknown),
                ("images.autoResize".to_string(), resize),
                ("retry.provider.maxRetries".to_string(), provider_retries),
                ("retry.provider.retries".to_string(), unknown),
                ("terminal".to_string(), terminal),
                ("theme".to_string(), terminal),
                ("transport".to_string(), sse_only),
            ]
        );
    }
}
