//! ruff and basedpyright on a small Python project.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_coding::intel::{Document, LanguageIntel, Settle, Severity};

use super::{document, pos_of, servers, workspace};
use crate::langserver::Limits;

fn settle(after: BTreeMap<std::path::PathBuf, u64>) -> Option<Settle> {
    Some(Settle {
        after,
        wait: Duration::from_secs(30),
        quiet: Duration::from_millis(300),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ruff_and_basedpyright_diagnostics_merge_and_settle_after_a_fix() {
    let (_temp, root) = workspace("python");
    let servers = servers(&root, json!({}), Limits::default());
    assert_eq!(servers.names(), ["basedpyright", "ruff", "typescript"]);
    let main = document(&root.join("main.py"));
    let shapes = document(&root.join("shapes.py"));

    let answer = servers
        .diagnostics(
            Some(vec![main.clone(), shapes.clone()]),
            settle(BTreeMap::new()),
        )
        .await
        .expect("diagnostics");
    assert!(answer.settled, "{answer:?}");
    let [main_diags, shapes_diags] = &answer.files[..] else {
        panic!("two files: {answer:?}")
    };
    assert!(
        main_diags.analyzed && main_diags.generation >= 2,
        "{main_diags:?}"
    );
    let type_error = main_diags
        .diagnostics
        .iter()
        .find(|d| d.code.as_deref() == Some("reportAssignmentType"))
        .unwrap_or_else(|| panic!("basedpyright's type error: {main_diags:?}"));
    assert_eq!(type_error.severity, Severity::Error);
    assert_eq!(type_error.source.as_deref(), Some("basedpyright"));
    assert_eq!(type_error.span.start.line, 3);
    let unused = shapes_diags
        .diagnostics
        .iter()
        .find(|d| d.code.as_deref() == Some("F401"))
        .unwrap_or_else(|| panic!("ruff's unused import: {shapes_diags:?}"));
    assert_eq!(unused.source.as_deref(), Some("Ruff"));
    assert_eq!(unused.span.start.line, 0);

    // The fix: the type error goes, after newer reports than the ones seen.
    let fixed = Document {
        path: main.path.clone(),
        text: main.text.replace("count: int = \"two\"", "count: int = 2"),
    };
    let before = main_diags.generation;
    let started = Instant::now();
    let answer = servers
        .diagnostics(
            Some(vec![fixed.clone()]),
            settle(BTreeMap::from([(main.path.clone(), before)])),
        )
        .await
        .expect("diagnostics after the fix");
    eprintln!("settled after a change in {:?}", started.elapsed());
    assert!(answer.settled, "{answer:?}");
    let file = &answer.files[0];
    assert!(file.generation > before, "{file:?}");
    assert!(
        file.diagnostics
            .iter()
            .all(|d| d.severity != Severity::Error),
        "{file:?}"
    );

    // Nothing changed: the answer is at once, as it was.
    let started = Instant::now();
    let again = servers
        .diagnostics(
            Some(vec![fixed]),
            settle(BTreeMap::from([(main.path.clone(), file.generation)])),
        )
        .await
        .expect("diagnostics again");
    assert!(again.settled);
    assert_eq!(again.files[0].generation, file.generation);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    // Every file known, without naming one.
    let known = servers
        .diagnostics(None, None)
        .await
        .expect("all diagnostics");
    let paths: Vec<_> = known.files.iter().map(|f| f.path.clone()).collect();
    assert!(
        paths.contains(&main.path) && paths.contains(&shapes.path),
        "{paths:?}"
    );
    servers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_definition_references_symbols_hover_and_rename() {
    let (_temp, root) = workspace("python");
    let servers = servers(&root, json!({}), Limits::default());
    let main = document(&root.join("main.py"));
    let shapes = document(&root.join("shapes.py"));

    let at_use = pos_of(&main.text, "total_area", 1);
    let found = servers
        .definition(main.clone(), at_use)
        .await
        .expect("definition");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, shapes.path);
    assert_eq!(found[0].span.start, pos_of(&shapes.text, "total_area", 0));

    let refs = servers
        .references(shapes.clone(), pos_of(&shapes.text, "area()", 0), true)
        .await
        .expect("references");
    assert!(
        refs.iter()
            .any(|l| l.path == shapes.path && l.span.start.line == 7),
        "{refs:?}"
    );
    assert!(
        refs.iter()
            .any(|l| l.path == shapes.path && l.span.start.line == 13),
        "{refs:?}"
    );

    let outline = servers
        .document_symbols(shapes.clone())
        .await
        .expect("symbols");
    let names: Vec<(&str, &str, u32)> = outline
        .iter()
        .filter(|s| s.kind != "variable")
        .map(|s| (s.name.as_str(), s.kind.as_str(), s.depth))
        .collect();
    assert_eq!(
        names,
        [
            ("Circle", "class", 0),
            ("__init__", "method", 1),
            ("area", "method", 1),
            ("total_area", "function", 0)
        ],
        "{outline:?}"
    );

    let found = servers
        .workspace_symbols("total_area".to_string(), Some(main.clone()))
        .await
        .expect("workspace symbols");
    assert!(
        found
            .iter()
            .any(|s| s.name == "total_area" && s.location.path == shapes.path),
        "{found:?}"
    );

    let hover = servers
        .hover(main.clone(), at_use)
        .await
        .expect("hover")
        .expect("a hover text");
    assert!(hover.contains("def total_area"), "{hover}");
    assert!(
        hover.contains("The area of all the circles together."),
        "{hover}"
    );

    let edits = servers
        .rename(main.clone(), at_use, "sum_of_areas".to_string())
        .await
        .expect("rename");
    let mut files: Vec<_> = edits
        .iter()
        .map(|f| (f.path.clone(), f.edits.len()))
        .collect();
    files.sort();
    let mut expected = vec![(main.path.clone(), 2), (shapes.path.clone(), 1)];
    expected.sort();
    assert_eq!(files, expected, "{edits:?}");
    assert!(edits
        .iter()
        .flat_map(|f| &f.edits)
        .all(|(_, text)| text == "sum_of_areas"));
    servers.shutdown().await;
}

/// `field` of /proc/PID/status (`VmRSS:`, `RssAnon:`) in KiB: of this process, or summed over
/// every process in the groups led by `pids`.
fn rss_kib(field: &str, pids: Option<&[u32]>) -> u64 {
    let status = |pid: &str| -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with(field))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            })
            .unwrap_or(0)
    };
    let Some(groups) = pids else {
        return status("self");
    };
    let mut total = 0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{name}/stat")) else {
            continue;
        };
        // pgrp is the 5th field, after the parenthesised command.
        let after = stat.rsplit_once(')').map(|(_, a)| a).unwrap_or_default();
        let pgrp: u32 = after
            .split_whitespace()
            .nth(2)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if groups.contains(&pgrp) {
            total += status(&name);
        }
    }
    total
}

/// Figures for the report (not a test of speed): the client's memory with ruff and
/// basedpyright warm, the servers' own, a didChange to settled diagnostics, what the client adds
/// after the last server's report (the added latency of the report after an edit), and a
/// definition.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "prints measurements; run with --ignored --nocapture"]
async fn measure_warm_clients_settling_and_definitions() {
    let (_temp, root) = workspace("python");
    let before = (rss_kib("VmRSS:", None), rss_kib("RssAnon:", None));
    let servers = servers(&root, json!({}), Limits::default());
    let main = document(&root.join("main.py"));
    let shapes = document(&root.join("shapes.py"));
    let first = Instant::now();
    servers
        .diagnostics(Some(vec![main.clone(), shapes.clone()]), None)
        .await
        .expect("diagnostics");
    let started = first.elapsed();
    let warm = (rss_kib("VmRSS:", None), rss_kib("RssAnon:", None));
    let running = servers.pool.running();
    let pids: Vec<u32> = running.iter().filter_map(|c| c.pid()).collect();
    let servers_rss = rss_kib("VmRSS:", Some(&pids));
    let mut lines = Vec::new();
    for quiet_ms in [250, 0] {
        let mut settles = Vec::new();
        let mut added = Vec::new();
        let mut generation = servers
            .diagnostics(Some(vec![main.clone()]), None)
            .await
            .expect("diagnostics")
            .files[0]
            .generation;
        for i in 0..20 {
            // Broken and mended in turn: each answer must hold the change's own report.
            let broken = i % 2 == 0;
            let value = if broken {
                format!("\"{i}-{quiet_ms}\"")
            } else {
                format!("{i}")
            };
            let text = main
                .text
                .replace("count: int = \"two\"", &format!("count: int = {value}"));
            let changed = Document {
                path: main.path.clone(),
                text,
            };
            let t = Instant::now();
            let answer = servers
                .diagnostics(
                    Some(vec![changed]),
                    Some(Settle {
                        after: BTreeMap::from([(main.path.clone(), generation)]),
                        wait: Duration::from_secs(10),
                        quiet: Duration::from_millis(quiet_ms),
                    }),
                )
                .await
                .expect("diagnostics");
            let done = Instant::now();
            assert!(answer.settled);
            let type_error = answer.files[0]
                .diagnostics
                .iter()
                .any(|d| d.code.as_deref() == Some("reportAssignmentType"));
            assert_eq!(type_error, broken, "run {i}: {answer:?}");
            generation = answer.files[0].generation;
            settles.push(done - t);
            let last = running
                .iter()
                .filter_map(|c| c.reported_at(&main.path))
                .max()
                .expect("reports");
            added.push(done.saturating_duration_since(last.into_std()));
        }
        settles.sort();
        added.sort();
        lines.push(format!(
            "quietMs {quiet_ms}: didChange to settled diagnostics, 20 runs: median {:?}, max {:?}; \
             after the last server's report: median {:?}, max {:?}",
            settles[10], settles[19], added[10], added[19]
        ));
    }
    let at_use = pos_of(&main.text, "total_area", 1);
    let mut definitions = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        servers
            .definition(main.clone(), at_use)
            .await
            .expect("definition");
        definitions.push(t.elapsed());
    }
    definitions.sort();
    eprintln!(
        "first diagnostics of two files (start + analysis): {started:?}\n\
         this process: RSS {} KiB before, {} KiB with ruff and basedpyright warm; of it \
         anonymous (heap, stacks) {} KiB before, {} KiB warm (the rest is the binary's code \
         pages)\n\
         the servers' processes: {servers_rss} KiB\n\
         {}\n\
         definition, 20 runs: median {:?}, max {:?}",
        before.0,
        warm.0,
        before.1,
        warm.1,
        lines.join("\n"),
        definitions[10],
        definitions[19],
    );
    servers.shutdown().await;
}
