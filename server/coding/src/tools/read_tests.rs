//! Tests of the `read` tool: pi's texts exactly, offsets and limits, truncation, images, binary
//! and non-UTF-8 files, editor buffers, permissions, and the memory bound of the disk scan.

use std::io::{BufReader, Read};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};
use tandem_agent::{AgentTool, ToolError, ToolInvocation, ToolOutput, ToolUpdates};
use tandem_ai::UserBlock;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use super::{scan, ReadTool, Span};
use crate::env::ToolEnv;
use crate::tools::truncate::{truncate_head, Truncation};
use crate::workspace::{PermissionDecision, PermissionRequest, ScriptedWorkspace};

struct Fixture {
    _dir: TempDir,
    root: PathBuf,
    workspace: Arc<ScriptedWorkspace>,
    tool: ReadTool,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical root");
    let workspace = Arc::new(ScriptedWorkspace::new(&root));
    let env = Arc::new(ToolEnv::new(workspace.clone(), &root));
    Fixture {
        _dir: dir,
        root,
        workspace,
        tool: ReadTool::new(env),
    }
}

impl Fixture {
    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(name);
        std::fs::write(&path, bytes).expect("write fixture");
        path
    }

    async fn call(&self, args: Value) -> Result<ToolOutput, ToolError> {
        self.tool
            .execute(ToolInvocation {
                call_id: "call-1".into(),
                args,
                cancel: CancellationToken::new(),
                updates: ToolUpdates::discard(),
            })
            .await
    }

    async fn text(&self, args: Value) -> String {
        let out = self.call(args).await.expect("read succeeds");
        assert_eq!(out.content.len(), 1, "one text block: {out:?}");
        text_of(&out)
    }

    async fn error(&self, args: Value) -> String {
        self.call(args).await.expect_err("read fails").0
    }
}

fn text_of(out: &ToolOutput) -> String {
    match &out.content[0] {
        UserBlock::Text(t) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    }
}

fn numbered(n: usize) -> String {
    (1..=n)
        .map(|i| format!("Line {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn a_small_file_is_returned_as_is_without_details() {
    let f = fixture();
    f.write("hello.txt", "hello world\nsecond line\n");
    let out = f.call(json!({"path": "hello.txt"})).await.expect("read");
    assert_eq!(text_of(&out), "hello world\nsecond line\n");
    assert_eq!(out.details, None);
    f.write("no-newline.txt", "a\nb\nc");
    assert_eq!(f.text(json!({"path": "@no-newline.txt"})).await, "a\nb\nc");
    f.write("empty.txt", "");
    assert_eq!(f.text(json!({"path": "empty.txt"})).await, "");
}

#[tokio::test]
async fn offset_and_limit_select_lines_with_pi_notices() {
    let f = fixture();
    f.write("n.txt", numbered(100));
    let lines = |a: usize, b: usize| {
        (a..=b)
            .map(|i| format!("Line {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let got = f.text(json!({"path": "n.txt", "limit": 10})).await;
    assert_eq!(
        got,
        format!(
            "{}\n\n[90 more lines in file. Use offset=11 to continue.]",
            lines(1, 10)
        )
    );
    let got = f
        .text(json!({"path": "n.txt", "offset": 41, "limit": 20}))
        .await;
    assert_eq!(
        got,
        format!(
            "{}\n\n[40 more lines in file. Use offset=61 to continue.]",
            lines(41, 60)
        )
    );
    assert_eq!(
        f.text(json!({"path": "n.txt", "offset": 51})).await,
        lines(51, 100)
    );
    assert_eq!(
        f.text(json!({"path": "n.txt", "offset": 1})).await,
        lines(1, 100)
    );
    assert_eq!(
        f.text(json!({"path": "n.txt", "offset": 0})).await,
        lines(1, 100)
    );
    assert_eq!(
        f.text(json!({"path": "n.txt", "offset": 100})).await,
        "Line 100"
    );
    // A limit past the end shows the rest and no notice.
    assert_eq!(
        f.text(json!({"path": "n.txt", "offset": 95, "limit": 10}))
            .await,
        lines(95, 100)
    );
    assert_eq!(
        f.error(json!({"path": "n.txt", "offset": 101})).await,
        "Offset 101 is beyond end of file (100 lines total)"
    );
    assert_eq!(
        f.text(json!({"path": "n.txt", "offset": 100, "limit": 0}))
            .await,
        "\n\n[1 more lines in file. Use offset=100 to continue.]"
    );
}

#[tokio::test]
async fn a_trailing_newline_counts_as_an_empty_last_line_like_pi() {
    let f = fixture();
    f.write("t.txt", "a\nb\n");
    assert_eq!(
        f.text(json!({"path": "t.txt", "limit": 1})).await,
        "a\n\n[2 more lines in file. Use offset=2 to continue.]"
    );
    assert_eq!(f.text(json!({"path": "t.txt", "offset": 3})).await, "");
    assert_eq!(
        f.error(json!({"path": "t.txt", "offset": 4})).await,
        "Offset 4 is beyond end of file (3 lines total)"
    );
    f.write("empty.txt", "");
    assert_eq!(
        f.error(json!({"path": "empty.txt", "offset": 2})).await,
        "Offset 2 is beyond end of file (1 lines total)"
    );
}

#[tokio::test]
async fn the_line_limit_cuts_at_2000_lines_with_details() {
    let f = fixture();
    f.write("2000.txt", numbered(2000));
    let out = f.call(json!({"path": "2000.txt"})).await.expect("read");
    assert_eq!(text_of(&out), numbered(2000));
    assert_eq!(out.details, None);

    f.write("2500.txt", numbered(2500));
    let out = f.call(json!({"path": "2500.txt"})).await.expect("read");
    assert_eq!(
        text_of(&out),
        format!(
            "{}\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]",
            numbered(2000)
        )
    );
    let details = out.details.expect("details");
    let t = &details["truncation"];
    assert_eq!(
        (
            &t["truncated"],
            &t["truncatedBy"],
            &t["totalLines"],
            &t["outputLines"]
        ),
        (&json!(true), &json!("lines"), &json!(2500), &json!(2000))
    );
    assert_eq!(
        (&t["maxLines"], &t["maxBytes"]),
        (&json!(2000), &json!(51200))
    );
    assert_eq!(t["content"], json!(numbered(2000)));
    let keys: Vec<&str> = t
        .as_object()
        .expect("object")
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "content",
            "truncated",
            "truncatedBy",
            "totalLines",
            "totalBytes",
            "outputLines",
            "outputBytes",
            "lastLinePartial",
            "firstLineExceedsLimit",
            "maxLines",
            "maxBytes"
        ]
    );

    // 2000 lines and a final newline are 2001 lines for pi.
    f.write("2000nl.txt", format!("{}\n", numbered(2000)));
    assert_eq!(
        f.text(json!({"path": "2000nl.txt"})).await,
        format!(
            "{}\n\n[Showing lines 1-2000 of 2001. Use offset=2001 to continue.]",
            numbered(2000)
        )
    );
    // From an offset, the numbers are file line numbers.
    f.write("5000.txt", numbered(5000));
    let got = f
        .text(json!({"path": "5000.txt", "offset": 2001, "limit": 2500}))
        .await;
    assert!(
        got.ends_with(
            "Line 4000\n\n[Showing lines 2001-4000 of 5000. Use offset=4001 to continue.]"
        ),
        "{}",
        &got[got.len() - 100..]
    );
}

#[tokio::test]
async fn the_byte_limit_cuts_whole_lines_and_says_50kb() {
    let f = fixture();
    let text = (1..=500)
        .map(|i| format!("Line {i}: {}", "x".repeat(200)))
        .collect::<Vec<_>>()
        .join("\n");
    f.write("wide.txt", &text);
    let expected = truncate_head(&text, 2000, 51200);
    let n = expected.output_lines;
    let out = f.call(json!({"path": "wide.txt"})).await.expect("read");
    assert_eq!(
        text_of(&out),
        format!(
            "{}\n\n[Showing lines 1-{n} of 500 (50.0KB limit). Use offset={} to continue.]",
            expected.content,
            n + 1
        )
    );
    let t = &out.details.expect("details")["truncation"];
    assert_eq!(t["truncatedBy"], json!("bytes"));
    assert_eq!(t["totalBytes"], json!(text.len()));

    // A second long line that does not fit is left for the next call.
    f.write(
        "two.txt",
        format!("{}\n{}", "a".repeat(30_000), "b".repeat(30_000)),
    );
    assert_eq!(
        f.text(json!({"path": "two.txt"})).await,
        format!(
            "{}\n\n[Showing lines 1-1 of 2 (50.0KB limit). Use offset=2 to continue.]",
            "a".repeat(30_000)
        )
    );
}

#[tokio::test]
async fn a_line_over_50kb_gets_pi_bash_hint() {
    let f = fixture();
    f.write("huge.txt", format!("short\n{}\nend", "x".repeat(60_000)));
    let out = f
        .call(json!({"path": "huge.txt", "offset": 2}))
        .await
        .expect("read");
    assert_eq!(
        text_of(&out),
        "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' huge.txt | head -c 51200]"
    );
    let t = &out.details.expect("details")["truncation"];
    assert_eq!(t["firstLineExceedsLimit"], json!(true));
    assert_eq!(t["content"], json!(""));
    f.write("my file.txt", "y".repeat(51_201));
    assert_eq!(
        f.text(json!({"path": "my file.txt"})).await,
        "[Line 1 is 50.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' 'my file.txt' | head -c 51200]"
    );
}

const PNG_1X1: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mP8/x8AAwMCAO+X2Z0AAAAASUVORK5CYII=";

#[tokio::test]
async fn images_are_found_by_magic_bytes() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let png = b64.decode(PNG_1X1).expect("png");
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("image.txt", png, "image/png"),
        (
            "photo.bin",
            b"\xFF\xD8\xFF\xE0\x00\x10JFIF\x00rest".to_vec(),
            "image/jpeg",
        ),
        (
            "anim",
            b"GIF89a\x01\x00\x01\x00\x00\x00\x00;".to_vec(),
            "image/gif",
        ),
        (
            "pic.webp",
            b"RIFF\x1a\x00\x00\x00WEBPVP8 \x0e\x00\x00\x00".to_vec(),
            "image/webp",
        ),
    ];
    for (name, bytes, mime) in cases {
        assert_image(name, &bytes, mime).await;
    }
}

async fn assert_image(name: &str, bytes: &[u8], mime: &str) {
    use base64::Engine as _;
    let f = fixture();
    f.write(name, bytes);
    let out = f
        .call(json!({"path": name, "offset": 5}))
        .await
        .expect("read");
    assert_eq!(out.details, None);
    assert_eq!(out.content.len(), 2, "{name}");
    assert_eq!(text_of(&out), format!("Read image file [{mime}]"));
    match &out.content[1] {
        UserBlock::Image(image) => {
            assert_eq!(image.mime_type, mime);
            assert_eq!(
                image.data,
                base64::engine::general_purpose::STANDARD.encode(bytes)
            );
        }
        other => panic!("expected an image, got {other:?}"),
    }
}

#[tokio::test]
async fn text_named_png_is_text_and_oversized_images_are_refused() {
    let f = fixture();
    f.write("not-an-image.png", "definitely not a png");
    assert_eq!(
        f.text(json!({"path": "not-an-image.png"})).await,
        "definitely not a png"
    );
    let mut big = b"\x89PNG\r\n\x1a\n".to_vec();
    big.resize(5 * 1024 * 1024, 7);
    let path = f.write("big.png", &big);
    assert_eq!(
        f.error(json!({"path": "big.png"})).await,
        format!(
            "Image {} is 5.0MB, over the 4.5MB limit for images (Tandem does not resize images). \
             Make a smaller copy (e.g. with ImageMagick) and read that instead.",
            path.display()
        )
    );
}

#[tokio::test]
async fn binary_files_are_refused_and_bad_utf8_is_replaced_with_a_notice() {
    let f = fixture();
    let path = f.write("data.bin", b"ab\x00\x01\x02cd");
    assert_eq!(
        f.error(json!({"path": "data.bin"})).await,
        format!(
            "Cannot read {}: it is a binary file (it contains NUL bytes) and not a supported \
             image (jpg, png, gif, webp). Inspect it with bash instead (e.g. `file` or `xxd | head`).",
            path.display()
        )
    );
    f.write("latin1.txt", b"caf\xe9\nok\n");
    assert_eq!(
        f.text(json!({"path": "latin1.txt"})).await,
        "caf\u{FFFD}\nok\n\n\n[This file is not valid UTF-8: bytes that are not text are shown as U+FFFD.]"
    );
    // Bad bytes outside the shown lines need no notice.
    assert_eq!(
        f.text(json!({"path": "latin1.txt", "offset": 2})).await,
        "ok\n"
    );
}

#[tokio::test]
async fn an_open_buffer_wins_over_disk() {
    let f = fixture();
    let path = f.write("buf.txt", "on disk\n");
    f.workspace.open_buffer(&path, "unsaved\nbuffer\ntext");
    assert_eq!(
        f.text(json!({"path": "buf.txt"})).await,
        "unsaved\nbuffer\ntext"
    );
    assert_eq!(
        f.text(json!({"path": "buf.txt", "offset": 2, "limit": 1}))
            .await,
        "buffer\n\n[1 more lines in file. Use offset=3 to continue.]"
    );
    // A buffer is text even when it looks like an image.
    f.workspace.open_buffer(f.root.join("x.png"), "\u{89}PNG");
    assert_eq!(f.text(json!({"path": "x.png"})).await, "\u{89}PNG");
}

#[tokio::test]
async fn missing_files_directories_and_cancellation_are_clear_errors() {
    let f = fixture();
    assert_eq!(
        f.error(json!({"path": "nope.txt"})).await,
        format!("File not found: {}", f.root.join("nope.txt").display())
    );
    std::fs::create_dir(f.root.join("sub")).expect("mkdir");
    assert_eq!(
        f.error(json!({"path": "sub"})).await,
        format!(
            "{} is a directory, not a file. Use ls to list its entries.",
            f.root.join("sub").display()
        )
    );
    assert_eq!(
        f.error(json!({"path": "/dev/null"})).await,
        "Cannot read /dev/null: it is not a regular file (a device, pipe or socket)."
    );
    f.write("a.txt", "a");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = f
        .tool
        .execute(ToolInvocation {
            call_id: "c".into(),
            args: json!({"path": "a.txt"}),
            cancel,
            updates: ToolUpdates::discard(),
        })
        .await;
    assert_eq!(result, Err(ToolError::new("Operation aborted")));
}

#[tokio::test]
async fn paths_outside_the_workspace_need_permission() {
    let f = fixture();
    let outside = tempfile::tempdir().expect("temp dir");
    let outside_root = std::fs::canonicalize(outside.path()).expect("canonical");
    let secret = outside_root.join("secret.txt");
    std::fs::write(&secret, "secret\n").expect("write");
    let arg = json!({"path": secret.to_string_lossy()});
    assert_eq!(f.text(arg.clone()).await, "secret\n");
    assert_eq!(
        f.workspace.permission_requests(),
        vec![PermissionRequest::OutsideWorkspace {
            path: secret.clone(),
            write: false
        }]
    );
    f.workspace.answer_permissions([PermissionDecision::Reject {
        reason: Some("not this one".into()),
    }]);
    assert_eq!(
        f.error(arg).await,
        format!(
            "Access to {} was denied: it is outside the workspace (not this one)",
            secret.display()
        )
    );
}

/// A reader that makes up `len` bytes of numbered 100-byte lines and counts what was read.
struct Generated {
    len: u64,
    at: u64,
    line: Vec<u8>,
}

impl Generated {
    fn new(len: u64) -> Self {
        Generated {
            len,
            at: 0,
            line: Vec::new(),
        }
    }

    fn byte(&mut self) -> u8 {
        let col = (self.at % 100) as usize;
        if col == 0 {
            self.line = format!("{:<99}\n", format!("line {}", self.at / 100 + 1)).into_bytes();
        }
        self.line[col]
    }
}

impl Read for Generated {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min((self.len - self.at) as usize);
        for slot in &mut buf[..n] {
            *slot = self.byte();
            self.at += 1;
        }
        Ok(n)
    }
}

#[test]
fn the_scan_holds_only_the_window_of_a_50mb_stream() {
    const LEN: u64 = 50 * 1024 * 1024; // 524288 lines of 100 bytes, then an empty last line
    let cancel = CancellationToken::new();
    let span = Span {
        start: 524_280,
        limit: Some(10),
    };
    let mut reader = BufReader::with_capacity(64 * 1024, Generated::new(LEN));
    let window = scan(&mut reader, span, 2000, 51200, &cancel).expect("scan");
    assert_eq!(reader.get_ref().at, LEN, "the whole stream was counted");
    assert_eq!(window.total_lines, 524_289);
    assert_eq!(window.kept.len(), 9);
    assert_eq!(window.kept[0].trim_end(), "line 524281");
    assert_eq!(window.kept[8], "");
    assert!(
        window.peak_held <= 10 * 100,
        "held {} bytes",
        window.peak_held
    );

    // One 50 MB line: nothing beyond the byte budget is ever held.
    let one_line = std::io::repeat(b'z').take(LEN);
    let window = scan(
        BufReader::new(one_line),
        Span {
            start: 0,
            limit: None,
        },
        2000,
        51200,
        &cancel,
    )
    .expect("scan");
    assert_eq!(
        (window.total_lines, window.first_line_bytes),
        (1, LEN as usize)
    );
    assert!(window.peak_held <= 51200, "held {} bytes", window.peak_held);
    assert!(window.truncation(2000, 51200).first_line_exceeds_limit);
}

#[tokio::test]
async fn a_50mb_file_is_read_by_window() {
    let f = fixture();
    let path = f.root.join("big.log");
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
        std::io::copy(&mut Generated::new(50 * 1024 * 1024), &mut out).expect("fill");
    }
    let got = f
        .text(json!({"path": "big.log", "offset": 524_270, "limit": 10}))
        .await;
    assert!(got.len() < 1200, "{} bytes", got.len());
    assert!(got.starts_with("line 524270 "), "{got}");
    assert!(
        got.ends_with("\n\n[10 more lines in file. Use offset=524280 to continue.]"),
        "{got}"
    );
}

/// pi's algorithm on the selected text, for comparison with the scan.
fn pi_reference(
    text: &str,
    start: usize,
    limit: Option<usize>,
    lines: usize,
    bytes: usize,
) -> Truncation {
    let all: Vec<&str> = text.split('\n').collect();
    let end = limit.map_or(all.len(), |l| (start + l).min(all.len()));
    truncate_head(&all[start..end].join("\n"), lines, bytes)
}

#[test]
fn the_scan_agrees_with_pi_truncation_on_many_shapes() {
    let cancel = CancellationToken::new();
    #[rustfmt::skip]
    let texts = [
        "", "\n", "a", "a\n", "abc\ndefgh\n\nij", "0123456789abc\nx", "x\n0123456789abc",
        "aa\nbb\ncc\ndd\nee\nff\n", "é\u{1F600}\nüüüü\nß", "1\n22\n333\n4444\n55555",
    ];
    let shapes = [(3, 10), (2, 4), (100, 1000), (1, 1)];
    for text in texts {
        let total = text.split('\n').count();
        for start in 0..total {
            for limit in [None, Some(0), Some(1), Some(2), Some(5)] {
                for (lines, bytes) in shapes {
                    // Tiny read buffers split lines and characters across chunks.
                    for capacity in [1, 3, 64] {
                        let span = Span { start, limit };
                        let reader = BufReader::with_capacity(capacity, text.as_bytes());
                        let window = scan(reader, span, lines, bytes, &cancel).expect("scan");
                        assert_eq!(window.total_lines, total);
                        assert!(!window.lossy);
                        let got = window.truncation(lines, bytes);
                        let want = pi_reference(text, start, limit, lines, bytes);
                        let case = format!("{text:?} from {start} limit {limit:?} {lines}/{bytes}");
                        assert_eq!(got, want, "{case} buffer {capacity}");
                    }
                }
            }
        }
    }
}

#[test]
fn the_scan_stops_when_cancelled_and_flags_split_bad_bytes() {
    let cancel = CancellationToken::new();
    cancel.cancel();
    let span = Span {
        start: 0,
        limit: None,
    };
    assert!(matches!(
        scan(&b"abc"[..], span, 2000, 51200, &cancel),
        Err(super::ScanError::Aborted)
    ));
    let reader = BufReader::with_capacity(1, &b"ok\xC3\xA9 \xC3\nend"[..]);
    let window = scan(reader, span, 2000, 51200, &CancellationToken::new()).expect("scan");
    assert_eq!(window.kept, ["oké \u{FFFD}", "end"]);
    assert!(window.lossy);
}

#[test]
fn schema_and_description_match_pi() {
    let f = fixture();
    let schema = f.tool.parameters();
    assert_eq!(schema["required"], json!(["path"]));
    assert_eq!(schema["properties"]["offset"]["type"], json!("number"));
    assert_eq!(schema["properties"]["limit"]["type"], json!("number"));
    assert!(f.tool.description().contains("2000 lines or 50KB"));
}
