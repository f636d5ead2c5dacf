//! Text mode (`-p`): what pi prints once the run is over.
//!
//! Only the last message counts. If it is an assistant message that failed or was aborted, its
//! error goes to stderr and the process exits with 1; otherwise each of its text blocks is
//! printed followed by a newline (thinking and tool calls are not shown). A run whose last
//! message is not an assistant message prints nothing.

use tandem_agent::AgentMessage;
use tandem_ai::{AssistantBlock, AssistantMessage, StopReason};

/// What to print on stdout for `message`, or the error for stderr (exit code 1).
pub fn final_text(message: &AssistantMessage) -> Result<String, String> {
    if matches!(message.stop_reason, StopReason::Error | StopReason::Aborted) {
        return Err(message
            .error_message
            .clone()
            .unwrap_or_else(|| format!("Request {}", message.stop_reason.as_str())));
    }
    let mut out = String::new();
    for block in &message.content {
        if let AssistantBlock::Text(text) = block {
            out.push_str(&text.text);
            out.push('\n');
        }
    }
    Ok(out)
}

/// [`final_text`] of the last message of a run's history; empty when it is not an assistant
/// message.
pub fn final_text_of(messages: &[AgentMessage]) -> Result<String, String> {
    match messages.last().and_then(AgentMessage::as_assistant) {
        Some(last) => final_text(last),
        None => Ok(String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_ai::{Api, TextContent, ThinkingContent, UserMessage};

    fn answer(
        blocks: Vec<AssistantBlock>,
        stop: StopReason,
        error: Option<&str>,
    ) -> AssistantMessage {
        let mut m = AssistantMessage::empty(Api::OpenAiCompletions, "p", "m");
        m.content = blocks;
        m.stop_reason = stop;
        m.error_message = error.map(str::to_string);
        m
    }

    fn text(t: &str) -> AssistantBlock {
        AssistantBlock::Text(TextContent {
            text: t.into(),
            text_signature: None,
        })
    }

    #[test]
    fn each_text_block_is_a_line_and_thinking_is_hidden() {
        let thinking = AssistantBlock::Thinking(ThinkingContent {
            thinking: "hmm".into(),
            ..ThinkingContent::default()
        });
        let m = answer(
            vec![thinking, text("Done."), text("Bye")],
            StopReason::Stop,
            None,
        );
        assert_eq!(final_text(&m), Ok("Done.\nBye\n".to_string()));
        assert_eq!(
            final_text(&answer(vec![], StopReason::Length, None)),
            Ok(String::new())
        );
    }

    #[test]
    fn failures_are_errors_with_pi_fallback_texts() {
        let m = answer(
            vec![text("partial")],
            StopReason::Error,
            Some("429 rate limited"),
        );
        assert_eq!(final_text(&m), Err("429 rate limited".to_string()));
        assert_eq!(
            final_text(&answer(vec![], StopReason::Aborted, None)),
            Err("Request aborted".to_string())
        );
        assert_eq!(
            final_text(&answer(vec![], StopReason::Error, None)),
            Err("Request error".to_string())
        );
    }

    #[test]
    fn only_a_final_assistant_message_prints() {
        let user: AgentMessage = UserMessage::text("hi").into();
        let done: AgentMessage = answer(vec![text("ok")], StopReason::Stop, None).into();
        assert_eq!(
            final_text_of(&[user.clone(), done.clone()]),
            Ok("ok\n".into())
        );
        assert_eq!(final_text_of(&[done, user]), Ok(String::new()));
        assert_eq!(final_text_of(&[]), Ok(String::new()));
    }
}
