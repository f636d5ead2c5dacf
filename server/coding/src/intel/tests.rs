use std::time::Duration;

use super::report::{after_edit, compare, line, seconds, EditedFile};
use super::*;
use crate::settings::DiagnosticsSettings;

fn diag(line: u32, character: u32, severity: Severity, source: &str, message: &str) -> Diagnostic {
    Diagnostic {
        span: Span {
            start: Pos { line, character },
            end: Pos {
                line,
                character: character + 1,
            },
        },
        severity,
        source: Some(source.into()),
        code: None,
        message: message.into(),
    }
}

#[test]
fn positions_convert_between_the_models_columns_and_utf16() {
    // "é" is one UTF-16 unit, "𝄞" two; the model counts characters.
    let text = "ab\r\né𝄞x = 1\n";
    assert_eq!(
        Pos::from_user(text, 2, 3),
        Some(Pos {
            line: 1,
            character: 3
        })
    );
    assert_eq!(
        Pos {
            line: 1,
            character: 3
        }
        .to_user(Some(text)),
        (2, 3)
    );
    assert_eq!(
        Pos {
            line: 1,
            character: 3
        }
        .offset(text),
        "ab\r\né𝄞".len()
    );
    // A column past the line's end is its end; the line's `\r` is not a character of it.
    assert_eq!(
        Pos::from_user(text, 1, 99),
        Some(Pos {
            line: 0,
            character: 2
        })
    );
    assert_eq!(Pos::from_user(text, 4, 1), None);
    assert_eq!(Pos::from_user(text, 0, 1), None);
    // Without the text, the UTF-16 column is shown one-based.
    assert_eq!(
        Pos {
            line: 4,
            character: 7
        }
        .to_user(None),
        (5, 8)
    );
    // Offsets clamp to the line's end and the text's end.
    assert_eq!(
        Pos {
            line: 0,
            character: 50
        }
        .offset(text),
        3
    );
    assert_eq!(
        Pos {
            line: 9,
            character: 0
        }
        .offset(text),
        text.len()
    );
}

fn refs(v: &[Diagnostic]) -> Vec<&Diagnostic> {
    v.iter().collect()
}

#[test]
fn compare_matches_by_what_a_diagnostic_says_not_where() {
    let before = vec![
        diag(3, 0, Severity::Error, "Pyright", "x is not defined"),
        diag(7, 0, Severity::Warning, "Ruff", "unused import"),
    ];
    // An edit above moved both; one new error; the warning fixed.
    let after = vec![
        diag(5, 0, Severity::Error, "Pyright", "x is not defined"),
        diag(6, 2, Severity::Error, "Pyright", "y is not defined"),
    ];
    let (new, gone) = compare(&refs(&before), &refs(&after));
    assert_eq!(new, vec![&after[1]]);
    assert_eq!(gone, vec![&before[1]]);
    // Counts matter: a second copy of a message is new.
    let after = vec![before[0].clone(), before[0].clone()];
    let (new, gone) = compare(&refs(&before[..1]), &refs(&after));
    assert_eq!(new.len(), 1);
    assert!(gone.is_empty());
}

#[test]
fn a_line_names_file_position_severity_source_code_and_message() {
    let mut d = diag(
        0,
        4,
        Severity::Error,
        "Pyright",
        "Cannot access\n  attribute",
    );
    d.code = Some("reportAttributeAccessIssue".into());
    assert_eq!(
        line("app.py", Some("é𝄞abcdef"), &d),
        "app.py:1:4: error [Pyright reportAttributeAccessIssue] Cannot access attribute"
    );
    let long = diag(0, 0, Severity::Warning, "x", &"m".repeat(400));
    assert!(line("a", None, &long).ends_with('…'));
}

fn answer(diagnostics: Vec<Diagnostic>, settled: bool) -> DiagnosticsAnswer {
    DiagnosticsAnswer {
        files: vec![FileDiagnostics {
            path: "/w/app.py".into(),
            generation: 2,
            analyzed: true,
            diagnostics,
        }],
        settled,
    }
}

#[test]
fn the_after_edit_report_lists_new_ones_fixed_ones_and_a_wait_that_ran_out() {
    let config = DiagnosticsSettings::default().config();
    let before = vec![diag(
        1,
        0,
        Severity::Warning,
        "Ruff",
        "`os` imported but unused",
    )];
    let after = answer(
        vec![
            diag(
                4,
                11,
                Severity::Error,
                "Pyright",
                "Cannot access attribute \"nme\"",
            ),
            diag(5, 0, Severity::Hint, "Pyright", "unreachable code"),
        ],
        false,
    );
    let report = after_edit(
        &config,
        &EditedFile {
            shown: "app.py",
            text: "",
            before: &before,
            after: &after,
            source: "the editor",
            waited: Duration::from_millis(1500),
        },
    )
    .expect("a report");
    assert_eq!(
        report,
        "New diagnostics in app.py after this change, from the editor:\n\
         app.py:5:12: error [Pyright] Cannot access attribute \"nme\"\n\
         Fixed by this change (1): warning [Ruff] `os` imported but unused\n\
         (Stopped waiting for the language servers after 1.5 s; this may be incomplete.)"
    );
    // Nothing new: said, with what remains.
    let after = answer(before.clone(), true);
    let report = after_edit(
        &config,
        &EditedFile {
            shown: "app.py",
            text: "",
            before: &before,
            after: &after,
            source: "the editor",
            waited: Duration::from_millis(1500),
        },
    );
    assert_eq!(
        report.as_deref(),
        Some("No new errors or warnings in app.py (0 errors and 1 warning already there).")
    );
    // A file no language server looks at: nothing at all.
    let mut quiet = answer(Vec::new(), true);
    quiet.files[0].analyzed = false;
    assert_eq!(
        after_edit(
            &config,
            &EditedFile {
                shown: "a.txt",
                text: "",
                before: &[],
                after: &quiet,
                source: "the editor",
                waited: Duration::from_millis(1500),
            },
        ),
        None
    );
}

#[test]
fn the_report_is_bounded_and_filtered_by_the_settings() {
    let config = DiagnosticsSettings {
        max_items: Some(2),
        ignore_sources: Some(vec!["ruff".into()]),
        ..Default::default()
    }
    .config();
    let after = answer(
        (0..5)
            .map(|i| diag(i, 0, Severity::Error, "Pyright", &format!("e{i}")))
            .chain([diag(9, 0, Severity::Error, "Ruff", "ruff's")])
            .collect(),
        true,
    );
    let report = after_edit(
        &config,
        &EditedFile {
            shown: "app.py",
            text: "",
            before: &[],
            after: &after,
            source: "the editor",
            waited: Duration::from_secs(1),
        },
    )
    .expect("a report");
    assert_eq!(report.lines().count(), 4, "{report}");
    assert!(report.ends_with("… and 3 more (the diagnostics tool lists them all)"));
    assert!(!report.contains("ruff's"));
    let errors_only = DiagnosticsSettings {
        min_severity: Some("error".into()),
        sources: Some(vec!["RUFF".into()]),
        ..Default::default()
    }
    .config();
    assert!(errors_only.wants_source(Some("Ruff")));
    assert!(!errors_only.wants_source(Some("Pyright")));
    assert!(!errors_only.wants_source(None));
    assert!(!errors_only.warnings);
    assert_eq!(seconds(Duration::from_millis(300)), "300 ms");
    assert_eq!(seconds(Duration::from_secs(2)), "2 s");
}
