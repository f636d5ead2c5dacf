use super::*;

/// `n` numbered lines, line `i` produced by `line(i)`, newline-terminated.
fn lines(n: usize, line: impl Fn(usize) -> String) -> String {
    (1..=n).map(|i| format!("{}\n", line(i))).collect()
}

fn numbered(i: usize) -> String {
    format!("line {i}")
}

/// Expected outputs below are what pi's `generateDiffString` (with the `diff` package it uses)
/// prints for the same input.
#[track_caller]
fn check(old: &str, new: &str, diff: &str, first: usize) {
    assert_eq!(
        diff_details(old, new),
        DiffDetails {
            diff: diff.into(),
            first_changed_line: Some(first),
        }
    );
}

#[test]
fn matches_the_reference_session() {
    check(
        "hello world\nsecond line\n",
        "hello there\nsecond line\n",
        "-1 hello world\n+1 hello there\n 2 second line",
        1,
    );
}

#[test]
fn change_at_the_start() {
    let new = lines(10, |i| if i == 1 { "first".into() } else { numbered(i) });
    check(
        &lines(10, numbered),
        &new,
        "- 1 line 1\n+ 1 first\n  2 line 2\n  3 line 3\n  4 line 4\n  5 line 5\n    ...",
        1,
    );
}

#[test]
fn change_in_the_middle() {
    let new = lines(20, |i| if i == 10 { "ten".into() } else { numbered(i) });
    check(
        &lines(20, numbered),
        &new,
        "    ...\n  6 line 6\n  7 line 7\n  8 line 8\n  9 line 9\n-10 line 10\n+10 ten\n 11 line 11\n 12 line 12\n 13 line 13\n 14 line 14\n    ...",
        10,
    );
}

#[test]
fn change_at_the_end_without_final_newline() {
    let old = lines(10, numbered);
    let new = lines(10, |i| if i == 10 { "last".into() } else { numbered(i) });
    check(
        old.trim_end(),
        new.trim_end(),
        "    ...\n  6 line 6\n  7 line 7\n  8 line 8\n  9 line 9\n-10 line 10\n+10 last",
        10,
    );
}

#[test]
fn distant_hunks_are_separated() {
    let new = lines(20, |i| match i {
        3 => "three".into(),
        17 => "seventeen".into(),
        _ => numbered(i),
    });
    check(
        &lines(20, numbered),
        &new,
        "  1 line 1\n  2 line 2\n- 3 line 3\n+ 3 three\n  4 line 4\n  5 line 5\n  6 line 6\n  7 line 7\n    ...\n 13 line 13\n 14 line 14\n 15 line 15\n 16 line 16\n-17 line 17\n+17 seventeen\n 18 line 18\n 19 line 19\n 20 line 20",
        3,
    );
}

#[test]
fn close_hunks_share_their_context() {
    let new = lines(20, |i| match i {
        5 => "five".into(),
        12 => "twelve".into(),
        _ => numbered(i),
    });
    check(
        &lines(20, numbered),
        &new,
        "  1 line 1\n  2 line 2\n  3 line 3\n  4 line 4\n- 5 line 5\n+ 5 five\n  6 line 6\n  7 line 7\n  8 line 8\n  9 line 9\n 10 line 10\n 11 line 11\n-12 line 12\n+12 twelve\n 13 line 13\n 14 line 14\n 15 line 15\n 16 line 16\n    ...",
        5,
    );
}

#[test]
fn insertions_removals_and_final_newline() {
    check(
        "a\nb\nc\n",
        "a\nb\nnew 1\nnew 2\nc\n",
        " 1 a\n 2 b\n+3 new 1\n+4 new 2\n 3 c",
        3,
    );
    check("a\nb\nc\nd\n", "a\nd\n", " 1 a\n-2 b\n-3 c\n 4 d", 2);
    check("a\nb", "a\nb\n", " 1 a\n-2 b\n+2 b", 2);
}

#[test]
fn changes_among_identical_lines_sit_where_pi_puts_them() {
    check(
        "a\nx\nx\nx\nb\n",
        "a\nx\nx\nb\n",
        " 1 a\n 2 x\n 3 x\n-4 x\n 5 b",
        4,
    );
    check(
        "13\nx\nx\n16\n",
        "13\nchanged\nx\n16\n",
        " 1 13\n+2 changed\n 2 x\n-3 x\n 4 16",
        2,
    );
}

#[test]
fn no_change_no_diff() {
    assert_eq!(
        diff_details("same\n", "same\n"),
        DiffDetails {
            diff: String::new(),
            first_changed_line: None,
        }
    );
}

/// Whatever the settling pass moves, the diff still turns the old text into the new one.
#[test]
fn the_diff_is_always_a_valid_edit_script() {
    let vocabulary = ["x", "y", "{", "}", ""];
    let mut seed: u64 = 11;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    for _ in 0..2000 {
        let mut text = || -> String {
            let len = next(15);
            (0..len)
                .map(|_| format!("{}\n", vocabulary[next(vocabulary.len())]))
                .collect()
        };
        let (old, new) = (text(), text());
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
        let (old_lines, new_lines) = (&old_lines[..], &new_lines[..]);
        let mut script = edit_script(old_lines, new_lines);
        settle_late(&mut script, old_lines, new_lines);
        let (mut rebuilt_old, mut rebuilt_new) = (String::new(), String::new());
        for part in group(&script) {
            match part.kind {
                Kind::Same => {
                    assert_eq!(old_lines[part.old.clone()], new_lines[part.new.clone()]);
                    rebuilt_old.extend(old_lines[part.old.clone()].iter().copied());
                    rebuilt_new.extend(new_lines[part.new.clone()].iter().copied());
                }
                Kind::Removed => rebuilt_old.extend(old_lines[part.old.clone()].iter().copied()),
                Kind::Added => rebuilt_new.extend(new_lines[part.new.clone()].iter().copied()),
            }
        }
        assert_eq!((rebuilt_old, rebuilt_new), (old.clone(), new.clone()));
    }
}
