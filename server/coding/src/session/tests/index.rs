//! Large and hostile files (issue 29): a session keeps an index and its context part, reads
//! everything else back from its file on demand, notices a file rewritten under it, and copies
//! long branches byte for byte; cycles, repeated ids, deep chains and overlong lines load in
//! bounded time and memory.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use super::{lines_of, user};
use crate::session::{build_context, load_session_file, EntryKind, SessionError, SessionManager};

const HEADER: &str = r#"{"type":"session","version":3,"id":"0199a000-0000-7000-8000-000000000001","timestamp":"2026-11-30T07:13:25.974Z","cwd":"/p"}"#;

/// A linear session of `n` entries: user prompts, assistant answers (with usage) and tool
/// results, and every `compact_every` entries (0: never) a compaction keeping the last 50.
fn linear(n: usize, compact_every: usize) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    for i in 1..=n {
        let id = format!("{i:08x}");
        let parent = match i {
            1 => "null".to_string(),
            _ => format!("\"{:08x}\"", i - 1),
        };
        let head =
            format!(r#""id":"{id}","parentId":{parent},"timestamp":"2026-11-30T07:13:25.974Z""#);
        let line = if compact_every > 0 && i % compact_every == 0 {
            format!(
                r#"{{"type":"compaction",{head},"summary":"summary {i}","firstKeptEntryId":"{:08x}","tokensBefore":1000}}"#,
                i - 50
            )
        } else {
            match i % 3 {
                1 => format!(
                    r#"{{"type":"message",{head},"message":{{"role":"user","content":[{{"type":"text","text":"prompt {i}"}}],"timestamp":{i}}}}}"#
                ),
                2 => format!(
                    r#"{{"type":"message",{head},"message":{{"role":"assistant","content":[{{"type":"text","text":"answer {i}"}},{{"type":"toolCall","id":"c{i}","name":"read","arguments":{{"path":"f{i}"}}}}],"api":"openai-completions","provider":"mock","model":"mock-model","usage":{{"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":12,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}}}},"stopReason":"toolUse","timestamp":{i}}}}}"#
                ),
                _ => format!(
                    r#"{{"type":"message",{head},"message":{{"role":"toolResult","toolCallId":"c{}","toolName":"read","content":[{{"type":"text","text":"result {i}"}}],"isError":false,"timestamp":{i}}}}}"#,
                    i - 1
                ),
            }
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

/// The context the whole file gives, computed from every entry in memory (the old way).
fn whole_file_context(path: &Path) -> crate::session::SessionContext {
    let loaded = load_session_file(path).expect("loads");
    let index: HashMap<String, usize> = loaded
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.clone(), i))
        .collect();
    let leaf = loaded.entries.last().map(|e| e.id.clone());
    build_context(&loaded.entries, &index, leaf.as_deref())
}

#[test]
fn a_large_session_keeps_its_context_part_parsed_and_reads_the_rest_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write(dir.path(), "big.jsonl", &linear(5000, 1000));
    let s = SessionManager::open(&path).expect("opens");

    // In memory: the last compaction's kept entries (from 4950) to the leaf (5000).
    let active: Vec<&str> = s.active_branch().iter().map(|e| e.id.as_str()).collect();
    assert_eq!(active.first(), Some(&"00001356"));
    assert_eq!(active.len(), 51);
    assert_eq!(s.entry_count(), 5000);
    assert_eq!(s.branch_path().len(), 5000);

    // Read back: the same entries and lines as a whole-file load, byte for byte.
    let loaded = load_session_file(&path).expect("loads");
    assert_eq!(s.entries().to_vec(), loaded.entries);
    let lines = lines_of(&path);
    for (entry, line) in loaded.entries.iter().zip(&lines[1..]) {
        assert_eq!(s.entry_line(&entry.id).as_deref(), Some(line.as_str()));
    }
    let old = s.entry("00000002").expect("an old entry");
    assert!(matches!(old, Cow::Owned(_)), "read back from the file");
    assert_eq!(*old, loaded.entries[1]);
    assert!(matches!(s.entry("00001388"), Some(Cow::Borrowed(_))));

    // The context and the totals are what the whole file gives.
    assert_eq!(s.build_context(), whole_file_context(&path));
    assert_eq!(s.totals().assistant_messages, 1665);
    assert_eq!(s.totals().tool_calls, 1665);
    assert_eq!(s.totals().usage.cost.total, 1665.0 * 0.5);
    assert_eq!(s.totals().messages, 4995);

    // Moving far back reads that branch in; the context follows.
    let mut s = s;
    s.branch("00000064").expect("branch");
    assert_eq!(s.active_branch().len(), 100);
    assert_eq!(s.build_context().messages.len(), 100);
    s.branch("00001388").expect("back");
    assert_eq!(s.build_context(), whole_file_context(&path));
}

#[test]
fn appended_entries_are_read_back_from_the_file_even_after_a_torn_tail() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = linear(300, 100);
    let torn = format!("{text}{{\"type\":\"message\",\"id\":\"tor");
    let path = write(dir.path(), "s.jsonl", &torn);
    let mut s = SessionManager::open(&path).expect("opens");
    assert_eq!(s.load_report().skipped.len(), 1);
    let first = s.append_message(user("after the tear", 1)).expect("append");
    let second = s.append_message(user("and again", 2)).expect("append");

    let lines: Vec<String> = std::fs::read_to_string(&path)
        .expect("text")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(s.entry_line(&first).as_deref(), Some(lines[302].as_str()));
    assert_eq!(s.entry_line(&second).as_deref(), Some(lines[303].as_str()));
    // Off the branch, the appended entries come back from the file, whole.
    s.branch("00000001").expect("branch");
    let back = s.entry(&first).expect("read back");
    assert!(matches!(back, Cow::Owned(_)));
    assert_eq!(back.parent_id.as_deref(), Some("0000012c"));
}

#[test]
fn a_file_rewritten_in_place_is_noticed_when_an_entry_is_read_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = linear(400, 200);
    let path = write(dir.path(), "s.jsonl", &text);
    let s = SessionManager::open(&path).expect("opens");
    let context = s.build_context();

    // Another program swaps an early line for another entry of the same length.
    let second = text.lines().nth(2).expect("line 2");
    let at = text.find(second).expect("offset") as u64;
    let forged = second.replace("\"id\":\"00000002\"", "\"id\":\"ffffffff\"");
    assert_eq!(forged.len(), second.len());
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open");
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::Start(at)).expect("seek");
    file.write_all(forged.as_bytes()).expect("write");
    drop(file);

    // The entry is not silently replaced by another one: reads of it fail, naming the file.
    assert!(s.entry("00000002").is_none());
    assert!(s.entry_line("00000002").is_none());
    let err = s.fork(None).expect_err("the branch cannot be copied");
    assert!(matches!(err, SessionError::Reread { .. }), "{err}");
    assert!(err.to_string().contains("s.jsonl"), "{err}");
    assert!(err.to_string().contains("00000002"), "{err}");
    // What is in memory still works.
    assert_eq!(s.build_context(), context);

    // A file cut short is noticed the same way.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open")
        .set_len(10)
        .expect("truncate");
    assert!(s.entry("00000100").is_none());
    assert!(matches!(s.fork(None), Err(SessionError::Reread { .. })));
}

#[test]
fn forking_a_long_branch_copies_its_lines_byte_for_byte() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write(dir.path(), "long.jsonl", &linear(20_000, 2000));
    let mut s = SessionManager::open(&path).expect("opens");
    s.append_label("00000010", Some("early".into()))
        .expect("label");
    let fork = s.fork(None).expect("forks");
    assert!(fork.is_written());
    // The fork's context part is the original's (the label moved to the end): 50 kept
    // entries, the compaction and the label.
    assert_eq!(fork.active_branch().len(), 52);
    assert_eq!(s.active_branch().len(), 52);

    let original = lines_of(&path);
    let copied = lines_of(fork.session_file().expect("file"));
    // The header, the 20,000 entries as they are in the file (the label entry left out), and
    // the label recorded again at the end.
    assert_eq!(copied.len(), 1 + 20_000 + 1);
    assert_eq!(copied[1..20_001], original[1..20_001]);
    assert!(copied[20_001].contains("\"label\":\"early\""));
    assert_eq!(fork.label("00000010"), Some("early"));
    let reopened = SessionManager::open(fork.session_file().expect("file")).expect("opens");
    assert_eq!(reopened.build_context(), fork.build_context());
}

#[test]
fn cycles_repeated_ids_and_deep_chains_load_in_bounded_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let entry = |id: &str, parent: &str, text: &str| {
        let parent = match parent {
            "" => "null".to_string(),
            p => format!("\"{p}\""),
        };
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"t","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
        )
    };
    // a → c → b → a (a cycle through a later parent), then a self-parent, then a repeated id.
    let text = [
        HEADER.to_string(),
        entry("a", "c", "a"),
        entry("b", "a", "b"),
        entry("c", "b", "c"),
        entry("s", "s", "self"),
        entry("d", "", "first d"),
        entry("d", "", "second d"),
        entry("e", "d", "child of d"),
    ]
    .join("\n");
    let path = write(dir.path(), "hostile.jsonl", &text);
    let mut s = SessionManager::open(&path).expect("opens");
    assert_eq!(s.entry_count(), 7);
    // The repeated id names its last entry, and the leaf's branch goes through it.
    assert_eq!(
        s.entry("d")
            .and_then(|e| e.message().map(|m| serde_json::to_string(m).expect("json"))),
        Some(r#"{"role":"user","content":"second d","timestamp":1}"#.to_string())
    );
    assert_eq!(s.build_context().messages.len(), 2);
    // The cycle is cut where it comes back on itself.
    for id in ["a", "b", "c"] {
        s.branch(id).expect("branch");
        assert_eq!(s.branch_path().len(), 3, "{id}");
        assert_eq!(s.build_context().messages.len(), 3, "{id}");
    }
    s.branch("s").expect("branch");
    assert_eq!(s.branch_path().len(), 1);
    assert!(s.fork(Some("a")).is_ok());

    // A chain of 100,000 tiny entries: no recursion anywhere.
    let mut deep = String::from(HEADER);
    for i in 0..100_000u32 {
        let parent = match i {
            0 => "null".to_string(),
            _ => format!("\"{:x}\"", i - 1),
        };
        deep.push_str(&format!(
            "\n{{\"type\":\"custom\",\"customType\":\"x\",\"id\":\"{i:x}\",\"parentId\":{parent},\"timestamp\":\"t\"}}"
        ));
    }
    let path = write(dir.path(), "deep.jsonl", &deep);
    let s = SessionManager::open(&path).expect("opens");
    assert_eq!(s.branch_path().len(), 100_000);
    assert!(s.build_context().messages.is_empty());
    assert_eq!(s.branch_entries_of_type("custom").len(), 100_000);
}

#[test]
fn a_line_longer_than_the_limit_is_skipped_without_being_held() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("huge.jsonl");
    let text = linear(3, 0);
    let mut lines = text.lines();
    let mut file = std::fs::File::create(&path).expect("create");
    writeln!(file, "{}", lines.next().expect("header")).expect("write");
    writeln!(file, "{}", lines.next().expect("entry 1")).expect("write");
    // 65 MiB of one JSON string, in one line.
    file.write_all(b"{\"type\":\"custom\",\"id\":\"big\",\"data\":\"")
        .expect("write");
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..65 {
        file.write_all(&chunk).expect("write");
    }
    file.write_all(b"\"}\n").expect("write");
    for line in lines {
        writeln!(file, "{line}").expect("write");
    }
    drop(file);

    let s = SessionManager::open(&path).expect("opens");
    assert_eq!(s.entry_count(), 3);
    let skipped = &s.load_report().skipped;
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].line, 3);
    assert_eq!(skipped[0].reason, "longer than 64 MiB");
    assert!(s.entry("big").is_none());
    // The chain goes on past it (the skipped line was not in it).
    assert_eq!(s.branch_path().len(), 3);
    assert!(matches!(
        &s.leaf_entry().expect("leaf").kind,
        EntryKind::Message { .. }
    ));
}

#[test]
fn a_new_session_reads_its_lines_back_from_its_own_file_once_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut s = SessionManager::create("/p", dir.path());
    let u = s.append_message(user("one", 1)).expect("user");
    assert!(!s.is_written());
    let a = s
        .append_message(super::assistant("one!", 2))
        .expect("assistant");
    let u2 = s.append_message(user("two", 3)).expect("user");
    let path = s.session_file().expect("file").to_path_buf();
    let lines = lines_of(&path);
    for (id, line) in [&u, &a, &u2].iter().zip(&lines[1..]) {
        assert_eq!(s.entry_line(id).as_deref(), Some(line.as_str()));
    }
    // The lines are no longer kept in memory: off the branch, they come from the file.
    s.reset_leaf();
    let first = s.entry(&u).expect("read back");
    assert!(matches!(first, Cow::Owned(_)));
    std::fs::write(&path, "").expect("emptied by another program");
    assert!(s.entry(&u).is_none(), "read from the file, which changed");
}

#[test]
fn the_entries_a_move_leaves_are_read_from_the_index_as_the_compaction_helper_finds_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write(dir.path(), "s.jsonl", &linear(3000, 1000));
    let mut s = SessionManager::open(&path).expect("opens");
    s.branch("00000064").expect("branch");
    s.append_message(user("a side trip", 1)).expect("append");
    let leaf = s.leaf().expect("leaf").to_string();
    for target in [
        None,
        Some("00000001"),
        Some("00000063"),
        Some("00000bb8"),
        Some(leaf.as_str()),
    ] {
        let expected: Vec<String> =
            crate::compaction::entries_left(|e| s.path_to(e), &leaf, target)
                .into_iter()
                .map(|e| e.id)
                .collect();
        let left: Vec<String> = s
            .entries_left(&leaf, target)
            .into_iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(left, expected, "{target:?}");
    }
    assert_eq!(s.entries_left(&leaf, Some("00000063")).len(), 2);
}
