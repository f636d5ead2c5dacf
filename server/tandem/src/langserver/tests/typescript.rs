//! typescript-language-server on a small TypeScript project.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use tandem_coding::intel::{Document, LanguageIntel, Settle};

use super::{document, pos_of, servers, workspace};
use crate::langserver::Limits;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_diagnostics_definition_references_symbols_hover_and_rename() {
    let (_temp, root) = workspace("typescript");
    let servers = servers(&root, json!({}), Limits::default());
    let main = document(&root.join("src/main.ts"));
    let shapes = document(&root.join("src/shapes.ts"));
    let settle = |after| {
        Some(Settle {
            after,
            wait: Duration::from_secs(30),
            quiet: Duration::from_millis(300),
        })
    };

    let answer = servers
        .diagnostics(Some(vec![main.clone()]), settle(BTreeMap::new()))
        .await
        .expect("diagnostics");
    assert!(answer.settled, "{answer:?}");
    let file = &answer.files[0];
    let error = file
        .diagnostics
        .iter()
        .find(|d| d.code.as_deref() == Some("2322"))
        .unwrap_or_else(|| panic!("TS2322: {file:?}"));
    assert_eq!(error.span.start.line, 3);
    assert!(
        error.message.contains("not assignable to type 'string'"),
        "{error:?}"
    );

    let fixed = Document {
        path: main.path.clone(),
        text: main
            .text
            .replace("const label: string", "const label: number"),
    };
    let answer = servers
        .diagnostics(
            Some(vec![fixed.clone()]),
            settle(BTreeMap::from([(main.path.clone(), file.generation)])),
        )
        .await
        .expect("diagnostics after the fix");
    assert!(answer.settled, "{answer:?}");
    assert!(answer.files[0].generation > file.generation);
    assert!(answer.files[0].diagnostics.is_empty(), "{answer:?}");

    let at_use = pos_of(&fixed.text, "totalArea", 1);
    let found = servers
        .definition(fixed.clone(), at_use)
        .await
        .expect("definition");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].path, shapes.path);
    assert_eq!(found[0].span.start, pos_of(&shapes.text, "totalArea", 0));

    let refs = servers
        .references(shapes.clone(), pos_of(&shapes.text, "totalArea", 0), false)
        .await
        .expect("references");
    assert!(refs.iter().any(|l| l.path == main.path), "{refs:?}");

    let outline = servers
        .document_symbols(shapes.clone())
        .await
        .expect("symbols");
    let names: Vec<(&str, &str, u32)> = outline
        .iter()
        .map(|s| (s.name.as_str(), s.kind.as_str(), s.depth))
        .collect();
    assert!(names.contains(&("Circle", "class", 0)), "{names:?}");
    assert!(names.contains(&("area", "method", 1)), "{names:?}");
    assert!(names.contains(&("totalArea", "function", 0)), "{names:?}");

    let found = servers
        .workspace_symbols("totalArea".to_string(), None)
        .await
        .expect("workspace symbols of the running server");
    assert!(found.iter().any(|s| s.name == "totalArea"), "{found:?}");

    let hover = servers
        .hover(fixed.clone(), at_use)
        .await
        .expect("hover")
        .expect("a hover text");
    assert!(
        hover.contains("totalArea(circles: Circle[]): number"),
        "{hover}"
    );

    // At the declaration (at a use in main.ts, tsserver renames the import as an alias).
    let edits = servers
        .rename(
            shapes.clone(),
            pos_of(&shapes.text, "totalArea", 0),
            "sumOfAreas".to_string(),
        )
        .await
        .expect("rename");
    let mut files: Vec<_> = edits.iter().map(|f| f.path.clone()).collect();
    files.sort();
    assert_eq!(files, [main.path.clone(), shapes.path.clone()], "{edits:?}");
    servers.shutdown().await;
}
