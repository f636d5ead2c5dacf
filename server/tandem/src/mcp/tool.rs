//! One MCP tool as an [`AgentTool`]: its schema offered to the model, its result converted to
//! the model's content (text and images; embedded resources and structured content as text).

use std::sync::{Arc, Weak};

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool};
use serde_json::{json, Map, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};
use tandem_ai::{ImageContent, TextContent, UserBlock};
use tandem_coding::tools::truncate::{
    format_size, truncate_head, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES,
};

use super::server::Server;

/// A tool of a connected MCP server.
pub(super) struct McpTool {
    /// `mcp__<server>__<tool>`, unique.
    name: String,
    /// `<server>/<tool>`, for display.
    label: String,
    description: String,
    parameters: Value,
    /// The tool's own name, as the server knows it.
    tool: String,
    server: String,
    /// Weak: the servers live as long as their [`super::McpTools`], not as long as the tools.
    connection: Weak<Server>,
}

impl McpTool {
    pub(super) fn new(name: String, connection: &Arc<Server>, listed: Tool) -> McpTool {
        let server = connection.name().to_string();
        let tool = listed.name.to_string();
        let description = match listed.description.as_deref().map(str::trim) {
            Some(text) if !text.is_empty() => format!("[MCP server `{server}`] {text}"),
            _ => format!("Tool `{tool}` of MCP server `{server}`."),
        };
        McpTool {
            name,
            label: format!("{server}/{tool}"),
            description,
            parameters: object_schema(listed.input_schema.as_ref().clone()),
            tool,
            server,
            connection: Arc::downgrade(connection),
        }
    }
}

impl AgentTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execute(&self, call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let arguments = match call.args {
                Value::Object(map) => Some(map),
                Value::Null => None,
                other => {
                    return Err(ToolError::new(format!(
                        "The arguments of `{}` must be a JSON object, not {other}.",
                        self.name
                    )))
                }
            };
            let Some(server) = self.connection.upgrade() else {
                return Err(ToolError::new(format!(
                    "MCP server `{}` was shut down with its session.",
                    self.server
                )));
            };
            let connection = server.connection().await.map_err(ToolError::new)?;
            let result = connection
                .call(&self.tool, arguments, &call.cancel)
                .await
                .map_err(ToolError::new)?;
            convert(&self.server, &self.tool, result)
        })
    }
}

/// The schema as providers want it: an object schema with `properties`.
fn object_schema(mut schema: Map<String, Value>) -> Value {
    schema
        .entry("type")
        .or_insert_with(|| Value::String("object".to_string()));
    if schema.get("type") == Some(&json!("object")) {
        schema
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Value::Object(schema)
}

/// The model's view of a result; `isError` becomes a [`ToolError`] with the server's text.
fn convert(server: &str, tool: &str, result: CallToolResult) -> Result<ToolOutput, ToolError> {
    let mut content = Vec::new();
    for block in result.content {
        content.push(match block {
            ContentBlock::Text(text) => text_block(text.text),
            ContentBlock::Image(image) => UserBlock::Image(ImageContent {
                data: image.data,
                mime_type: image.mime_type,
            }),
            ContentBlock::Audio(audio) => text_block(format!(
                "[audio ({}), {} of base64 data, not shown]",
                audio.mime_type,
                format_size(audio.data.len())
            )),
            ContentBlock::Resource(embedded) => resource_block(embedded.resource),
            ContentBlock::ResourceLink(link) => {
                let mut text = format!("[resource link] {} <{}>", link.name, link.uri);
                if let Some(description) = &link.description {
                    text.push_str(&format!(": {description}"));
                }
                text_block(text)
            }
            // Newer content kinds this version does not know.
            other => text_block(serde_json::to_string(&other).unwrap_or_default()),
        });
    }
    if content.is_empty() {
        if let Some(structured) = &result.structured_content {
            let text = serde_json::to_string_pretty(structured).unwrap_or_default();
            content.push(text_block(text));
        }
    }
    if result.is_error == Some(true) {
        let text: Vec<&str> = content
            .iter()
            .filter_map(|block| match block {
                UserBlock::Text(text) => Some(text.text.as_str()),
                UserBlock::Image(_) => None,
            })
            .collect();
        let text = text.join("\n");
        return Err(ToolError::new(if text.trim().is_empty() {
            format!("MCP tool `{tool}` of server `{server}` failed without saying why.")
        } else {
            text
        }));
    }
    if content.is_empty() {
        content.push(text_block("(The tool returned no content.)"));
    }
    let mut details = json!({"server": server, "tool": tool});
    if let Some(structured) = result.structured_content {
        details["structuredContent"] = structured;
    }
    Ok(ToolOutput {
        content,
        details: Some(details),
        ..ToolOutput::default()
    })
}

fn resource_block(resource: ResourceContents) -> UserBlock {
    match resource {
        ResourceContents::TextResourceContents { uri, text, .. } => {
            text_block(format!("[resource {uri}]\n{text}"))
        }
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => match mime_type {
            Some(mime) if mime.starts_with("image/") => UserBlock::Image(ImageContent {
                data: blob,
                mime_type: mime,
            }),
            mime => text_block(format!(
                "[resource {uri} ({}), {} of base64 data, not shown]",
                mime.as_deref().unwrap_or("binary"),
                format_size(blob.len())
            )),
        },
        other => text_block(serde_json::to_string(&other).unwrap_or_default()),
    }
}

/// A text block within pi's output limits (2000 lines or 50 KB, the head kept).
pub(super) fn text_block(text: impl Into<String>) -> UserBlock {
    let text = text.into();
    let cut = truncate_head(&text, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    let text = if !cut.truncated() {
        text
    } else {
        let kept = if cut.first_line_exceeds_limit {
            // One huge line (often JSON): keep its first bytes.
            let mut end = DEFAULT_MAX_BYTES.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text[..end].to_string()
        } else {
            cut.content
        };
        format!(
            "{kept}\n\n[Output truncated: {} of {} shown.]",
            format_size(kept.len()),
            format_size(text.len())
        )
    };
    UserBlock::Text(TextContent {
        text,
        text_signature: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).expect("a CallToolResult")
    }

    fn texts(output: &ToolOutput) -> Vec<String> {
        output
            .content
            .iter()
            .map(|block| match block {
                UserBlock::Text(text) => text.text.clone(),
                UserBlock::Image(image) => format!("image {}", image.mime_type),
            })
            .collect()
    }

    #[test]
    fn content_kinds_become_text_and_images() {
        let output = convert(
            "s",
            "t",
            result(json!({"content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
                {"type": "resource", "resource": {"uri": "file:///b.png", "mimeType": "image/png", "blob": "BBBB"}},
                {"type": "resource", "resource": {"uri": "file:///c.bin", "blob": "CCCC"}},
                {"type": "resource_link", "uri": "file:///d.md", "name": "d"}
            ]})),
        )
        .expect("ok");
        assert_eq!(
            texts(&output),
            vec![
                "hello",
                "image image/png",
                "[audio (audio/wav), 4B of base64 data, not shown]",
                "[resource file:///a.txt]\nbody",
                "image image/png",
                "[resource file:///c.bin (binary), 4B of base64 data, not shown]",
                "[resource link] d <file:///d.md>",
            ]
        );
        assert_eq!(output.details, Some(json!({"server": "s", "tool": "t"})));
    }

    #[test]
    fn structured_content_is_shown_when_there_is_no_content() {
        let output = convert(
            "s",
            "t",
            result(json!({"content": [], "structuredContent": {"answer": 42}})),
        )
        .expect("ok");
        assert_eq!(texts(&output), vec!["{\n  \"answer\": 42\n}"]);
        assert_eq!(
            output.details.expect("details")["structuredContent"],
            json!({"answer": 42})
        );
        let output = convert("s", "t", result(json!({"content": []}))).expect("ok");
        assert_eq!(texts(&output), vec!["(The tool returned no content.)"]);
    }

    #[test]
    fn is_error_becomes_a_tool_error_with_the_servers_text() {
        let error = convert(
            "s",
            "t",
            result(json!({"content": [{"type": "text", "text": "no such file"}], "isError": true})),
        )
        .expect_err("error");
        assert_eq!(error.0, "no such file");
        let error =
            convert("s", "t", result(json!({"content": [], "isError": true}))).expect_err("error");
        assert_eq!(
            error.0,
            "MCP tool `t` of server `s` failed without saying why."
        );
    }

    #[test]
    fn long_text_is_truncated() {
        let output = convert(
            "s",
            "t",
            result(json!({"content": [{"type": "text", "text": "é".repeat(40_000)}]})),
        )
        .expect("ok");
        let text = &texts(&output)[0];
        assert!(
            text.ends_with("[Output truncated: 50.0KB of 78.1KB shown.]"),
            "{}",
            &text[text.len() - 80..]
        );
        assert!(text.len() < DEFAULT_MAX_BYTES + 100);
    }

    #[test]
    fn schemas_are_object_schemas_with_properties() {
        let schema = |v: Value| match v {
            Value::Object(map) => object_schema(map),
            _ => unreachable!(),
        };
        assert_eq!(
            schema(json!({})),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            schema(
                json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]})
            ),
            json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]})
        );
    }
}
