//! Running one assistant message's tool calls.
//!
//! Each call is prepared in source order (lookup, argument preparation, schema validation with
//! coercion, the before-hook), emitting `tool_execution_start` and, for calls that fail
//! preparation, `tool_execution_end` at once. Parallel batches (the default) then run every
//! prepared call concurrently: `tool_execution_end` arrives as each finishes, the result messages
//! afterwards in source order; steering waits for the whole batch. A batch is sequential when
//! configured so or when one of its tools asks for it; there, steering that arrives between calls
//! skips the rest ("Skipped due to queued user message."). After an abort, calls not yet run are
//! answered "Operation aborted".

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use serde_json::Value;
use tandem_ai::{now_millis, AssistantMessage, ToolCall, ToolResultMessage};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::{AfterToolCall, AgentContext, BeforeToolCall, LoopConfig};
use crate::event::{AgentEvent, EventSink};
use crate::message::AgentMessage;
use crate::tool::{AgentTool, ExecutionMode, ToolInvocation, ToolOutput, ToolUpdates};
use crate::validate::validate_tool_arguments;

/// The result text of calls skipped because the user steered.
pub const SKIPPED_TEXT: &str = "Skipped due to queued user message.";
/// The result text of calls that did not run because the run was aborted.
pub const ABORTED_TEXT: &str = "Operation aborted";
/// How long an aborted tool may take to clean up (kill its processes) before it is dropped.
const ABORT_GRACE: Duration = Duration::from_secs(3);
/// Partial results buffered between tools and the loop.
const UPDATE_CAPACITY: usize = 64;

/// The outcome of a batch.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// Result messages in source order.
    pub messages: Vec<ToolResultMessage>,
    /// Every result asked to terminate.
    pub terminate: bool,
    /// Steering that interrupted the batch; it goes before the next model call.
    pub steering: Option<Vec<AgentMessage>>,
}

/// A call's final result.
#[derive(Debug, Clone)]
struct Finalized {
    result: ToolOutput,
    is_error: bool,
    /// How long `execute` ran; `None` when the tool never ran.
    duration_ms: Option<u64>,
}

impl Finalized {
    fn error(message: impl Into<String>) -> Self {
        Finalized {
            duration_ms: None,
            result: ToolOutput::error(message),
            is_error: true,
        }
    }
}

enum Prepared {
    /// Boxed: the rare path (an unknown tool, bad arguments, a hook's refusal).
    Immediate(Box<Finalized>),
    Ready {
        tool: Arc<dyn AgentTool>,
        args: Value,
    },
}

/// The text for a call cut off by the output limit (pi's wording).
pub fn truncated_call_text(tool_name: &str) -> String {
    format!(
        "Tool call \"{tool_name}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )
}

fn result_message(call: &ToolCall, f: &Finalized) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content: f.result.content.clone(),
        details: f.result.details.clone(),
        is_error: f.is_error,
        duration_ms: f.duration_ms,
        timestamp: now_millis(),
        usage: f.result.usage,
        added_tool_names: f
            .result
            .added_tool_names
            .clone()
            .filter(|names| !names.is_empty()),
    }
}

async fn emit_start(call: &ToolCall, emit: &dyn EventSink) {
    emit.emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
    })
    .await;
}

async fn emit_end(call: &ToolCall, f: &Finalized, emit: &dyn EventSink) {
    emit.emit(AgentEvent::ToolExecutionEnd {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: f.result.clone(),
        is_error: f.is_error,
        duration_ms: f.duration_ms,
    })
    .await;
}

async fn emit_message(call: &ToolCall, f: &Finalized, emit: &dyn EventSink) -> ToolResultMessage {
    let message = result_message(call, f);
    let agent_message: AgentMessage = message.clone().into();
    emit.emit(AgentEvent::MessageStart {
        message: agent_message.clone(),
    })
    .await;
    emit.emit(AgentEvent::MessageEnd {
        message: agent_message,
    })
    .await;
    message
}

/// Answers every call of a message cut off by the output limit with an error, running none.
pub(crate) async fn fail_truncated_calls(
    message: &AssistantMessage,
    emit: &dyn EventSink,
) -> Batch {
    let mut batch = Batch::default();
    for call in message.tool_calls() {
        emit_start(call, emit).await;
        let f = Finalized::error(truncated_call_text(&call.name));
        emit_end(call, &f, emit).await;
        batch.messages.push(emit_message(call, &f, emit).await);
    }
    batch
}

async fn prepare(
    context: &AgentContext,
    message: &AssistantMessage,
    call: &ToolCall,
    config: &LoopConfig,
    cancel: &CancellationToken,
) -> Prepared {
    let Some(tool) = context.tool(&call.name).cloned() else {
        return Prepared::Immediate(Box::new(Finalized::error(format!(
            "Tool {} not found",
            call.name
        ))));
    };
    let prepared = std::panic::catch_unwind(AssertUnwindSafe(|| {
        tool.prepare_arguments(call.arguments.clone())
    }));
    let Ok(prepared) = prepared else {
        return Prepared::Immediate(Box::new(Finalized::error(format!(
            "Tool {} failed while preparing its arguments",
            call.name
        ))));
    };
    let args = match validate_tool_arguments(&call.name, tool.parameters(), &prepared) {
        Ok(args) => args,
        Err(text) => return Prepared::Immediate(Box::new(Finalized::error(text))),
    };
    let decision = config
        .hooks
        .before_tool_call(BeforeToolCall {
            assistant_message: message,
            tool_call: call,
            args: &args,
            context,
        })
        .await;
    if cancel.is_cancelled() {
        return Prepared::Immediate(Box::new(Finalized::error(ABORTED_TEXT)));
    }
    let mut args = args;
    if let Some(decision) = decision {
        if decision.block {
            let mut f = Finalized::error(
                decision
                    .reason
                    .unwrap_or_else(|| "Tool execution was blocked".to_string()),
            );
            f.result.terminate = decision.terminate;
            return Prepared::Immediate(Box::new(f));
        }
        if let Some(changed) = decision.args {
            args = changed;
        }
    }
    Prepared::Ready { tool, args }
}

/// Runs one prepared call to its final (after-hook) result.
#[allow(clippy::too_many_arguments)]
async fn run_call(
    index: usize,
    tool: Arc<dyn AgentTool>,
    args: Value,
    call: &ToolCall,
    message: &AssistantMessage,
    context: &AgentContext,
    config: &LoopConfig,
    updates: mpsc::Sender<(usize, ToolOutput)>,
    cancel: &CancellationToken,
) -> (usize, Finalized) {
    let invocation = ToolInvocation {
        call_id: call.id.clone(),
        args: args.clone(),
        cancel: cancel.child_token(),
        updates: ToolUpdates::new(index, updates),
    };
    let started = std::time::Instant::now();
    let execution = AssertUnwindSafe(tool.execute(invocation)).catch_unwind();
    tokio::pin!(execution);
    let outcome = tokio::select! {
        outcome = &mut execution => outcome,
        _ = cancel.cancelled() => {
            // Let the tool notice the abort and clean up; drop it if it does not.
            match tokio::time::timeout(ABORT_GRACE, &mut execution).await {
                Ok(outcome) => outcome,
                Err(_) => Ok(Err(ABORTED_TEXT.into())),
            }
        }
    };
    let duration_ms = Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
    let mut f = match outcome {
        Ok(Ok(result)) => Finalized {
            result,
            is_error: false,
            duration_ms,
        },
        Ok(Err(e)) => Finalized {
            duration_ms,
            ..Finalized::error(e.0)
        },
        Err(panic) => Finalized {
            duration_ms,
            ..Finalized::error(format!(
                "Tool {} crashed: {}",
                call.name,
                panic_text(panic.as_ref())
            ))
        },
    };
    let after = config
        .hooks
        .after_tool_call(AfterToolCall {
            assistant_message: message,
            tool_call: call,
            args: &args,
            result: &f.result,
            is_error: f.is_error,
            context,
        })
        .await;
    match after {
        Ok(Some(o)) => {
            if let Some(content) = o.content {
                f.result.content = content;
            }
            if let Some(details) = o.details {
                f.result.details = Some(details);
            }
            if let Some(usage) = o.usage {
                f.result.usage = Some(usage);
            }
            if let Some(terminate) = o.terminate {
                f.result.terminate = terminate;
            }
            if let Some(is_error) = o.is_error {
                f.is_error = is_error;
            }
        }
        Ok(None) => {}
        Err(e) => {
            f = Finalized {
                duration_ms: f.duration_ms,
                ..Finalized::error(e)
            }
        }
    }
    (index, f)
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// Runs `calls` of `message`, in parallel or in sequence as configured.
pub(crate) async fn execute_tool_calls(
    context: &AgentContext,
    message: &AssistantMessage,
    config: &LoopConfig,
    emit: &dyn EventSink,
    cancel: &CancellationToken,
) -> Batch {
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    let sequential = config.tool_execution == ExecutionMode::Sequential
        || calls.iter().any(|c| {
            context
                .tool(&c.name)
                .is_some_and(|t| t.execution_mode() == ExecutionMode::Sequential)
        });
    let mut slots: Vec<Option<Finalized>> = vec![None; calls.len()];
    let (tx, mut rx) = mpsc::channel(UPDATE_CAPACITY);
    let mut steering = None;
    let mut messages_emitted = Vec::new();

    if sequential {
        for (i, call) in calls.iter().enumerate() {
            emit_start(call, emit).await;
            let f = match prepare(context, message, call, config, cancel).await {
                Prepared::Immediate(f) => {
                    emit_end(call, &f, emit).await;
                    *f
                }
                Prepared::Ready { tool, args } => {
                    let mut running = FuturesUnordered::new();
                    running.push(run_call(
                        i,
                        tool,
                        args,
                        call,
                        message,
                        context,
                        config,
                        tx.clone(),
                        cancel,
                    ));
                    // `drive` emits the call's partial results and its end event.
                    let mut done = drive(&mut running, &mut rx, &calls, emit).await;
                    match done.pop() {
                        Some((_, f)) => f,
                        None => {
                            let f = Finalized::error(ABORTED_TEXT);
                            emit_end(call, &f, emit).await;
                            f
                        }
                    }
                }
            };
            messages_emitted.push(emit_message(call, &f, emit).await);
            slots[i] = Some(f);
            let rest = &calls[i + 1..];
            if rest.is_empty() {
                break;
            }
            if cancel.is_cancelled() {
                for call in rest {
                    emit_start(call, emit).await;
                    let f = Finalized::error(ABORTED_TEXT);
                    emit_end(call, &f, emit).await;
                    messages_emitted.push(emit_message(call, &f, emit).await);
                }
                break;
            }
            let queued = config.queues.steering();
            if !queued.is_empty() {
                steering = Some(queued);
                for call in rest {
                    emit_start(call, emit).await;
                    let f = Finalized::error(SKIPPED_TEXT);
                    emit_end(call, &f, emit).await;
                    messages_emitted.push(emit_message(call, &f, emit).await);
                }
                break;
            }
        }
        let terminate = !slots.is_empty()
            && slots
                .iter()
                .all(|s| s.as_ref().is_some_and(|f| f.result.terminate));
        return Batch {
            messages: messages_emitted,
            terminate,
            steering,
        };
    }

    // Parallel: prepare in order, then run the prepared calls together.
    let mut running = FuturesUnordered::new();
    let mut prepared_count = 0;
    for (i, call) in calls.iter().enumerate() {
        emit_start(call, emit).await;
        prepared_count = i + 1;
        match prepare(context, message, call, config, cancel).await {
            Prepared::Immediate(f) => {
                emit_end(call, &f, emit).await;
                slots[i] = Some(*f);
            }
            Prepared::Ready { tool, args } => running.push(run_call(
                i,
                tool,
                args,
                call,
                message,
                context,
                config,
                tx.clone(),
                cancel,
            )),
        }
        if cancel.is_cancelled() {
            break;
        }
    }
    drop(tx);
    for (i, f) in drive(&mut running, &mut rx, &calls, emit).await {
        slots[i] = Some(f);
    }
    // Calls never prepared because of an abort.
    for (j, slot) in slots.iter_mut().enumerate() {
        if slot.is_none() {
            if j >= prepared_count {
                emit_start(calls[j], emit).await;
            }
            let f = Finalized::error(ABORTED_TEXT);
            emit_end(calls[j], &f, emit).await;
            *slot = Some(f);
        }
    }
    let finals: Vec<Finalized> = slots.into_iter().flatten().collect();
    for (call, f) in calls.iter().zip(&finals) {
        messages_emitted.push(emit_message(call, f, emit).await);
    }
    let terminate = !finals.is_empty() && finals.iter().all(|f| f.result.terminate);
    Batch {
        messages: messages_emitted,
        terminate,
        // Steering waits for the whole parallel batch; the loop polls it next.
        steering: None,
    }
}

/// Polls the running calls, emitting their partial results as they come and
/// `tool_execution_end` as each finishes (after its earlier partial results). Returns the
/// finished calls in completion order.
async fn drive<F>(
    running: &mut FuturesUnordered<F>,
    updates: &mut mpsc::Receiver<(usize, ToolOutput)>,
    calls: &[&ToolCall],
    emit: &dyn EventSink,
) -> Vec<(usize, Finalized)>
where
    F: std::future::Future<Output = (usize, Finalized)>,
{
    let mut finished: Vec<(usize, Finalized)> = Vec::new();
    let is_done = |finished: &[(usize, Finalized)], i: usize| finished.iter().any(|(j, _)| *j == i);
    while !running.is_empty() {
        tokio::select! {
            biased;
            Some((i, partial)) = updates.recv() => {
                if !is_done(&finished, i) {
                    emit_update(calls, i, partial, emit).await;
                }
            }
            Some((i, f)) = running.next() => {
                // Partial results the call sent before returning come first.
                while let Ok((j, partial)) = updates.try_recv() {
                    if !is_done(&finished, j) {
                        emit_update(calls, j, partial, emit).await;
                    }
                }
                if let Some(call) = calls.get(i) {
                    emit_end(call, &f, emit).await;
                }
                finished.push((i, f));
            }
        }
    }
    finished
}

async fn emit_update(calls: &[&ToolCall], i: usize, partial: ToolOutput, emit: &dyn EventSink) {
    if let Some(call) = calls.get(i) {
        emit.emit(AgentEvent::ToolExecutionUpdate {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.arguments.clone(),
            partial_result: partial,
        })
        .await;
    }
}
