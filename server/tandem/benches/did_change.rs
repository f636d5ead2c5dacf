//! didChange latency on a 10 MB document (DESIGN.md target: ≤ 100 µs per incremental change).
//!
//! One change per iteration through `DocumentStore::change`, as the server applies a
//! `didChange` notification: URI lookup, position conversion in the negotiated encoding,
//! the rope edit and the version update. The document is ~250k lines of code-like text with
//! CJK and emoji on some lines, so UTF-16 conversion has surrogate pairs to count. The insert
//! bench types at the same spot every iteration, so that line grows by a few million chars
//! over a run, as a long typing session would; the replacement keeps the document's size.
//!
//! `tandem` is a binary crate, so the store's two files are compiled into this bench by path.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

// `documents.rs` names its sibling as `super::position`: both sit at this crate's root.
#[allow(dead_code)]
#[path = "../src/lsp/documents.rs"]
mod documents;
#[allow(dead_code)]
#[path = "../src/lsp/position.rs"]
mod position;

use documents::{DocumentStore, TextChange};
use position::{Position, PositionEncoding, Range};

const URI: &str = "file:///bench/big.rs";
const LINES: usize = 250_000;
const MID: u32 = (LINES / 2) as u32;

/// ~40 bytes a line; every tenth line (offset 7) carries CJK and an emoji.
fn big_document() -> String {
    let mut text = String::with_capacity(LINES * 41);
    for i in 0..LINES {
        if i % 10 == 7 {
            text.push_str(&format!("    // 注释 😀 note {i:08} ok\r\n"));
        } else {
            text.push_str(&format!("    let v{i:08} = compute({i:08}) + 1;\n"));
        }
    }
    text
}

fn open(encoding: PositionEncoding) -> DocumentStore {
    let mut store = DocumentStore::new(encoding);
    store.open(URI, "rust", 0, &big_document());
    store
}

fn insert_char(c: &mut Criterion, name: &str, encoding: PositionEncoding) {
    let mut store = open(encoding);
    let at = Position::new(MID, 10);
    let changes = [TextChange::replace(Range::new(at, at), "x")];
    let mut version = 0;
    c.bench_function(name, |b| {
        b.iter(|| {
            version += 1;
            store
                .change(black_box(URI), version, black_box(&changes))
                .expect("the document is open");
        })
    });
}

/// Replaces 100 ASCII chars spanning three lines with 100 chars of the same shape, so the
/// document keeps its size and the range stays valid from one iteration to the next.
fn replace_100(c: &mut Criterion, name: &str, encoding: PositionEncoding) {
    let mut store = open(encoding);
    let document = store.get(URI).expect("just opened");
    let rope = document.text();
    let start = Position::new(MID, 5);
    let start_char = position::position_to_char(rope, start, encoding);
    let end = position::char_to_position(rope, start_char + 100, encoding);
    let old = rope.slice(start_char..start_char + 100).to_string();
    assert!(old.is_ascii(), "the replaced region must keep its width");
    let new: String = old
        .chars()
        .map(|ch| if ch == '\n' { '\n' } else { 'y' })
        .collect();
    let changes = [TextChange::replace(Range::new(start, end), new)];
    let mut version = 0;
    c.bench_function(name, |b| {
        b.iter(|| {
            version += 1;
            store
                .change(black_box(URI), version, black_box(&changes))
                .expect("the document is open");
        })
    });
}

fn did_change(c: &mut Criterion) {
    let size = big_document().len();
    eprintln!("document: {size} bytes, {LINES} lines");
    insert_char(
        c,
        "did_change/utf16/insert_char_mid_10MB",
        PositionEncoding::Utf16,
    );
    replace_100(
        c,
        "did_change/utf16/replace_100_chars_mid_10MB",
        PositionEncoding::Utf16,
    );
    insert_char(
        c,
        "did_change/utf8/insert_char_mid_10MB",
        PositionEncoding::Utf8,
    );
    replace_100(
        c,
        "did_change/utf8/replace_100_chars_mid_10MB",
        PositionEncoding::Utf8,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = did_change
}
criterion_main!(benches);
