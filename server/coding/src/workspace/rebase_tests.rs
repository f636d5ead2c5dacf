use std::path::PathBuf;

use super::*;

fn change(old: Option<&str>, new: &str, edits: Vec<TextEdit>) -> FileChange {
    FileChange {
        path: PathBuf::from("/w/a.txt"),
        real: PathBuf::from("/w/a.txt"),
        old_text: old.map(str::to_owned),
        new_text: new.to_owned(),
        edits,
    }
}

/// An edit of `old` replacing the only `from` with `to`.
fn edit(old: &str, from: &str, to: &str) -> FileChange {
    let start = old.find(from).expect("test text holds the replaced text");
    let edits = vec![TextEdit {
        range: start..start + from.len(),
        new_text: to.to_owned(),
    }];
    change(Some(old), &apply_edits(old, &edits), edits)
}

#[test]
fn an_unchanged_document_gets_the_change_as_computed() {
    let c = edit("hello world\n", "world", "there");
    let rebased = rebase(&c, Some("hello world\n"), "a.txt").unwrap();
    assert_eq!(rebased.new_text, "hello there\n");
    assert_eq!(rebased.edits, c.edits);
}

#[test]
fn typing_before_the_region_on_the_same_line_is_kept() {
    // The case: "hello world" + typed "XYZ " must not become "hello thereorld".
    let c = edit("hello world\n", "world", "there");
    let rebased = rebase(&c, Some("XYZ hello world\n"), "a.txt").unwrap();
    assert_eq!(rebased.new_text, "XYZ hello there\n");
    assert_eq!(rebased.edits[0].range, 10..15);
}

#[test]
fn typing_on_other_lines_shifts_the_region() {
    let old = "one\ntwo\nthree\n";
    let c = edit(old, "two", "TWO");
    let now = "zero\none\ntwo\nthree\nfour\n";
    assert_eq!(
        rebase(&c, Some(now), "a.txt").unwrap().new_text,
        "zero\none\nTWO\nthree\nfour\n"
    );
}

#[test]
fn typing_inside_the_region_is_a_conflict_showing_the_current_lines() {
    let c = edit("a\nb\nhello world\nc\n", "hello world", "bye");
    let err = rebase(&c, Some("a\nb\nhello brave world\nc\n"), "a.txt").unwrap_err();
    assert!(
        err.detail.contains("The user changed a.txt"),
        "{}",
        err.detail
    );
    assert!(err.detail.contains("no longer there"), "{}", err.detail);
    assert!(err.detail.contains("hello brave world"), "{}", err.detail);
    assert!(err.detail.contains("Lines 1-4"), "{}", err.detail);
}

#[test]
fn a_region_that_now_appears_twice_is_ambiguous() {
    let c = edit("fn a() {}\n", "fn a() {}", "fn b() {}");
    let err = rebase(&c, Some("fn a() {}\nfn a() {}\n"), "a.txt").unwrap_err();
    assert!(err.detail.contains("more than once"), "{}", err.detail);
}

#[test]
fn an_insertion_is_anchored_by_its_lines() {
    // Inserting at the start of "b" (an empty range) is placed by its line.
    let old = "a\nb\nc\n";
    let edits = vec![TextEdit {
        range: 2..2,
        new_text: "new\n".into(),
    }];
    let c = change(Some(old), &apply_edits(old, &edits), edits);
    let rebased = rebase(&c, Some("x\na\nb\nc\n"), "a.txt").unwrap();
    assert_eq!(rebased.new_text, "x\na\nnew\nb\nc\n");
}

#[test]
fn a_repeated_line_is_anchored_by_its_neighbours() {
    let old = "start\n}\nmiddle\n}\nend\n";
    // Replace the second "}" (after "middle").
    let at = old.rfind('}').unwrap();
    let edits = vec![TextEdit {
        range: at..at + 1,
        new_text: "};".into(),
    }];
    let c = change(Some(old), &apply_edits(old, &edits), edits);
    let rebased = rebase(&c, Some("typed\nstart\n}\nmiddle\n}\nend\n"), "a.txt").unwrap();
    assert_eq!(rebased.new_text, "typed\nstart\n}\nmiddle\n};\nend\n");
}

#[test]
fn a_whole_file_write_keeps_lines_the_user_changed_elsewhere() {
    let old = "a\nb\nc\nd\ne\n";
    let c = change(Some(old), "a\nb\nC\nd\ne\n", Vec::new());
    let rebased = rebase(&c, Some("a\nb\nc\nd\ne typed\n"), "a.txt").unwrap();
    assert_eq!(rebased.new_text, "a\nb\nC\nd\ne typed\n");
}

#[test]
fn a_new_file_that_appeared_or_a_file_that_went_is_a_conflict() {
    let created = change(None, "x", Vec::new());
    assert!(rebase(&created, Some("y"), "a.txt")
        .unwrap_err()
        .detail
        .contains("was created"));
    assert_eq!(rebase(&created, None, "a.txt").unwrap().new_text, "x");
    let deleted = edit("hello", "hello", "bye");
    assert!(rebase(&deleted, None, "a.txt")
        .unwrap_err()
        .detail
        .contains("was deleted"));
}

#[test]
fn multibyte_text_around_the_region_is_handled() {
    let c = edit("é€ x\n", "x", "y");
    assert_eq!(
        rebase(&c, Some("ü é€ x\n"), "a.txt").unwrap().new_text,
        "ü é€ y\n"
    );
}

/// A tiny deterministic generator (no dependency): xorshift.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// 1000 random interleavings of typing and one pending edit, checked against a reference:
/// every keystroke survives; the edit lands where its text is (its replacement present, once,
/// between the same neighbours) or is refused with nothing changed.
#[test]
fn random_typing_around_a_pending_edit_never_loses_a_keystroke() {
    let words = [
        "alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "θeta",
    ];
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut applied = 0;
    for round in 0..1000 {
        // A document of distinct numbered lines, so the target is unique.
        let lines: Vec<String> = (0..8)
            .map(|i| {
                format!(
                    "{} {i} {}",
                    words[rng.below(words.len())],
                    words[rng.below(8)]
                )
            })
            .collect();
        let old = lines.join("\n") + "\n";
        let target = format!(" {} ", rng.below(8));
        let to = format!("<{round}>");
        let c = edit(&old, &target, &to);
        // The user types: single characters at random places, each remembered with the marker
        // it carries ('#' never appears in the document or the edit).
        let mut now = old.clone();
        let typed = 1 + rng.below(6);
        for _ in 0..typed {
            let mut at = rng.below(now.len() + 1);
            while !now.is_char_boundary(at) {
                at -= 1;
            }
            now.insert(at, '#');
        }
        match rebase(&c, Some(&now), "a.txt") {
            Ok(rebased) => {
                applied += 1;
                let hashes = rebased.new_text.matches('#').count();
                assert_eq!(hashes, typed, "round {round}: a keystroke was lost");
                assert_eq!(rebased.new_text.matches(&to).count(), 1, "round {round}");
                // Without the keystrokes, the result is exactly the intended edit.
                assert_eq!(
                    rebased.new_text.replace('#', ""),
                    c.new_text,
                    "round {round}: the edit landed elsewhere"
                );
            }
            Err(conflict) => {
                // Refused only when a keystroke fell inside the replaced text or against it.
                let start = old.find(&target).unwrap();
                let end = start + target.len();
                let after = old[end..].chars().next().map_or(0, char::len_utf8);
                let guarded = &old[start - 1..end + after];
                assert!(
                    !now.contains(guarded),
                    "round {round}: refused although the text is intact: {}",
                    conflict.detail
                );
            }
        }
    }
    assert!(applied > 500, "only {applied} of 1000 applied");
}

#[test]
fn typing_against_the_region_is_a_conflict() {
    let c = edit("let x = 1;\n", "1", "2");
    assert!(rebase(&c, Some("let x = 10;\n"), "a.txt").is_err());
    assert_eq!(
        rebase(&c, Some("// typed\nlet x = 1;\n"), "a.txt")
            .unwrap()
            .new_text,
        "// typed\nlet x = 2;\n"
    );
}
