//! The settings a file sets that Tandem does not act on, so that none is ignored silently:
//! pi 1.6's keys for its terminal UI (Tandem has none yet), pi 1.6's other keys Tandem does not
//! support yet, and keys neither knows (a typo, most often). Each is reported once per file
//! load, as a warning beside the file's other problems.

use serde_json::{Map, Value};

/// The keys (dotted paths) Tandem acts on; an object named here counts as a whole.
const HONOURED: &[&str] = &[
    "defaultProvider",
    "defaultModel",
    "defaultThinkingLevel",
    "steeringMode",
    "followUpMode",
    "compaction.enabled",
    "compaction.reserveTokens",
    "compaction.keepRecentTokens",
    "retry.enabled",
    "retry.maxRetries",
    "retry.baseDelayMs",
    "retry.maxDelayMs",
    "shellPath",
    "shellCommandPrefix",
    "thinkingBudgets",
    "enabledModels",
    "skills",
    "prompts",
    "mcpServers",
    "defaultProjectTrust",
    "diagnostics",
    "languageServers",
];

/// pi 1.6's settings for its terminal UI (settings.md: display, editor, keys, notices).
const PI_TERMINAL: &[&str] = &[
    "hideThinkingBlock",
    "showCacheMissNotices",
    "externalEditor",
    "doubleEscapeAction",
    "treeFilterMode",
    "theme",
    "quietStartup",
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

/// pi 1.6's other settings (settings.md), which Tandem does not act on yet.
const PI_OTHER: &[&str] = &[
    "modelThinkingLevels",
    "cacheWarming",
    "defaultTools",
    "codemode",
    "sessionDir",
    "sessionShareDestination",
    "compaction.modelOverrides",
    "branchSummary",
    "images",
    "transport",
    "httpProxy",
    "httpIdleTimeoutMs",
    "websocketConnectTimeoutMs",
    "retry.maxAgentDelayMs",
    "retry.provider",
    "npmCommand",
    "selfUpdateCommand",
    "packages",
    "extensions",
    "enableSkillCommands",
    "enableInstallTelemetry",
    "enableAnalytics",
    "warnings",
];

/// What pi writes into settings.json for itself (not a choice of the user's): not reported.
const PI_BOOKKEEPING: &[&str] = &["lastChangelogVersion"];

/// What a file sets that Tandem does not act on, as `(key, why)`, in the file's order.
pub(super) fn unused(root: &Map<String, Value>) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    walk(root, "", &mut out);
    out
}

fn walk(object: &Map<String, Value>, prefix: &str, out: &mut Vec<(String, &'static str)>) {
    for (key, value) in object {
        let path = format!("{prefix}{key}");
        if value.is_null()
            || HONOURED.contains(&path.as_str())
            || PI_BOOKKEEPING.contains(&path.as_str())
        {
            continue;
        }
        let why = if PI_TERMINAL.contains(&path.as_str()) {
            Some("a setting of pi's terminal interface, which Tandem does not have yet")
        } else if PI_OTHER.contains(&path.as_str()) {
            Some("a pi 1.6 setting Tandem does not support yet")
        } else {
            None
        };
        match (why, value) {
            (Some(why), _) => out.push((path, why)),
            // An object some of whose keys are honoured: look inside.
            (None, Value::Object(inner)) if honoured_below(&path) => {
                walk(inner, &format!("{path}."), out)
            }
            (None, _) => out.push((path, "not a setting pi 1.6 or Tandem knows (misspelt?)")),
        }
    }
}

fn honoured_below(path: &str) -> bool {
    let prefix = format!("{path}.");
    HONOURED.iter().any(|k| k.starts_with(&prefix))
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
            "retry": {"maxRetries": 2, "provider": {"maxRetries": 1}},
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
        let terminal = "a setting of pi's terminal interface, which Tandem does not have yet";
        let other = "a pi 1.6 setting Tandem does not support yet";
        let unknown = "not a setting pi 1.6 or Tandem knows (misspelt?)";
        let mut found = unused(&root);
        found.sort();
        assert_eq!(
            found,
            [
                ("compaction.modelOverrides".to_string(), other),
                ("compaction.reserveTokns".to_string(), unknown),
                ("defaultModle".to_string(), unknown),
                ("httpProxy".to_string(), other),
                ("retry.provider".to_string(), other),
                ("terminal".to_string(), terminal),
                ("theme".to_string(), terminal),
            ]
        );
    }
}
