//! The two-level loop (pi's `runLoop`): the inner loop runs turns while the model calls tools or
//! steering messages wait; the outer loop starts another round for follow-up messages.
//!
//! A turn is one model call plus its tool calls. Before every call after the first the
//! `prepare_next_turn` hook may swap the context, model or thinking level (compaction, model
//! switches). A turn that ends in `error` or `aborted` ends the run without running its tool
//! calls; a turn cut off by the output limit (`length`) never runs its calls either, but answers
//! each with an error so the model re-issues them.

use tandem_ai::{AssistantMessage, AssistantMessageEvent, Context, StopReason, ToolResultMessage};
use tokio_util::sync::CancellationToken;

use crate::config::{AgentContext, CompletedTurn, LoopConfig};
use crate::event::{AgentEvent, EventSink};
use crate::execute::{execute_tool_calls, fail_truncated_calls, Batch};
use crate::message::AgentMessage;
use crate::tool::tool_definition;

/// Why a run could not proceed (hooks failing, or `continue` with nothing to continue).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoopError {
    /// A hook reported an error.
    #[error("{0}")]
    Hook(String),
    /// `continue` on an empty history.
    #[error("Cannot continue: no messages in context")]
    NothingToContinue,
    /// `continue` when the last message is the assistant's.
    #[error("Cannot continue from message role: assistant")]
    ContinueFromAssistant,
}

/// Runs the loop for `prompts` on top of `context`; returns the messages the run added.
///
/// Emits `agent_start`, `turn_start`, `message_start`/`message_end` for each prompt, then the
/// turns, and always ends with `agent_end` unless it returns an error.
pub async fn run_agent_loop(
    prompts: Vec<AgentMessage>,
    mut context: AgentContext,
    config: LoopConfig,
    emit: &dyn EventSink,
    cancel: CancellationToken,
) -> Result<Vec<AgentMessage>, LoopError> {
    let mut new_messages = prompts.clone();
    context.messages.extend(prompts.iter().cloned());
    emit.emit(AgentEvent::AgentStart).await;
    emit.emit(AgentEvent::TurnStart).await;
    for prompt in prompts {
        emit.emit(AgentEvent::MessageStart {
            message: prompt.clone(),
        })
        .await;
        emit.emit(AgentEvent::MessageEnd { message: prompt }).await;
    }
    run_loop(context, &mut new_messages, config, emit, cancel).await?;
    Ok(new_messages)
}

/// Continues from `context` as it is (after a failed or interrupted turn, or tool results).
/// The last message must not be the assistant's.
pub async fn run_agent_loop_continue(
    context: AgentContext,
    config: LoopConfig,
    emit: &dyn EventSink,
    cancel: CancellationToken,
) -> Result<Vec<AgentMessage>, LoopError> {
    check_continuable(&context.messages)?;
    let mut new_messages = Vec::new();
    emit.emit(AgentEvent::AgentStart).await;
    emit.emit(AgentEvent::TurnStart).await;
    run_loop(context, &mut new_messages, config, emit, cancel).await?;
    Ok(new_messages)
}

/// pi's preconditions for continuing.
pub(crate) fn check_continuable(messages: &[AgentMessage]) -> Result<(), LoopError> {
    match messages.last() {
        None => Err(LoopError::NothingToContinue),
        Some(m) if m.role() == "assistant" => Err(LoopError::ContinueFromAssistant),
        Some(_) => Ok(()),
    }
}

async fn run_loop(
    mut context: AgentContext,
    new_messages: &mut Vec<AgentMessage>,
    mut config: LoopConfig,
    emit: &dyn EventSink,
    cancel: CancellationToken,
) -> Result<(), LoopError> {
    let mut pending = config.queues.steering();
    let mut last_turn: Option<(AssistantMessage, Vec<ToolResultMessage>)> = None;
    loop {
        let mut more_tool_calls = true;
        while more_tool_calls || !pending.is_empty() {
            if let Some((message, results)) = &last_turn {
                let next = config
                    .hooks
                    .prepare_next_turn(CompletedTurn {
                        message,
                        tool_results: results,
                        context: &context,
                        new_messages,
                    })
                    .await;
                if let Some(next) = next {
                    if let Some(c) = next.context {
                        context = c;
                    }
                    if let Some(m) = next.model {
                        config.model = m;
                    }
                    if let Some(level) = next.thinking_level {
                        config.thinking_level = level;
                    }
                }
                if pending.is_empty() {
                    pending = config.queues.steering();
                }
                emit.emit(AgentEvent::TurnStart).await;
            }
            for message in pending.drain(..) {
                emit.emit(AgentEvent::MessageStart {
                    message: message.clone(),
                })
                .await;
                emit.emit(AgentEvent::MessageEnd {
                    message: message.clone(),
                })
                .await;
                context.messages.push(message.clone());
                new_messages.push(message);
            }

            let message = stream_assistant_response(&mut context, &config, emit, &cancel).await?;
            new_messages.push(message.clone().into());
            if matches!(message.stop_reason, StopReason::Error | StopReason::Aborted) {
                emit.emit(AgentEvent::TurnEnd {
                    message,
                    tool_results: Vec::new(),
                })
                .await;
                emit.emit(AgentEvent::AgentEnd {
                    messages: new_messages.clone(),
                })
                .await;
                return Ok(());
            }

            more_tool_calls = false;
            let mut steering_from_batch = None;
            let mut tool_results = Vec::new();
            if message.tool_calls().next().is_some() {
                let batch: Batch = if message.stop_reason == StopReason::Length {
                    fail_truncated_calls(&message, emit).await
                } else {
                    execute_tool_calls(&context, &message, &config, emit, &cancel).await
                };
                more_tool_calls = !batch.terminate;
                steering_from_batch = batch.steering;
                for result in &batch.messages {
                    context.messages.push(result.clone().into());
                    new_messages.push(result.clone().into());
                }
                tool_results = batch.messages;
            }
            emit.emit(AgentEvent::TurnEnd {
                message: message.clone(),
                tool_results: tool_results.clone(),
            })
            .await;
            let stop = config
                .hooks
                .should_stop_after_turn(CompletedTurn {
                    message: &message,
                    tool_results: &tool_results,
                    context: &context,
                    new_messages,
                })
                .await;
            last_turn = Some((message, tool_results));
            if stop {
                emit.emit(AgentEvent::AgentEnd {
                    messages: new_messages.clone(),
                })
                .await;
                return Ok(());
            }
            pending = match steering_from_batch {
                Some(steering) => steering,
                None => config.queues.steering(),
            };
        }
        let follow_ups = config.queues.follow_ups();
        if follow_ups.is_empty() {
            break;
        }
        pending = follow_ups;
    }
    emit.emit(AgentEvent::AgentEnd {
        messages: new_messages.clone(),
    })
    .await;
    Ok(())
}

/// One model call: streams the answer into the context (the partial message is one history
/// entry, replaced by the final message at the end, never one entry per token) and emits
/// `message_start` / `message_update` / `message_end`.
async fn stream_assistant_response(
    context: &mut AgentContext,
    config: &LoopConfig,
    emit: &dyn EventSink,
    cancel: &CancellationToken,
) -> Result<AssistantMessage, LoopError> {
    let messages = config
        .hooks
        .transform_context(context.messages.clone())
        .await
        .map_err(LoopError::Hook)?;
    let llm_context = Context {
        system_prompt: context.system_prompt.clone(),
        messages: config.hooks.convert_to_llm(&messages),
        tools: context
            .tools
            .iter()
            .map(|t| tool_definition(t.as_ref()))
            .collect(),
    };
    let key = config
        .hooks
        .get_api_key(&config.model.provider)
        .await
        .map_err(LoopError::Hook)?;
    let mut options = config.stream_options.clone();
    options.reasoning = config.thinking_level;
    options.cancel = cancel.child_token();
    if let Some(key) = key {
        options.api_key = Some(key);
    }
    let started = std::time::Instant::now();
    let mut stream = (config.stream_fn)(&config.model, &llm_context, options);

    let mut partial_added = false;
    while let Some(event) = stream.next().await {
        match event {
            AssistantMessageEvent::Start { partial } => {
                context.messages.push(partial.clone().into());
                partial_added = true;
                emit.emit(AgentEvent::MessageStart {
                    message: partial.into(),
                })
                .await;
            }
            AssistantMessageEvent::Done { .. } | AssistantMessageEvent::Error { .. } => break,
            update => {
                if partial_added {
                    emit.emit(AgentEvent::MessageUpdate {
                        assistant_message_event: update,
                    })
                    .await;
                }
            }
        }
    }
    // The stream always records a final message (a vanished producer yields a synthetic error).
    let mut final_message = match stream.final_message() {
        Some(m) => m.clone(),
        None => stream.result().await,
    };
    // As pi 1.6 records a call: how long it took and the level it was made at.
    final_message
        .duration_ms
        .get_or_insert_with(|| u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
    final_message
        .thinking_level
        .get_or_insert(config.thinking_level);
    if partial_added {
        if let Some(last) = context.messages.last_mut() {
            *last = final_message.clone().into();
        }
    } else {
        context.messages.push(final_message.clone().into());
        emit.emit(AgentEvent::MessageStart {
            message: final_message.clone().into(),
        })
        .await;
    }
    emit.emit(AgentEvent::MessageEnd {
        message: final_message.clone().into(),
    })
    .await;
    Ok(final_message)
}
