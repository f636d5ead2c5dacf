//! The fields pi 1.6 added to messages and tool results, which pi 0.73.1's files and traces
//! cannot have: tests that compare Tandem (which writes pi 1.6's shape) with pi 0.73.1 leave
//! them out of Tandem's side; the comparisons with the real pi 1.6 keep them.

use serde_json::Value;

/// Removes, everywhere in `value`: usage's `reasoning` and `cost.totalFromProvider`, an
/// assistant message's `rawStopReason`, `durationMs` and `thinkingLevel`, a tool result
/// message's `durationMs`, and a tool result's `structuredContent`.
pub fn without_pi_16_fields(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            if let Some(usage) = fields.get_mut("usage").and_then(Value::as_object_mut) {
                usage.shift_remove("reasoning");
                if let Some(cost) = usage.get_mut("cost").and_then(Value::as_object_mut) {
                    cost.shift_remove("totalFromProvider");
                }
            }
            match fields.get("role").and_then(Value::as_str) {
                Some("assistant") => {
                    for key in ["rawStopReason", "durationMs", "thinkingLevel"] {
                        fields.shift_remove(key);
                    }
                }
                Some("toolResult") => {
                    fields.shift_remove("durationMs");
                }
                _ => {}
            }
            fields.shift_remove("structuredContent");
            fields.values_mut().for_each(without_pi_16_fields);
        }
        Value::Array(items) => items.iter_mut().for_each(without_pi_16_fields),
        _ => {}
    }
}
