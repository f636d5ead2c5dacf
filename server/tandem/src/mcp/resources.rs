//! MCP resources as pi 1.6 offers them: three tools over every connected server that offers
//! resources (and is not `hidden`): `list_mcp_resources`, `list_mcp_resource_templates` and
//! `read_mcp_resource`, the names Codex and opencode use, so models that know them need nothing
//! new.
//!
//! Listings are JSON text: `{server?, resources: [{server, uri, name, ...}], nextCursor?,
//! errors?}` (templates: `resourceTemplates`). With a `server`, one page, and `cursor` goes on;
//! without, every page of every server, a server that fails named in `errors`. MCP App
//! interfaces (`ui://` URIs, `profile=mcp-app` HTML) are left out, and so are `_meta` and icons.
//! A read resource becomes text and images for the model; other binary contents are saved to a
//! temp file whose path the model gets.

use std::sync::{Arc, Weak};

use base64::Engine as _;
use rmcp::model::{
    ClientRequest, ListResourceTemplatesRequest, ListResourcesRequest, PaginatedRequestParams,
    ReadResourceRequest, ReadResourceRequestParams, ServerResult,
};
use serde_json::{json, Map, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};
use tandem_ai::{ImageContent, UserBlock};
use tokio_util::sync::CancellationToken;

use super::connection::Asked;
use super::server::Server;
use super::tool::text_block;

/// How many pages of one server a listing of every server reads at most (a server whose cursor
/// never ends must not hold the call forever).
const MAX_PAGES: usize = 100;

/// Which of the three tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Resources,
    Templates,
    Read,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Resources => "list_mcp_resources",
            Kind::Templates => "list_mcp_resource_templates",
            Kind::Read => "read_mcp_resource",
        }
    }

    /// The listing's key in the server's answer and in the tool's JSON.
    fn key(self) -> &'static str {
        match self {
            Kind::Templates => "resourceTemplates",
            _ => "resources",
        }
    }

    fn method(self) -> &'static str {
        match self {
            Kind::Resources => "resources/list",
            Kind::Templates => "resources/templates/list",
            Kind::Read => "resources/read",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Kind::Resources => {
                "List the resources the connected MCP servers share (files, schemas, records, \
                 other context). Give `server` for one server's page, then its `nextCursor` as \
                 `cursor` for the next; leave both out for everything at once. Read one with \
                 read_mcp_resource."
            }
            Kind::Templates => {
                "List the resource templates of the connected MCP servers: URI patterns (RFC \
                 6570) for resources that take parameters. Fill one in and read it with \
                 read_mcp_resource. Give `server` for one server's page, `cursor` for the next."
            }
            Kind::Read => {
                "Read one resource of an MCP server, by the server's name and the resource's \
                 URI (as list_mcp_resources gave them, or a filled-in template)."
            }
        }
    }

    fn parameters(self) -> Value {
        match self {
            Kind::Resources | Kind::Templates => json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description":
                        "The MCP server's name; leave out to list every server."},
                    "cursor": {"type": "string", "description":
                        "The `nextCursor` of the previous page of the same server; leave out \
                         for the first page."},
                },
                "additionalProperties": false,
            }),
            Kind::Read => json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description":
                        "The MCP server's name, as the listing's `server` field gives it."},
                    "uri": {"type": "string", "description": "The resource's URI."},
                },
                "required": ["server", "uri"],
                "additionalProperties": false,
            }),
        }
    }
}

/// The three tools over `servers` (those that offer resources), or none when there are none.
pub(super) fn tools(servers: &[Arc<Server>]) -> Vec<Arc<dyn AgentTool>> {
    if servers.is_empty() {
        return Vec::new();
    }
    let mut sorted: Vec<&Arc<Server>> = servers.iter().collect();
    sorted.sort_by(|a, b| a.name().cmp(b.name()));
    let servers: Arc<[Weak<Server>]> = sorted.into_iter().map(Arc::downgrade).collect();
    [Kind::Resources, Kind::Templates, Kind::Read]
        .into_iter()
        .map(|kind| {
            Arc::new(ResourceTool {
                kind,
                parameters: kind.parameters(),
                servers: servers.clone(),
            }) as Arc<dyn AgentTool>
        })
        .collect()
}

struct ResourceTool {
    kind: Kind,
    parameters: Value,
    /// Weak, sorted by name: the servers live as long as their [`super::McpTools`].
    servers: Arc<[Weak<Server>]>,
}

impl AgentTool for ResourceTool {
    fn name(&self) -> &str {
        self.kind.name()
    }

    fn label(&self) -> &str {
        self.kind.name()
    }

    fn description(&self) -> &str {
        self.kind.description()
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execute(&self, call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args = match &call.args {
                Value::Object(map) => map.clone(),
                Value::Null => Map::new(),
                other => {
                    return Err(ToolError::new(format!(
                        "The arguments of `{}` must be a JSON object, not {other}.",
                        self.kind.name()
                    )))
                }
            };
            let server = text_argument(&args, "server")?;
            match self.kind {
                Kind::Read => {
                    let Some(server) = server else {
                        return Err(ToolError::new("`server` must be given."));
                    };
                    let Some(uri) = text_argument(&args, "uri")? else {
                        return Err(ToolError::new("`uri` must be given."));
                    };
                    let server = self.find(&server)?;
                    read(&server, &uri, &call.cancel).await
                }
                Kind::Resources | Kind::Templates => {
                    let cursor = text_argument(&args, "cursor")?;
                    let payload = match server {
                        Some(name) => {
                            let server = self.find(&name)?;
                            let page = page(&server, self.kind, cursor, &call.cancel)
                                .await
                                .map_err(ToolError::new)?;
                            let mut payload = json!({"server": server.name()});
                            payload[self.kind.key()] = Value::Array(page.items);
                            if let Some(next) = page.next {
                                payload["nextCursor"] = Value::String(next);
                            }
                            payload
                        }
                        None if cursor.is_some() => {
                            return Err(ToolError::new(
                                "`cursor` goes with the `server` whose listing gave it; give \
                                 both, or neither to list every server."
                                    .to_string(),
                            ))
                        }
                        None => self.everything(&call.cancel).await,
                    };
                    let text = serde_json::to_string(&payload).unwrap_or_default();
                    Ok(ToolOutput {
                        content: vec![text_block(text)],
                        details: Some(json!({"tool": self.kind.name()})),
                        ..ToolOutput::default()
                    })
                }
            }
        })
    }
}

impl ResourceTool {
    fn live(&self) -> Vec<Arc<Server>> {
        self.servers.iter().filter_map(Weak::upgrade).collect()
    }

    fn find(&self, name: &str) -> Result<Arc<Server>, ToolError> {
        let live = self.live();
        if let Some(server) = live.iter().find(|s| s.name() == name) {
            return Ok(server.clone());
        }
        let names: Vec<&str> = live.iter().map(|s| s.name()).collect();
        Err(ToolError::new(if names.is_empty() {
            format!("MCP server `{name}` offers no resources (no server does now).")
        } else {
            format!(
                "MCP server `{name}` offers no resources. Servers with resources: {}.",
                names.join(", ")
            )
        }))
    }

    /// Every page of every server; a server that fails is named in `errors`.
    async fn everything(&self, cancel: &CancellationToken) -> Value {
        let servers = self.live();
        let listings = futures_util::future::join_all(
            servers
                .iter()
                .map(|server| all_pages(server, self.kind, cancel)),
        )
        .await;
        let mut items = Vec::new();
        let mut errors = Vec::new();
        for (server, listing) in servers.iter().zip(listings) {
            match listing {
                Ok(found) => items.extend(found),
                Err(error) => errors.push(json!({"server": server.name(), "error": error})),
            }
        }
        let mut payload = json!({});
        payload[self.kind.key()] = Value::Array(items);
        if !errors.is_empty() {
            payload["errors"] = Value::Array(errors);
        }
        payload
    }
}

/// A string argument, trimmed; `None` when absent, null or blank.
fn text_argument(args: &Map<String, Value>, key: &str) -> Result<Option<String>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => {
            let text = text.trim();
            Ok((!text.is_empty()).then(|| text.to_string()))
        }
        Some(other) => Err(ToolError::new(format!(
            "`{key}` must be a string, not {other}."
        ))),
    }
}

struct Page {
    items: Vec<Value>,
    next: Option<String>,
}

/// One page of `server`'s listing, from `cursor`.
async fn page(
    server: &Server,
    kind: Kind,
    cursor: Option<String>,
    cancel: &CancellationToken,
) -> Result<Page, String> {
    let params = PaginatedRequestParams::default().with_cursor(cursor);
    let request = match kind {
        Kind::Templates => ClientRequest::ListResourceTemplatesRequest(
            ListResourceTemplatesRequest::with_param(params),
        ),
        _ => ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(params)),
    };
    let connection = server.connection().await?;
    let what = Asked::Method(kind.method(), None);
    let answer = connection.request(what, request, cancel).await?;
    let value = answer_value(&answer);
    let Some(Value::Array(items)) = value.get(kind.key()) else {
        return Err(connection.unexpected(what, &format!("a `{}` list", kind.key()), &answer));
    };
    let items = items
        .iter()
        .filter(|item| !is_app_interface(item))
        .map(|item| listed(server.name(), item))
        .collect();
    let next = value
        .get("nextCursor")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    Ok(Page { items, next })
}

/// Every page of `server`'s listing (at most [`MAX_PAGES`]; a cursor seen before ends it).
async fn all_pages(
    server: &Server,
    kind: Kind,
    cancel: &CancellationToken,
) -> Result<Vec<Value>, String> {
    let mut items = Vec::new();
    let mut cursor = None;
    let mut seen = Vec::new();
    for _ in 0..MAX_PAGES {
        let page = page(server, kind, cursor.clone(), cancel).await?;
        items.extend(page.items);
        match page.next {
            Some(next) if !seen.contains(&next) => {
                seen.push(next.clone());
                cursor = Some(next);
            }
            _ => return Ok(items),
        }
    }
    Ok(items)
}

/// The answer as JSON (the typed result may have been read as another kind of result: only its
/// fields matter here).
fn answer_value(answer: &ServerResult) -> Value {
    serde_json::to_value(answer).unwrap_or(Value::Null)
}

/// MCP App interfaces: only hosts that render them can use them.
fn is_app_interface(item: &Value) -> bool {
    let uri = item
        .get("uri")
        .or_else(|| item.get("uriTemplate"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let mime = item.get("mimeType").and_then(Value::as_str).unwrap_or("");
    let mime = mime.to_ascii_lowercase().replace([' ', '"'], "");
    uri.starts_with("ui://") || mime.contains(";profile=mcp-app")
}

/// A listed item tagged with its server, without `_meta` and icons.
fn listed(server: &str, item: &Value) -> Value {
    let mut out = Map::new();
    out.insert("server".to_string(), Value::String(server.to_string()));
    if let Value::Object(fields) = item {
        for (key, value) in fields {
            if key != "_meta" && key != "icons" && key != "server" {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

/// `resources/read` of `uri`, as the model's content.
async fn read(
    server: &Server,
    uri: &str,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let connection = server.connection().await.map_err(ToolError::new)?;
    let what = Asked::Method("resources/read", Some(uri));
    let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
        ReadResourceRequestParams::new(uri),
    ));
    let answer = connection
        .request(what, request, cancel)
        .await
        .map_err(ToolError::new)?;
    let value = answer_value(&answer);
    let Some(Value::Array(contents)) = value.get("contents") else {
        return Err(ToolError::new(connection.unexpected(
            what,
            "resource contents",
            &answer,
        )));
    };
    let mut content = Vec::new();
    for item in contents {
        let item_uri = item.get("uri").and_then(Value::as_str).unwrap_or(uri);
        if contents.len() > 1 {
            content.push(text_block(format!("{item_uri}:")));
        }
        content.push(contents_block(item_uri, item).await);
    }
    if content.is_empty() {
        content.push(text_block(format!("Resource {uri} is empty.")));
    }
    let contents: Vec<Value> = contents
        .iter()
        .map(|item| {
            let mut item = item.clone();
            if let Value::Object(fields) = &mut item {
                fields.remove("_meta");
            }
            item
        })
        .collect();
    Ok(ToolOutput {
        content,
        details: Some(json!({
            "server": server.name(),
            "tool": Kind::Read.name(),
            "structuredContent": {"server": server.name(), "uri": uri, "contents": contents},
        })),
        ..ToolOutput::default()
    })
}

/// One item of a read resource: its text, its image, or where its bytes were saved.
async fn contents_block(uri: &str, item: &Value) -> UserBlock {
    let mime = item.get("mimeType").and_then(Value::as_str);
    if let Some(text) = item.get("text").and_then(Value::as_str) {
        return text_block(text);
    }
    let Some(blob) = item.get("blob").and_then(Value::as_str) else {
        return text_block(format!("[resource {uri}: neither text nor data]"));
    };
    if let Some(mime) = mime.filter(|m| m.starts_with("image/")) {
        return UserBlock::Image(ImageContent {
            data: blob.to_string(),
            mime_type: mime.to_string(),
        });
    }
    let kind = mime.unwrap_or("binary");
    let bytes = match base64::engine::general_purpose::STANDARD.decode(blob.trim()) {
        Ok(bytes) => bytes,
        Err(e) => {
            return text_block(format!(
                "[resource {uri} ({kind}): its data is not valid base64 ({e})]"
            ))
        }
    };
    let size = bytes.len();
    let saved = tokio::task::spawn_blocking(move || -> std::io::Result<std::path::PathBuf> {
        let mut file = tempfile::Builder::new()
            .prefix("tandem-mcp-resource-")
            .tempfile()?;
        std::io::Write::write_all(&mut file, &bytes)?;
        let (_, path) = file.keep().map_err(|e| e.error)?;
        Ok(path)
    })
    .await;
    match saved {
        Ok(Ok(path)) => text_block(format!(
            "[resource {uri} ({kind}, {size} bytes) saved to {}]",
            path.display()
        )),
        Ok(Err(e)) => text_block(format!(
            "[resource {uri} ({kind}, {size} bytes): saving it to a temp file failed: {e}]"
        )),
        Err(e) => text_block(format!(
            "[resource {uri} ({kind}, {size} bytes): saving it failed: {e}]"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_interfaces_are_recognized_by_uri_or_profile() {
        assert!(is_app_interface(&json!({"uri": "ui://widget"})));
        assert!(is_app_interface(&json!({"uriTemplate": "ui://w/{id}"})));
        assert!(is_app_interface(
            &json!({"uri": "x://a", "mimeType": "text/html; profile=\"mcp-app\""})
        ));
        assert!(is_app_interface(
            &json!({"uri": "x://a", "mimeType": "text/html;profile=mcp-app"})
        ));
        assert!(!is_app_interface(
            &json!({"uri": "x://a", "mimeType": "text/html"})
        ));
    }

    #[test]
    fn listed_items_carry_their_server_and_lose_meta_and_icons() {
        let item = json!({"uri": "x://a", "name": "a", "_meta": {"k": 1}, "icons": [],
                          "server": "forged", "size": 3});
        assert_eq!(
            listed("docs", &item),
            json!({"server": "docs", "uri": "x://a", "name": "a", "size": 3})
        );
    }

    #[test]
    fn arguments_are_trimmed_strings_or_absent() {
        let args = json!({"a": " x ", "b": "  ", "c": null, "d": 3});
        let args = args.as_object().unwrap();
        assert_eq!(text_argument(args, "a").unwrap(), Some("x".to_string()));
        assert_eq!(text_argument(args, "b").unwrap(), None);
        assert_eq!(text_argument(args, "c").unwrap(), None);
        assert_eq!(text_argument(args, "missing").unwrap(), None);
        assert!(text_argument(args, "d")
            .unwrap_err()
            .0
            .contains("`d` must be a string"));
    }
}
