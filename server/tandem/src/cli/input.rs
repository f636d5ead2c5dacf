//! The prompts of a print/JSON run, assembled as pi assembles them.
//!
//! The first prompt is piped stdin (trimmed), then the `@file` texts, then the first message
//! argument. pi (0.73 and 1.6) joins them with nothing in between, so `echo "a log" | pi -p
//! "explain"` sends "a logexplain"; Tandem puts a blank line after stdin when something follows
//! it, and otherwise joins as pi does. A text file becomes `<file name="/abs/path">\n<content>\n</file>\n`; an image (JPEG,
//! PNG, GIF or WebP, recognised by its first bytes) becomes `<file name="/abs/path"></file>\n`
//! plus an attached image block; empty files are skipped. The remaining message arguments are
//! sent afterwards, one prompt each.
//!
//! Reading is blocking (`std::fs`, `std::io::Read`): it happens once, at startup, before any
//! runtime work. Unlike pi, images are attached as they are, not downscaled to 2000×2000.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use base64::Engine;
use tandem_ai::{now_millis, ImageContent, TextContent, UserBlock, UserContent, UserMessage};
use tandem_coding::paths;
use tandem_coding::tools::image_mime;

/// Why the prompt could not be assembled.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// An `@file` argument names nothing.
    #[error("File not found: {}", .0.display())]
    NotFound(PathBuf),
    /// An `@file` argument could not be read.
    #[error("Could not read file {}: {source}", .path.display())]
    Unreadable {
        /// The absolute path.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// Piped stdin could not be read.
    #[error("Could not read piped stdin: {0}")]
    Stdin(#[source] io::Error),
}

/// What the `@file` arguments contribute: text for the prompt and image attachments.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileParts {
    /// The `<file>` blocks, concatenated.
    pub text: String,
    /// Images, in argument order.
    pub images: Vec<ImageContent>,
}

/// The first prompt of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct InitialPrompt {
    /// Its text.
    pub text: String,
    /// Attached images.
    pub images: Vec<ImageContent>,
}

impl InitialPrompt {
    /// The user message pi sends for it: one text block, then the images.
    pub fn to_user_message(&self) -> UserMessage {
        let mut blocks = vec![UserBlock::Text(TextContent {
            text: self.text.clone(),
            text_signature: None,
        })];
        blocks.extend(self.images.iter().cloned().map(UserBlock::Image));
        UserMessage {
            content: UserContent::Blocks(blocks),
            timestamp: now_millis(),
        }
    }
}

/// All prompts of a print/JSON run, in sending order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Prompts {
    /// The first prompt (stdin, files and the first message), when there is anything to send.
    pub initial: Option<InitialPrompt>,
    /// Further messages, each its own prompt.
    pub rest: Vec<String>,
}

/// Reads piped input: `None` when `is_terminal` (nothing is piped) or when the input is blank.
/// Invalid UTF-8 is replaced, and surrounding whitespace trimmed, as pi does.
pub fn read_piped_stdin(
    reader: &mut dyn Read,
    is_terminal: bool,
) -> Result<Option<String>, InputError> {
    if is_terminal {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(InputError::Stdin)?;
    let text = String::from_utf8_lossy(&bytes);
    let trimmed = text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    Ok((!trimmed.is_empty()).then(|| trimmed.to_string()))
}

/// The absolute path of an `@file` argument: `~` expanded, relative to `cwd`, normalized.
pub fn file_arg_path(arg: &str, cwd: &Path) -> PathBuf {
    paths::normalize(&cwd.join(paths::expand(arg)))
}

/// Reads the `@file` arguments (without their `@`), relative to `cwd`.
pub fn read_file_args(files: &[String], cwd: &Path) -> Result<FileParts, InputError> {
    let mut parts = FileParts::default();
    for arg in files {
        let path = file_arg_path(arg, cwd);
        let unreadable = |source| InputError::Unreadable {
            path: path.clone(),
            source,
        };
        let meta = std::fs::metadata(&path).map_err(|_| InputError::NotFound(path.clone()))?;
        if meta.len() == 0 {
            continue;
        }
        let mut bytes = Vec::new();
        File::open(&path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map_err(unreadable)?;
        let name = path.display();
        match image_mime(&bytes) {
            Some(mime) => {
                parts.images.push(ImageContent {
                    data: base64::engine::general_purpose::STANDARD.encode(&bytes),
                    mime_type: mime.to_string(),
                });
                parts
                    .text
                    .push_str(&format!("<file name=\"{name}\"></file>\n"));
            }
            None => {
                let content = String::from_utf8_lossy(&bytes);
                parts
                    .text
                    .push_str(&format!("<file name=\"{name}\">\n{content}\n</file>\n"));
            }
        }
    }
    Ok(parts)
}

/// Combines stdin, file parts and the message arguments into the run's prompts.
pub fn assemble(stdin: Option<String>, files: FileParts, messages: &[String]) -> Prompts {
    let mut text = stdin.unwrap_or_default();
    let mut rest = messages.iter();
    let first = rest.next();
    if !text.is_empty() && (!files.text.is_empty() || first.is_some_and(|m| !m.is_empty())) {
        text.push_str("\n\n");
    }
    text.push_str(&files.text);
    if let Some(first) = first {
        text.push_str(first);
    }
    let initial = (!text.is_empty() || !files.images.is_empty()).then_some(InitialPrompt {
        text,
        images: files.images,
    });
    Prompts {
        initial,
        rest: rest.cloned().collect(),
    }
}

/// Reads the `@file` arguments and assembles the prompts of a run.
pub fn build_prompts(
    file_args: &[String],
    messages: &[String],
    stdin: Option<String>,
    cwd: &Path,
) -> Result<Prompts, InputError> {
    let files = read_file_args(file_args, cwd)?;
    Ok(assemble(stdin, files, messages))
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
