//! Closure-based tools and hooks.

use std::future::Future;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tandem_agent::{
    AfterToolCall, AfterToolCallResult, AgentHooks, AgentTool, BeforeToolCall,
    BeforeToolCallResult, BoxFuture, CompletedTurn, ExecutionMode, NextTurn, ToolError,
    ToolInvocation, ToolOutput,
};

type ToolFn =
    dyn Fn(ToolInvocation) -> BoxFuture<'static, Result<ToolOutput, ToolError>> + Send + Sync;

/// A tool whose `execute` is a closure.
pub struct FnTool {
    name: String,
    schema: Value,
    mode: ExecutionMode,
    run: Box<ToolFn>,
}

impl FnTool {
    /// A tool `name` with `schema` running `f`.
    pub fn new<F, Fut>(name: &str, schema: Value, f: F) -> Self
    where
        F: Fn(ToolInvocation) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        FnTool {
            name: name.into(),
            schema,
            mode: ExecutionMode::Parallel,
            run: Box::new(move |call| Box::pin(f(call))),
        }
    }

    /// A tool `name` accepting any object, running `f`.
    pub fn any<F, Fut>(name: &str, f: F) -> Self
    where
        F: Fn(ToolInvocation) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        FnTool::new(name, json!({"type": "object"}), f)
    }

    /// Declares the tool sequential.
    pub fn sequential(mut self) -> Self {
        self.mode = ExecutionMode::Sequential;
        self
    }

    /// As a trait object.
    pub fn arc(self) -> Arc<dyn AgentTool> {
        Arc::new(self)
    }
}

impl AgentTool for FnTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "a test tool"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }
    fn execute(&self, call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        (self.run)(call)
    }
}

/// A tool `name` that answers `"<name> ok: <args>"` and records the arguments it received.
pub fn recording_tool(name: &str) -> (Arc<dyn AgentTool>, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let label = name.to_string();
    let tool = FnTool::any(name, move |call: ToolInvocation| {
        log.lock().expect("log").push(call.args.clone());
        let text = format!("{label} ok: {}", call.args);
        async move { Ok(ToolOutput::text(text)) }
    });
    (tool.arc(), seen)
}

// ---------------------------------------------------------------------------------------------
// Hooks

type BeforeFn = dyn Fn(&BeforeToolCall<'_>) -> Option<BeforeToolCallResult> + Send + Sync;
type AfterFn =
    dyn Fn(&AfterToolCall<'_>) -> Result<Option<AfterToolCallResult>, String> + Send + Sync;
type TurnFn<T> = dyn Fn(&CompletedTurn<'_>) -> T + Send + Sync;
type KeyFn = dyn Fn(&str) -> Result<Option<String>, String> + Send + Sync;

/// Hooks built from synchronous closures; unset hooks keep the neutral default.
#[derive(Default)]
pub struct TestHooks {
    before: Option<Box<BeforeFn>>,
    after: Option<Box<AfterFn>>,
    prepare: Option<Box<TurnFn<Option<NextTurn>>>>,
    stop_after: Option<Box<TurnFn<bool>>>,
    api_key: Option<Box<KeyFn>>,
}

impl TestHooks {
    /// No hooks set.
    pub fn new() -> Self {
        TestHooks::default()
    }

    /// Sets `before_tool_call`.
    pub fn before(
        mut self,
        f: impl Fn(&BeforeToolCall<'_>) -> Option<BeforeToolCallResult> + Send + Sync + 'static,
    ) -> Self {
        self.before = Some(Box::new(f));
        self
    }

    /// Sets `after_tool_call`.
    pub fn after(
        mut self,
        f: impl Fn(&AfterToolCall<'_>) -> Result<Option<AfterToolCallResult>, String>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        self.after = Some(Box::new(f));
        self
    }

    /// Sets `prepare_next_turn`.
    pub fn prepare(
        mut self,
        f: impl Fn(&CompletedTurn<'_>) -> Option<NextTurn> + Send + Sync + 'static,
    ) -> Self {
        self.prepare = Some(Box::new(f));
        self
    }

    /// Sets `should_stop_after_turn`.
    pub fn stop_after(
        mut self,
        f: impl Fn(&CompletedTurn<'_>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.stop_after = Some(Box::new(f));
        self
    }

    /// Sets `get_api_key`.
    pub fn api_key(
        mut self,
        f: impl Fn(&str) -> Result<Option<String>, String> + Send + Sync + 'static,
    ) -> Self {
        self.api_key = Some(Box::new(f));
        self
    }

    /// As a trait object.
    pub fn arc(self) -> Arc<dyn AgentHooks> {
        Arc::new(self)
    }
}

impl AgentHooks for TestHooks {
    fn get_api_key<'a>(
        &'a self,
        provider: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, String>> {
        let out = match &self.api_key {
            Some(f) => f(provider),
            None => Ok(None),
        };
        Box::pin(std::future::ready(out))
    }

    fn before_tool_call<'a>(
        &'a self,
        call: BeforeToolCall<'a>,
    ) -> BoxFuture<'a, Option<BeforeToolCallResult>> {
        let out = self.before.as_ref().and_then(|f| f(&call));
        Box::pin(std::future::ready(out))
    }

    fn after_tool_call<'a>(
        &'a self,
        call: AfterToolCall<'a>,
    ) -> BoxFuture<'a, Result<Option<AfterToolCallResult>, String>> {
        let out = match &self.after {
            Some(f) => f(&call),
            None => Ok(None),
        };
        Box::pin(std::future::ready(out))
    }

    fn prepare_next_turn<'a>(&'a self, turn: CompletedTurn<'a>) -> BoxFuture<'a, Option<NextTurn>> {
        let out = self.prepare.as_ref().and_then(|f| f(&turn));
        Box::pin(std::future::ready(out))
    }

    fn should_stop_after_turn<'a>(&'a self, turn: CompletedTurn<'a>) -> BoxFuture<'a, bool> {
        let out = self.stop_after.as_ref().is_some_and(|f| f(&turn));
        Box::pin(std::future::ready(out))
    }
}
