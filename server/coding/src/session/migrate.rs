//! Bringing version 1 and 2 session files up to version 3, in memory.
//!
//! - v1 → v2: entries had no tree. Each entry gets a fresh 8-hex `id` and the previous entry's
//!   id as `parentId` (a single chain in file order); a compaction's `firstKeptEntryIndex` (an
//!   index into the file's parsed lines, the header being 0) becomes the `firstKeptEntryId` of
//!   the entry at that index, and the index field goes away.
//! - v2 → v3: messages with the old `hookMessage` role become role `custom`.
//!
//! These work on plain JSON objects so every field of an old line survives. The file itself is
//! never rewritten (pi rewrites it in place; see `manager.rs` for what Tandem does instead).
//! Two small differences from pi, both only visible on malformed input: new ids are checked
//! against each other (pi's check set stays empty), and indices are resolved after every entry
//! has its id (so an index pointing forward still resolves).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::entry::CURRENT_VERSION;
use super::ids::new_entry_id;

/// Migrates `entries` (the parsed lines after the header) of a file whose header says
/// `version`, in place. Returns the version the entries were migrated from, or `None` when
/// they were already current.
pub fn migrate_entries(version: u32, entries: &mut [Map<String, Value>]) -> Option<u32> {
    if version >= CURRENT_VERSION {
        return None;
    }
    if version < 2 {
        v1_to_v2(entries);
    }
    v2_to_v3(entries);
    Some(version)
}

fn v1_to_v2(entries: &mut [Map<String, Value>]) {
    let mut taken = HashSet::new();
    let mut previous: Option<String> = None;
    for entry in entries.iter_mut() {
        let id = new_entry_id(|id| taken.contains(id));
        taken.insert(id.clone());
        entry.insert("id".into(), Value::String(id.clone()));
        entry.insert(
            "parentId".into(),
            previous.clone().map_or(Value::Null, Value::String),
        );
        previous = Some(id);
    }
    let ids: Vec<Value> = entries.iter().map(|e| e["id"].clone()).collect();
    for entry in entries.iter_mut() {
        if entry.get("type").and_then(Value::as_str) != Some("compaction") {
            continue;
        }
        let Some(index) = entry.get("firstKeptEntryIndex").map(Value::as_u64) else {
            continue;
        };
        // Index 0 is the header, which has no id; entry k sits at index k + 1.
        let target = index
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| ids.get(i));
        if let Some(id) = target {
            entry.insert("firstKeptEntryId".into(), id.clone());
        }
        if index.is_some() {
            entry.shift_remove("firstKeptEntryIndex");
        }
    }
}

fn v2_to_v3(entries: &mut [Map<String, Value>]) {
    for entry in entries.iter_mut() {
        if entry.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        if let Some(Value::Object(message)) = entry.get_mut("message") {
            if message.get("role").and_then(Value::as_str) == Some("hookMessage") {
                message.insert("role".into(), Value::String("custom".into()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn objects(values: Vec<Value>) -> Vec<Map<String, Value>> {
        values
            .into_iter()
            .map(|v| match v {
                Value::Object(m) => m,
                _ => panic!("object expected"),
            })
            .collect()
    }

    #[test]
    fn v1_gets_a_chain_and_compaction_ids() {
        let mut entries = objects(vec![
            json!({"type":"message","timestamp":"t1","message":{"role":"user","content":"a","timestamp":1}}),
            json!({"type":"message","timestamp":"t2","message":{"role":"hookMessage","customType":"x","content":"h","display":true,"timestamp":2}}),
            json!({"type":"compaction","timestamp":"t3","summary":"s","firstKeptEntryIndex":2,"tokensBefore":9}),
        ]);
        assert_eq!(migrate_entries(1, &mut entries), Some(1));
        let id = |i: usize| entries[i]["id"].as_str().expect("id").to_string();
        assert_eq!(entries[0]["parentId"], Value::Null);
        assert_eq!(entries[1]["parentId"], json!(id(0)));
        assert_eq!(entries[2]["parentId"], json!(id(1)));
        assert_eq!(entries[2]["firstKeptEntryId"], json!(id(1)));
        assert!(entries[2].get("firstKeptEntryIndex").is_none());
        assert_eq!(entries[1]["message"]["role"], "custom");
        let keys: Vec<&str> = entries[1]["message"]
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys[0], "role", "the role keeps its place");
    }

    #[test]
    fn v2_only_renames_the_role() {
        let original = json!({"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"t","message":{"role":"hookMessage","content":"h","timestamp":1}});
        let mut entries = objects(vec![original.clone()]);
        assert_eq!(migrate_entries(2, &mut entries), Some(2));
        assert_eq!(entries[0]["id"], "aaaaaaaa");
        assert_eq!(entries[0]["message"]["role"], "custom");
        assert_eq!(migrate_entries(3, &mut entries), None);
    }

    #[test]
    fn an_index_at_the_header_is_dropped() {
        let mut entries = objects(vec![
            json!({"type":"compaction","summary":"s","firstKeptEntryIndex":0,"tokensBefore":1}),
        ]);
        migrate_entries(1, &mut entries);
        assert!(entries[0].get("firstKeptEntryId").is_none());
        assert!(entries[0].get("firstKeptEntryIndex").is_none());
    }
}
