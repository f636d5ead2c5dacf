//! A `session/prompt`'s content blocks as the agent's prompt: one text and its images.
//!
//! Text blocks are joined as they come. A `resource_link` becomes an `@path` mention the model
//! can read with its tools (relative to the working directory when inside it). An embedded
//! text `resource` (the client already read the file, maybe an unsaved buffer) is attached after
//! the text in a `<file>` block, so the model has it without a tool call. Images go with the
//! message; an image embedded as a blob resource too. Audio is refused: Tandem does not announce
//! it.

use std::path::Path;

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};
use tandem_ai::ImageContent;

/// The prompt's text and images.
#[derive(Debug, Default, PartialEq)]
pub struct Prompt {
    /// The text the model reads.
    pub text: String,
    /// Images sent with it.
    pub images: Vec<ImageContent>,
}

/// Converts `blocks`; an error names the block the agent cannot take.
pub fn convert(blocks: &[ContentBlock], cwd: &Path) -> Result<Prompt, String> {
    let mut text = String::new();
    let mut attached = String::new();
    let mut images = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::Image(image) => images.push(ImageContent {
                data: image.data.clone(),
                mime_type: image.mime_type.clone(),
            }),
            ContentBlock::ResourceLink(link) => {
                if !text.is_empty() && !text.ends_with(char::is_whitespace) {
                    text.push(' ');
                }
                text.push_str(&mention(&link.uri, cwd));
            }
            ContentBlock::Resource(resource) => match &resource.resource {
                EmbeddedResourceResource::TextResourceContents(r) => {
                    attached.push_str(&format!(
                        "\n\n<file uri=\"{}\">\n{}{}</file>",
                        r.uri,
                        r.text,
                        if r.text.ends_with('\n') { "" } else { "\n" }
                    ));
                }
                EmbeddedResourceResource::BlobResourceContents(b) => match b.mime_type.as_deref() {
                    Some(mime) if mime.starts_with("image/") => images.push(ImageContent {
                        data: b.blob.clone(),
                        mime_type: mime.to_string(),
                    }),
                    _ => {
                        attached.push_str(&format!(
                            "\n\n[binary resource {} ({}) left out]",
                            b.uri,
                            b.mime_type.as_deref().unwrap_or("unknown type")
                        ));
                    }
                },
                _ => return Err(format!("prompt block {i}: unknown embedded resource kind")),
            },
            ContentBlock::Audio(_) => {
                return Err(format!(
                    "prompt block {i}: audio is not supported (promptCapabilities.audio is false)"
                ))
            }
            _ => return Err(format!("prompt block {i}: unknown content type")),
        }
    }
    text.push_str(&attached);
    if text.trim().is_empty() && images.is_empty() {
        return Err("the prompt is empty: send a text, resource or image block".into());
    }
    Ok(Prompt { text, images })
}

/// `@path` for a `file://` URI (relative to `cwd` when inside it), the URI itself otherwise.
fn mention(uri: &str, cwd: &Path) -> String {
    match file_path(uri) {
        Some(path) => {
            let shown = Path::new(&path)
                .strip_prefix(cwd)
                .map(|p| p.display().to_string())
                .unwrap_or(path);
            format!("@{shown}")
        }
        None => uri.to_string(),
    }
}

/// The path of a `file://` URI, percent-decoded.
pub fn file_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    // `file:///abs` or `file://localhost/abs`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn blocks(v: serde_json::Value) -> Vec<ContentBlock> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn text_links_resources_and_images_become_one_prompt() {
        let p = convert(
            &blocks(json!([
                {"type": "text", "text": "Explain"},
                {"type": "resource_link", "uri": "file:///work/p/src/a%20b.rs", "name": "a b.rs"},
                {"type": "text", "text": " please"},
                {"type": "resource", "resource": {"uri": "file:///work/p/x.txt", "text": "unsaved"}},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"}
            ])),
            Path::new("/work/p"),
        )
        .unwrap();
        assert_eq!(
            p.text,
            "Explain @src/a b.rs please\n\n<file uri=\"file:///work/p/x.txt\">\nunsaved\n</file>"
        );
        assert_eq!(p.images.len(), 1);
        assert_eq!(p.images[0].mime_type, "image/png");
    }

    #[test]
    fn audio_and_empty_prompts_are_refused_by_name() {
        let e = convert(
            &blocks(json!([{"type": "audio", "data": "AA", "mimeType": "audio/wav"}])),
            Path::new("/"),
        )
        .unwrap_err();
        assert!(e.contains("audio is not supported"), "{e}");
        let e = convert(
            &blocks(json!([{"type": "text", "text": "  "}])),
            Path::new("/"),
        )
        .unwrap_err();
        assert!(e.contains("empty"), "{e}");
    }

    #[test]
    fn file_uris_decode() {
        assert_eq!(file_path("file:///a/b%20c").as_deref(), Some("/a/b c"));
        assert_eq!(file_path("file://localhost/a").as_deref(), Some("/a"));
        assert_eq!(file_path("https://x/y"), None);
        assert_eq!(file_path("file:///a%2").as_deref(), Some("/a%2"));
    }
}
