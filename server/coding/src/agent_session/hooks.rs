//! The agent hooks of a session: keys resolved per call (they may come from a command that
//! prints a fresh token) and the coding layer's message conversion.

use std::sync::{Arc, Mutex};

use tandem_agent::{
    AfterToolCall, AfterToolCallResult, AgentHooks, AgentMessage, BeforeToolCall,
    BeforeToolCallResult, BoxFuture,
};
use tandem_ai::registry::ModelRegistry;
use tandem_ai::sync::lock;
use tandem_ai::{Message, TextContent, UserBlock, UserContent};

use crate::extensions::{FinishedCall, SessionExtensions};
use crate::settings::Settings;

/// What the model reads instead of an image when `images.blockImages` is on (pi 1.6's words).
pub const IMAGE_BLOCKED: &str = "Image reading is disabled.";

/// Hooks installed on a session's agent.
pub(super) struct SessionHooks {
    registry: Option<Arc<ModelRegistry>>,
    runtime_api_key: Option<String>,
    /// The session's settings, read at each call (a folder trusted later changes them).
    settings: Arc<Mutex<Settings>>,
    /// The session's extensions: `tool_call`, `tool_result` and `context`.
    extensions: Arc<Mutex<Option<Arc<dyn SessionExtensions>>>>,
}

impl SessionHooks {
    pub(super) fn new(
        registry: Option<Arc<ModelRegistry>>,
        runtime_api_key: Option<String>,
        settings: Arc<Mutex<Settings>>,
        extensions: Arc<Mutex<Option<Arc<dyn SessionExtensions>>>>,
    ) -> Self {
        SessionHooks {
            registry,
            runtime_api_key,
            settings,
            extensions,
        }
    }
}

impl AgentHooks for SessionHooks {
    fn convert_to_llm(&self, messages: &[AgentMessage]) -> Vec<Message> {
        let mut converted = crate::messages::convert_to_llm(messages);
        if lock(&self.settings).images().block_images {
            converted.iter_mut().for_each(block_images);
        }
        converted
    }

    fn transform_context<'a>(
        &'a self,
        messages: Vec<AgentMessage>,
    ) -> BoxFuture<'a, Result<Vec<AgentMessage>, String>> {
        Box::pin(async move {
            let extensions = lock(&self.extensions).clone();
            match extensions {
                Some(extensions) => Ok(extensions.context(messages).await),
                None => Ok(messages),
            }
        })
    }

    fn before_tool_call<'a>(
        &'a self,
        call: BeforeToolCall<'a>,
    ) -> BoxFuture<'a, Option<BeforeToolCallResult>> {
        Box::pin(async move {
            let extensions = lock(&self.extensions).clone()?;
            extensions
                .tool_call(&call.tool_call.id, &call.tool_call.name, call.args)
                .await
        })
    }

    fn after_tool_call<'a>(
        &'a self,
        call: AfterToolCall<'a>,
    ) -> BoxFuture<'a, Result<Option<AfterToolCallResult>, String>> {
        Box::pin(async move {
            let Some(extensions) = lock(&self.extensions).clone() else {
                return Ok(None);
            };
            let result = serde_json::to_value(call.result).unwrap_or_default();
            Ok(extensions
                .tool_result(FinishedCall {
                    call_id: &call.tool_call.id,
                    tool: &call.tool_call.name,
                    input: call.args,
                    result: &result,
                    is_error: call.is_error,
                })
                .await)
        })
    }

    fn get_api_key<'a>(
        &'a self,
        provider: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            if let Some(key) = &self.runtime_api_key {
                return Ok(Some(key.clone()));
            }
            let Some(registry) = self.registry.clone() else {
                return Ok(None);
            };
            let provider = provider.to_string();
            // Resolving may run a `!command`: keep it off the async workers.
            tokio::task::spawn_blocking(move || {
                registry
                    .resolve_api_key(&provider, None)
                    .map_err(|e| e.to_string())
            })
            .await
            .map_err(|e| format!("Resolving the API key failed: {e}"))?
        })
    }
}

/// Replaces each image a user message or tool result carries with [`IMAGE_BLOCKED`], one
/// notice for a run of images (`images.blockImages`; the session file keeps the images).
fn block_images(message: &mut Message) {
    let blocks = match message {
        Message::User(user) => match &mut user.content {
            UserContent::Blocks(blocks) => blocks,
            UserContent::Text(_) => return,
        },
        Message::ToolResult(result) => &mut result.content,
        Message::Assistant(_) => return,
    };
    if !blocks.iter().any(|b| matches!(b, UserBlock::Image(_))) {
        return;
    }
    let mut kept: Vec<UserBlock> = Vec::with_capacity(blocks.len());
    for block in blocks.drain(..) {
        let block = match block {
            UserBlock::Image(_) => UserBlock::Text(TextContent {
                text: IMAGE_BLOCKED.to_string(),
                text_signature: None,
            }),
            other => other,
        };
        let repeated = matches!((&block, kept.last()),
            (UserBlock::Text(t), Some(UserBlock::Text(last)))
                if t.text == IMAGE_BLOCKED && last.text == IMAGE_BLOCKED);
        if !repeated {
            kept.push(block);
        }
    }
    *blocks = kept;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_ai::{ImageContent, ToolResultMessage, UserMessage};

    fn image() -> UserBlock {
        UserBlock::Image(ImageContent {
            data: "iVBORw0KGgo=".into(),
            mime_type: "image/png".into(),
        })
    }

    fn text(t: &str) -> UserBlock {
        UserBlock::Text(TextContent {
            text: t.to_string(),
            text_signature: None,
        })
    }

    #[test]
    fn blocked_images_become_one_notice_per_run_and_text_stays() {
        let mut user = Message::User(UserMessage {
            content: UserContent::Blocks(vec![
                text("look"),
                image(),
                image(),
                text("and"),
                image(),
            ]),
            timestamp: 0,
        });
        block_images(&mut user);
        let Message::User(u) = &user else {
            unreachable!()
        };
        assert_eq!(
            u.content,
            UserContent::Blocks(vec![
                text("look"),
                text(IMAGE_BLOCKED),
                text("and"),
                text(IMAGE_BLOCKED)
            ])
        );

        let mut result = Message::ToolResult(ToolResultMessage {
            content: vec![image()],
            ..ToolResultMessage::text("c1", "read", "", false)
        });
        block_images(&mut result);
        let Message::ToolResult(r) = &result else {
            unreachable!()
        };
        assert_eq!(r.content, vec![text(IMAGE_BLOCKED)]);
    }
}
