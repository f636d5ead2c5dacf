//! The agent hooks of a session: keys resolved per call (they may come from a command that
//! prints a fresh token) and the coding layer's message conversion.

use std::sync::Arc;

use tandem_agent::{AgentHooks, AgentMessage, BoxFuture};
use tandem_ai::registry::ModelRegistry;
use tandem_ai::Message;

/// Hooks installed on a session's agent.
pub(super) struct SessionHooks {
    registry: Option<Arc<ModelRegistry>>,
    runtime_api_key: Option<String>,
}

impl SessionHooks {
    pub(super) fn new(
        registry: Option<Arc<ModelRegistry>>,
        runtime_api_key: Option<String>,
    ) -> Self {
        SessionHooks {
            registry,
            runtime_api_key,
        }
    }
}

impl AgentHooks for SessionHooks {
    fn convert_to_llm(&self, messages: &[AgentMessage]) -> Vec<Message> {
        crate::messages::convert_to_llm(messages)
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
