//! The edit tool's matcher and planner (`tandem_coding::tools` edit_match / edit_normalize /
//! the CRLF and BOM view), through `tools::fuzz_plan_edit`, the function the tool runs.
//!
//! Input: `content NUL old NUL new [NUL old NUL new]…` (lossy UTF-8 each; at most 8 edits).
//! Checks: no panic; on success the replaced ranges are sorted, disjoint, inside the file, on
//! char boundaries and never split a CRLF; the new text is the file with exactly those ranges
//! replaced (every other byte kept); the file changes; and when every oldText occurs verbatim
//! in a file without CR or BOM, each range covers exactly one oldText and gets its newText.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_coding::tools::fuzz_plan_edit;

fuzz_target!(|data: &[u8]| {
    let mut fields = data
        .split(|&b| b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned());
    let Some(content) = fields.next() else {
        return;
    };
    let rest: Vec<String> = fields.collect();
    let edits: Vec<(String, String)> = rest
        .chunks(2)
        .take(8)
        .map(|pair| (pair[0].clone(), pair.get(1).cloned().unwrap_or_default()))
        .collect();
    if edits.is_empty() {
        return;
    }
    let Ok((new_text, ranges)) = fuzz_plan_edit(&content, &edits) else {
        return;
    };

    let mut rebuilt = String::new();
    let mut at = 0;
    for edit in &ranges {
        let r = &edit.range;
        assert!(
            at <= r.start && r.start <= r.end && r.end <= content.len(),
            "{ranges:?}"
        );
        assert!(content.is_char_boundary(r.start) && content.is_char_boundary(r.end));
        let bytes = content.as_bytes();
        for cut in [r.start, r.end] {
            let splits_crlf =
                cut > 0 && bytes.get(cut - 1) == Some(&b'\r') && bytes.get(cut) == Some(&b'\n');
            assert!(!splits_crlf, "a range splits a CRLF at {cut}");
        }
        rebuilt.push_str(&content[at..r.start]);
        rebuilt.push_str(&edit.new_text);
        at = r.end;
    }
    rebuilt.push_str(&content[at..]);
    assert_eq!(
        rebuilt, new_text,
        "the new text is not the file with the ranges replaced"
    );
    assert_ne!(new_text, content, "a successful edit changed nothing");

    let plain = !content.contains('\r') && !content.starts_with('\u{feff}');
    let exact = edits.iter().all(|(old, new)| {
        !old.contains('\r') && !new.contains('\r') && content.contains(old.as_str())
    });
    if plain && exact {
        assert_eq!(ranges.len(), edits.len());
        for edit in &ranges {
            let covered = &content[edit.range.clone()];
            assert!(
                edits
                    .iter()
                    .any(|(old, new)| old == covered && *new == edit.new_text),
                "range {:?} covers {covered:?}, which is no oldText",
                edit.range
            );
        }
    }
});
