use super::*;
use crate::workspace::TextEdit;

fn change(old: Option<&str>, new: &str) -> FileChange {
    FileChange {
        path: PathBuf::from("/p/src/a.rs"),
        real: PathBuf::from("/p/src/a.rs"),
        old_text: old.map(str::to_string),
        new_text: new.to_string(),
        edits: Vec::<TextEdit>::new(),
    }
}

#[test]
fn an_edit_deep_in_a_file_is_numbered_by_the_files_lines() {
    let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let new = old.replace("line 30\n", "line thirty\n");
    let record = ProposedChange::new(&change(Some(&old), &new), Path::new("/p"));
    assert_eq!(
        record.diff,
        "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -27,7 +27,7 @@\n line 27\n line 28\n line 29\n\
         -line 30\n+line thirty\n line 31\n line 32\n line 33\n"
    );
    assert_eq!(record.old_text.as_deref(), Some(old.as_str()));
    assert_eq!(record.new_text, new);
}

#[test]
fn a_new_file_comes_from_dev_null() {
    let record = ProposedChange::new(&change(None, "x\ny\n"), Path::new("/p"));
    assert_eq!(
        record.diff,
        "--- /dev/null\n+++ b/src/a.rs\n@@ -0,0 +1,2 @@\n+x\n+y\n"
    );
}

#[test]
fn a_record_is_taken_once_and_cleared_with_the_run() {
    let records = CallRecords::new();
    let proposed = ProposedChange::new(&change(Some("a\n"), "b\n"), Path::new("/p"));
    records.propose("c1", proposed.clone());
    records.propose("c2", proposed.clone());
    assert_eq!(records.take("c1").and_then(|r| r.change), Some(proposed));
    assert_eq!(records.take("c1"), None);
    records.clear();
    assert_eq!(records.take("c2"), None);
}
