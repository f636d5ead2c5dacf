//! From a request to the block the model reads: exact output for samples, and the caps.

use std::path::{Path, PathBuf};

use super::build::{build, ContextRequest, MAX_LINE_CHARS, MAX_OPEN_FILES, MAX_SELECTION_LINES};
use super::languages::Language;
use super::render::{render, ContextDiagnostic, Focus, Severity, SymbolInfo};

const SHAPES: &str = r#"use std::fmt;

impl Shape for Rect {
    fn area(&self) -> f64 {
        let w = self.w;
        w * self.h
    }
}
"#;

fn diagnostic(severity: Severity, line: usize, message: &str) -> ContextDiagnostic {
    ContextDiagnostic {
        severity,
        line,
        end_line: line,
        message: message.to_string(),
        source: Some("rustc".to_string()),
        code: None,
    }
}

fn request<'a>(
    text: &'a str,
    path: &'a Path,
    selection: Option<std::ops::Range<usize>>,
) -> ContextRequest<'a> {
    ContextRequest {
        text,
        path,
        cwd: Some(Path::new("/work/app")),
        language_id: None,
        selection,
        diagnostics: None,
        open_files: &[],
    }
}

#[test]
fn a_selection_in_a_method() {
    let start = SHAPES.find("self.w").expect("w");
    let diagnostics = [
        ContextDiagnostic {
            code: Some("E0425".to_string()),
            ..diagnostic(Severity::Error, 5, "cannot find value `h`\nin this scope")
        },
        diagnostic(Severity::Warning, 4, "unused variable: `w`"),
        diagnostic(Severity::Warning, 0, "unused import: `std::fmt`"),
    ];
    let open_files = [
        PathBuf::from("/work/app/src/shapes.rs"),
        PathBuf::from("/work/app/src/main.rs"),
        PathBuf::from("/tmp/scratch.rs"),
    ];
    let path = PathBuf::from("/work/app/src/shapes.rs");
    let context = build(&ContextRequest {
        language_id: Some("rust"),
        diagnostics: Some(&diagnostics),
        open_files: &open_files,
        ..request(SHAPES, &path, Some(start..start + "self.w".len()))
    });
    let expected = "<editor-context>
Editor state sent with this message. Open files may have unsaved changes: the read tool returns the text the editor shows, not only what is on disk. Lines and columns count from 1.
File: src/shapes.rs (Rust)
Selection: 5:17 to 5:23
```rust
self.w
```
Enclosing symbol: impl Shape for Rect > method area, lines 4-7
```rust
    fn area(&self) -> f64 {
        let w = self.w;
        w * self.h
    }
```
Diagnostics in range:
- line 5: warning (rustc): unused variable: `w`
- line 6: error E0425 (rustc): cannot find value `h` in this scope
Elsewhere in this file: 1 warning (line 1)
Open files: /tmp/scratch.rs, src/main.rs, src/shapes.rs
</editor-context>
";
    assert_eq!(render(&context), expected);
}

#[test]
fn a_cursor_at_top_level() {
    let path = PathBuf::from("/work/app/src/shapes.rs");
    let context = build(&ContextRequest {
        diagnostics: Some(&[]),
        ..request(SHAPES, &path, Some(4..4))
    });
    let expected = "<editor-context>
Editor state sent with this message. Open files may have unsaved changes: the read tool returns the text the editor shows, not only what is on disk. Lines and columns count from 1.
File: src/shapes.rs (Rust)
Cursor: line 1, column 5
```rust
use std::fmt;
```
Enclosing symbol: none (top level)
Diagnostics in range: none
</editor-context>
";
    assert_eq!(render(&context), expected);
}

#[test]
fn a_language_without_a_grammar_shows_nearby_lines() {
    let text = "# Title\n\nSome `code` and ```fences```.\n";
    let path = PathBuf::from("/elsewhere/README.md");
    let at = text.find("Some").expect("some");
    let context = build(&request(text, &path, Some(at..at)));
    let expected = "<editor-context>
Editor state sent with this message. Open files may have unsaved changes: the read tool returns the text the editor shows, not only what is on disk. Lines and columns count from 1.
File: /elsewhere/README.md (markdown)
Cursor: line 3, column 1
````markdown
Some `code` and ```fences```.
````
Enclosing symbol: unknown (no parser for markdown); nearby lines 1-3:
````markdown
# Title

Some `code` and ```fences```.
````
</editor-context>
";
    assert_eq!(render(&context), expected);
}

#[test]
fn a_selection_of_the_whole_symbol_is_not_shown_twice() {
    let start = SHAPES.find("    fn area").expect("area");
    let end = SHAPES.rfind("}\n").expect("end");
    let path = PathBuf::from("/work/app/src/shapes.rs");
    let context = build(&request(SHAPES, &path, Some(start..end)));
    let out = render(&context);
    assert!(
        out.contains("Enclosing symbol: impl Shape for Rect > method area, lines 4-7 (the selection above)\n"),
        "{out}"
    );
    assert_eq!(out.matches("fn area").count(), 1, "{out}");
}

#[test]
fn no_position_means_no_symbol_and_all_diagnostics() {
    let path = PathBuf::from("/work/app/src/shapes.rs");
    let diagnostics = [
        diagnostic(Severity::Hint, 7, "x"),
        diagnostic(Severity::Error, 0, "y"),
    ];
    let context = build(&ContextRequest {
        diagnostics: Some(&diagnostics),
        ..request(SHAPES, &path, None)
    });
    assert_eq!(context.focus, None);
    assert_eq!(context.symbol, SymbolInfo::NoFocus);
    let lines: Vec<usize> = context
        .diagnostics
        .iter()
        .flatten()
        .map(|d| d.line)
        .collect();
    assert_eq!(lines, [0, 7]);
    assert!(!render(&context).contains("Enclosing symbol"));
}

#[test]
fn long_symbols_show_a_window_and_the_signature() {
    let mut text = String::from("fn long() {\n");
    for i in 0..1000 {
        text.push_str(&format!("    step({i});\n"));
    }
    text.push_str("}\n");
    let at = text.find("step(700)").expect("step");
    let path = PathBuf::from("/work/app/long.rs");
    let context = build(&request(&text, &path, Some(at..at)));
    let SymbolInfo::Found {
        symbol,
        text: Some(excerpt),
    } = &context.symbol
    else {
        panic!("no symbol: {:?}", context.symbol);
    };
    assert_eq!((symbol.start_line, symbol.end_line), (0, 1001));
    // Line 701 is the cursor's; the window starts 20 lines above it.
    assert_eq!((excerpt.first_line, excerpt.last_line), (681, 880));
    let out = render(&context);
    assert!(
        out.contains("Enclosing symbol: function long, lines 1-1002 (showing lines 682-881)\nSignature: fn long()\n"),
        "{out}"
    );
}

#[test]
fn selections_and_lines_are_capped() {
    let long_line = "x".repeat(MAX_LINE_CHARS + 10);
    let mut text = format!("{long_line}\n");
    for _ in 0..MAX_SELECTION_LINES + 50 {
        text.push_str("y\n");
    }
    let path = PathBuf::from("/work/app/data.txt");
    let context = build(&request(&text, &path, Some(0..text.len())));
    let Some(Focus::Selection(selection)) = &context.focus else {
        panic!("no selection");
    };
    assert_eq!(selection.text.last_line, MAX_SELECTION_LINES - 1);
    let first = selection.text.text.lines().next().expect("first line");
    assert_eq!(first.chars().count(), MAX_LINE_CHARS + 1);
    assert!(first.ends_with('…'));
    let out = render(&context);
    assert!(
        out.contains("Selection: 1:1 to 252:1 (first 200 lines shown)\n"),
        "{out}"
    );
}

#[test]
fn open_files_are_capped() {
    let open: Vec<PathBuf> = (0..MAX_OPEN_FILES + 5)
        .map(|i| PathBuf::from(format!("/work/app/f{i:03}.rs")))
        .collect();
    let path = PathBuf::from("/work/app/f000.rs");
    let context = build(&ContextRequest {
        open_files: &open,
        ..request("", &path, None)
    });
    assert_eq!(context.open_files.len(), MAX_OPEN_FILES);
    assert_eq!(context.open_files_omitted, 5);
    assert!(render(&context).contains(", f049.rs, … and 5 more\n"));
    assert_eq!(context.language, Language::Rust);
}

#[test]
fn crlf_documents_show_clean_lines() {
    let text = SHAPES.replace('\n', "\r\n");
    let at = text.find("w * self.h").expect("line");
    let path = PathBuf::from("/work/app/src/shapes.rs");
    let context = build(&request(&text, &path, Some(at..at)));
    let out = render(&context);
    assert!(!out.contains('\r'), "{out:?}");
    assert!(
        out.contains("Cursor: line 6, column 9\n```rust\n        w * self.h\n```\n"),
        "{out}"
    );
    assert!(out.contains("method area, lines 4-7\n"), "{out}");
}

#[test]
fn the_rest_of_the_files_errors_and_warnings_are_counted_with_their_lines() {
    let path = PathBuf::from("/work/app/src/shapes.rs");
    let start = SHAPES.find("self.w").expect("w");
    let mut diagnostics = vec![
        diagnostic(Severity::Error, 5, "in range"),
        diagnostic(Severity::Hint, 0, "hints elsewhere are not counted"),
        diagnostic(Severity::Warning, 0, "unused import"),
        diagnostic(
            Severity::Warning,
            0,
            "on the same line: two warnings, one line",
        ),
    ];
    diagnostics.extend((20..32).map(|line| diagnostic(Severity::Error, line, "far away")));
    let context = build(&ContextRequest {
        diagnostics: Some(&diagnostics),
        ..request(SHAPES, &path, Some(start..start))
    });
    let text = render(&context);
    assert!(
        text.contains(
            "Elsewhere in this file: 12 errors (lines 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, …), \
             2 warnings (line 1)\n"
        ),
        "{text}"
    );
    // Without a focus every diagnostic is in range: nothing is elsewhere.
    let context = build(&ContextRequest {
        diagnostics: Some(&diagnostics),
        ..request(SHAPES, &path, None)
    });
    assert!(!render(&context).contains("Elsewhere"));
}
