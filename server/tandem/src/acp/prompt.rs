//! A `session/prompt`'s content blocks as the agent's prompt: one text and its images.
//!
//! Adjacent text blocks are separated by a blank line (a client that re-sends an earlier block
//! before a new one must not have the two run together). A `resource_link` becomes an `@path` mention the model
//! can read with its tools (relative to the working directory when inside it). An embedded
//! text `resource` (the client already read the file, maybe an unsaved buffer) is attached after
//! the text in a `<file>` block, so the model has it without a tool call. Images go with the
//! message; an image embedded as a blob resource too. An image is checked first, since it
//! stays in every later request of the session: valid base64, at most `images::MAX_IMAGE_BYTES`, and
//! bytes of the type it claims, one of the four every provider takes (PNG, JPEG, GIF, WebP).
//! Audio is refused: Tandem does not announce it.

use std::path::Path;

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};
use tandem_ai::ImageContent;
use tandem_coding::images;

/// `data` (base64) as an image of type `mime`, checked; the error names prompt block `i`.
fn checked_image(i: usize, data: &str, mime: &str) -> Result<ImageContent, String> {
    images::checked_image(data, mime).map_err(|why| format!("prompt block {i}: {why}"))
}

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
    let mut after_text = false;
    for (i, block) in blocks.iter().enumerate() {
        let is_text = matches!(block, ContentBlock::Text(_));
        match block {
            ContentBlock::Text(t) => {
                if after_text && !text.is_empty() && !t.text.is_empty() {
                    let newlines = text.len() - text.trim_end_matches('\n').len();
                    text.push_str(&"\n".repeat(2usize.saturating_sub(newlines)));
                }
                text.push_str(&t.text);
            }
            ContentBlock::Image(image) => {
                images.push(checked_image(i, &image.data, &image.mime_type)?)
            }
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
                    Some(mime) if mime.starts_with("image/") => {
                        images.push(checked_image(i, &b.blob, mime)?)
                    }
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
        after_text = is_text;
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
                {"type": "image", "data": PNG, "mimeType": "image/png"}
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

    /// The 8-byte PNG signature, base64.
    const PNG: &str = "iVBORw0KGgo=";

    #[test]
    fn adjacent_text_blocks_are_separated_by_a_blank_line() {
        let text = |v| convert(&blocks(v), Path::new("/w")).unwrap().text;
        // A client re-sending the cancelled prompt before the new one.
        assert_eq!(
            text(json!([
                {"type": "text", "text": "Write a long essay about editors"},
                {"type": "text", "text": "Are you still there?"}
            ])),
            "Write a long essay about editors\n\nAre you still there?"
        );
        // Newlines already there count; empty blocks add nothing.
        assert_eq!(
            text(json!([
                {"type": "text", "text": "one\n"},
                {"type": "text", "text": ""},
                {"type": "text", "text": "two\n\n"},
                {"type": "text", "text": "three"}
            ])),
            "one\n\ntwo\n\nthree"
        );
    }

    #[test]
    fn images_are_checked_before_they_reach_the_model() {
        let refused = |data: &str, mime: &str| {
            convert(
                &blocks(json!([{"type": "image", "data": data, "mimeType": mime}])),
                Path::new("/w"),
            )
            .unwrap_err()
        };
        let e = refused("%%%not base64%%%", "text/x-shellscript");
        assert!(e.contains("prompt block 0") && e.contains("base64"), "{e}");
        let e = refused("IyEvYmluL3NoCg==", "text/x-shellscript");
        assert!(e.contains("not an image type"), "{e}");
        let e = refused(PNG, "image/jpeg");
        assert!(
            e.contains("declared image/jpeg but its bytes are image/png"),
            "{e}"
        );
        let e = refused("IyEvYmluL3NoCg==", "image/png");
        assert!(e.contains("not an image type"), "{e}");
        let big = "A".repeat((tandem_coding::images::MAX_IMAGE_BYTES / 3 + 8) * 4);
        let e = refused(&big, "image/png");
        assert!(e.contains("larger than 20 MB"), "{e}");
        // The same checks for an image embedded as a blob resource.
        let e = convert(
            &blocks(json!([{"type": "resource", "resource": {
                "uri": "file:///w/x.png", "blob": "!!", "mimeType": "image/png"}}])),
            Path::new("/w"),
        )
        .unwrap_err();
        assert!(e.contains("base64"), "{e}");
    }

    #[test]
    fn file_uris_decode() {
        assert_eq!(file_path("file:///a/b%20c").as_deref(), Some("/a/b c"));
        assert_eq!(file_path("file://localhost/a").as_deref(), Some("/a"));
        assert_eq!(file_path("https://x/y"), None);
        assert_eq!(file_path("file:///a%2").as_deref(), Some("/a%2"));
    }
}
