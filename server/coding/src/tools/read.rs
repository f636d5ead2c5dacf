//! The `read` tool: a file's text, paged with offset/limit and capped at 2000 lines or 50 KB, or
//! an image (jpg, png, gif, webp, found by magic bytes) as an attachment. Notices and errors are
//! pi's, word for word, so the model knows how to continue.
//!
//! Text goes through the streaming scan of [`super::read_scan`], which keeps only the window
//! of lines shown, whatever the size of the file; this module decides what to read, sniffs
//! images and binaries, and words the result.
//!
//! Beyond pi (which would show such files as garbage): a file with NUL bytes in its first 8 KB
//! that is not an image is refused as binary; invalid UTF-8 is decoded lossily (U+FFFD) and a
//! notice says so; an image over 4.5 MB is refused, since Tandem does not resize images.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::{json, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};
use tandem_ai::{ImageContent, TextContent, UserBlock};
use tokio_util::sync::CancellationToken;

use super::aborted;
use super::args::{parse, ReadArgs};
use super::read_scan::{scan, ScanError, Span, Window, CHUNK_BYTES};
use super::truncate::{format_size, TruncatedBy, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};
use crate::env::ToolEnv;
use crate::paths::Access;
use crate::workspace::{FileContent, WorkspaceError};

/// How much of a file is sniffed for image magic and NUL bytes.
const SNIFF_BYTES: usize = 8 * 1024;
/// Largest image sent (pi's ceiling after resizing, below providers' 5 MB limit).
const MAX_IMAGE_BYTES: usize = 4_718_592;

const DESCRIPTION: &str = "Read a file. Text files and images (jpg, png, gif, webp) are \
supported; images are attached so you can see them. Text comes back as is, without line \
numbers, and is cut at 2000 lines or 50KB, whichever comes first; a notice then tells you the \
offset to continue from. Use offset/limit to read part of a large file, and keep reading with \
offset when you need all of it.";

/// The `read` tool.
pub struct ReadTool {
    env: Arc<ToolEnv>,
    schema: Value,
}

impl ReadTool {
    /// The tool over `env`.
    pub fn new(env: Arc<ToolEnv>) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Path of the file to read (relative or absolute)"},
                "offset": {"type": "number", "description": "First line to read, counting from 1"},
                "limit": {"type": "number", "description": "How many lines to read at most"},
            },
            "required": ["path"],
        });
        ReadTool { env, schema }
    }

    async fn run(&self, call: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args = Args::parse(call.args.clone())?;
        if call.cancel.is_cancelled() {
            return Err(aborted());
        }
        let resolved = self
            .env
            .resolve(&call.call_id, &args.path, Access::Read)
            .await?;
        let path = resolved.absolute;
        let content = self
            .env
            .workspace
            .read(&path)
            .await
            .map_err(|e| workspace_error(&path, e))?;
        let cancel = call.cancel.clone();
        let span = args.span;
        let shown = path.clone();
        let loaded = tokio::task::spawn_blocking(move || match content {
            FileContent::Text(text) => {
                let reader = BufReader::with_capacity(CHUNK_BYTES, text.as_bytes());
                scan(reader, span, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES, &cancel)
                    .map(Loaded::Text)
                    .map_err(|e| scan_error(&shown, e))
            }
            FileContent::Disk(disk) => load_disk(&disk, span, &cancel),
        })
        .await
        .map_err(|e| ToolError::new(format!("Reading {} failed: {e}", path.display())))??;
        if call.cancel.is_cancelled() {
            return Err(aborted());
        }
        match loaded {
            Loaded::Image { mime, bytes } => Ok(image_output(mime, &bytes)),
            Loaded::Text(window) => {
                self.env.prepare_language(&path);
                text_output(&window, &args)
            }
        }
    }
}

impl AgentTool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(self.run(call))
    }
}

/// The call's arguments.
struct Args {
    path: String,
    /// `offset` as given (for pi's "beyond end" message).
    offset: Option<f64>,
    span: Span,
}

impl Args {
    fn parse(args: Value) -> Result<Self, ToolError> {
        let ReadArgs {
            path,
            offset,
            limit,
        } = parse("read", args)?;
        // Like pi: offset 0 or 1 (or less) reads from the top; fractions are cut.
        let start = match offset {
            Some(o) if o > 1.0 => (o - 1.0) as usize,
            _ => 0,
        };
        // A zero or negative limit shows nothing but the "more lines" notice.
        let limit = limit.map(|l| if l > 0.0 { l as usize } else { 0 });
        Ok(Args {
            path,
            offset,
            span: Span { start, limit },
        })
    }
}

/// What was read.
enum Loaded {
    Image { mime: &'static str, bytes: Vec<u8> },
    Text(Window),
}

fn workspace_error(path: &Path, e: WorkspaceError) -> ToolError {
    match e {
        WorkspaceError::IsDirectory(_) => ToolError::new(format!(
            "{} is a directory, not a file. Use ls to list its entries.",
            path.display()
        )),
        other => ToolError::new(other.to_string()),
    }
}

fn io_error(path: &Path, e: &io::Error) -> ToolError {
    workspace_error(path, WorkspaceError::io(path, e))
}

/// The image type of a file starting with `head`, by magic bytes: the four types pi accepts
/// (PNG, JPEG, GIF, WebP). The one check every front door uses (`read`, `@file` arguments, the
/// ACP client's text reads).
pub fn image_mime(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Reads a file from disk: an image whole, text through the windowed scan.
fn load_disk(path: &Path, span: Span, cancel: &CancellationToken) -> Result<Loaded, ToolError> {
    // Opening a FIFO would block until a writer comes, and a device may never end.
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, &e))?;
    if meta.is_dir() {
        return Err(workspace_error(
            path,
            WorkspaceError::IsDirectory(path.into()),
        ));
    }
    if !meta.is_file() {
        return Err(ToolError::new(format!(
            "Cannot read {}: it is not a regular file (a device, pipe or socket).",
            path.display()
        )));
    }
    let mut file = File::open(path).map_err(|e| io_error(path, &e))?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut file)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| io_error(path, &e))?;
    if let Some(mime) = image_mime(&head) {
        let mut bytes = head;
        file.take((MAX_IMAGE_BYTES + 1 - bytes.len()) as u64)
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(path, &e))?;
        if bytes.len() > MAX_IMAGE_BYTES {
            let size = std::fs::metadata(path).map_or(bytes.len() as u64, |m| m.len());
            return Err(ToolError::new(format!(
                "Image {} is {}, over the {} limit for images (Tandem does not resize \
                 images). Make a smaller copy (e.g. with ImageMagick) and read that instead.",
                path.display(),
                format_size(size as usize),
                format_size(MAX_IMAGE_BYTES)
            )));
        }
        return Ok(Loaded::Image { mime, bytes });
    }
    if head.contains(&0) {
        return Err(ToolError::new(format!(
            "Cannot read {}: it is a binary file (it contains NUL bytes) and not a supported \
             image (jpg, png, gif, webp). Inspect it with bash instead (e.g. `file` or `xxd | head`).",
            path.display()
        )));
    }
    let reader = BufReader::with_capacity(CHUNK_BYTES, io::Cursor::new(head).chain(file));
    scan(reader, span, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES, cancel)
        .map(Loaded::Text)
        .map_err(|e| scan_error(path, e))
}

fn scan_error(path: &Path, e: ScanError) -> ToolError {
    match e {
        ScanError::Aborted => aborted(),
        ScanError::Io(e) => io_error(path, &e),
    }
}

fn image_output(mime: &str, bytes: &[u8]) -> ToolOutput {
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    let note = format!("Read image file [{mime}]");
    ToolOutput {
        structured_content: Some(json!({
            "type": "image", "data": data, "mimeType": mime, "note": note,
        })),
        content: vec![
            UserBlock::Text(TextContent {
                text: note,
                text_signature: None,
            }),
            UserBlock::Image(ImageContent {
                data,
                mime_type: mime.to_string(),
            }),
        ],
        ..ToolOutput::default()
    }
}

/// `path` as one shell word: as is when it needs no quoting (pi's text), else single-quoted.
fn shell_word(path: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:=%@~".contains(c);
    if !path.is_empty() && path.chars().all(plain) {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    }
}

/// A number as JavaScript prints it (`3`, `2.5`).
fn show_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// The text result with pi's notices.
fn text_output(window: &Window, args: &Args) -> Result<ToolOutput, ToolError> {
    let Span { start, limit } = args.span;
    let total = window.total_lines;
    if start >= total {
        return Err(ToolError::new(format!(
            "Offset {} is beyond end of file ({total} lines total)",
            args.offset.map(show_number).unwrap_or_default()
        )));
    }
    let t = window.truncation(DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    let details = || json!({"truncation": t.details(DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)});
    let first = start + 1;
    let (mut text, details) = if t.first_line_exceeds_limit {
        let text = format!(
            "[Line {first} is {}, exceeds {} limit. Use bash: sed -n '{first}p' {} | head -c {}]",
            format_size(window.first_line_bytes),
            format_size(DEFAULT_MAX_BYTES),
            shell_word(&args.path),
            DEFAULT_MAX_BYTES
        );
        (text, Some(details()))
    } else if let Some(by) = t.truncated_by {
        let last = start + t.output_lines;
        let cap = match by {
            TruncatedBy::Lines => String::new(),
            TruncatedBy::Bytes => format!(" ({} limit)", format_size(DEFAULT_MAX_BYTES)),
        };
        let notice = format!(
            "[Showing lines {first}-{last} of {total}{cap}. Use offset={} to continue.]",
            last + 1
        );
        (format!("{}\n\n{notice}", t.content), Some(details()))
    } else if limit.is_some() && start + window.selected_lines < total {
        let next = start + window.selected_lines;
        let notice = format!(
            "[{} more lines in file. Use offset={} to continue.]",
            total - next,
            next + 1
        );
        (format!("{}\n\n{notice}", t.content), None)
    } else {
        (t.content.clone(), None)
    };
    if window.lossy {
        text.push_str(
            "\n\n[This file is not valid UTF-8: bytes that are not text are shown as U+FFFD.]",
        );
    }
    let output = ToolOutput {
        structured_content: Some(Value::String(text.clone())),
        ..ToolOutput::text(text)
    };
    Ok(match details {
        Some(d) => output.with_details(d),
        None => output,
    })
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
