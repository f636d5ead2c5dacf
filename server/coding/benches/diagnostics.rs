//! The diagnostics report that ends an applied edit's result: matching a file's diagnostics
//! before and after the edit (by what they say) and writing the lines the model reads, for files
//! with 10, 1,000 and 10,000 diagnostics of which one is new.
//!
//! Besides the time, it prints the report's size: what diagnostics add to a turn is bounded by
//! `diagnostics.maxItems` (20 lines of at most ~300 characters), whatever the file holds.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use tandem_coding::intel::report::{after_edit, EditedFile};
use tandem_coding::intel::{Diagnostic, DiagnosticsAnswer, FileDiagnostics, Pos, Severity, Span};
use tandem_coding::settings::DiagnosticsSettings;

fn diagnostic(i: usize) -> Diagnostic {
    Diagnostic {
        span: Span {
            start: Pos {
                line: i as u32,
                character: 4,
            },
            end: Pos {
                line: i as u32,
                character: 9,
            },
        },
        severity: if i.is_multiple_of(3) {
            Severity::Error
        } else {
            Severity::Warning
        },
        source: Some("Pyright".into()),
        code: Some("reportAttributeAccessIssue".into()),
        message: format!("Cannot access attribute \"field_{i}\" for class \"Record\""),
    }
}

fn bench(c: &mut Criterion) {
    let config = DiagnosticsSettings::default().config();
    for n in [10usize, 1_000, 10_000] {
        let before: Vec<Diagnostic> = (0..n).map(diagnostic).collect();
        // The edit added one line at the top: every diagnostic moved, plus n new ones when
        // `flood`, one otherwise.
        for flood in [false, true] {
            let mut after: Vec<Diagnostic> = before
                .iter()
                .cloned()
                .map(|mut d| {
                    d.span.start.line += 1;
                    d
                })
                .collect();
            let added = if flood { n } else { 1 };
            after.extend((n..n + added).map(diagnostic));
            let answer = DiagnosticsAnswer {
                files: vec![FileDiagnostics {
                    path: "/w/app.py".into(),
                    generation: 2,
                    analyzed: true,
                    diagnostics: after,
                }],
                settled: true,
            };
            let file = EditedFile {
                shown: "src/app.py",
                text: "",
                before: &before,
                after: &answer,
                source: "the editor",
                waited: Duration::from_millis(1500),
            };
            let report = after_edit(&config, &file).unwrap_or_default();
            println!(
                "report for {n} diagnostics, {added} new: {} bytes, {} lines",
                report.len(),
                report.lines().count()
            );
            let name = format!(
                "after_edit/{n}/{}",
                if flood { "all_new" } else { "one_new" }
            );
            c.bench_function(&name, |b| b.iter(|| after_edit(&config, &file)));
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
