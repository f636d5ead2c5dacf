//! The prompts that ask a model for a compaction summary.
//!
//! They follow pi's design (a system prompt that forbids continuing the conversation; the
//! transcript in `<conversation>` tags; a fixed markdown layout for a checkpoint another model
//! can resume from; an update variant that folds new messages into the previous summary; a short
//! variant for the beginning of a split turn) but are written in Tandem's own words. Their
//! wording only shapes what the model writes; nothing reads them back.

/// System prompt of every summarization call.
pub const SUMMARIZATION_SYSTEM_PROMPT: &str = "You write context checkpoints. You are given the \
transcript of a session between a user and an AI coding assistant, and you condense it into a \
structured summary in the exact layout you are asked for.

You are not a participant: do not reply to the user, answer questions from the transcript, or \
carry on with the task. Output the summary and nothing else.";

/// Instructions for a first summary.
pub const SUMMARY_PROMPT: &str = "Summarize the conversation above as a checkpoint. Another \
model will take over the work from this summary alone, so keep whatever it needs to carry on.

Use exactly this layout:

## Goal
[What the user wants to achieve; list several goals if the session covered several tasks.]

## Constraints & Preferences
- [Requirements, limits and preferences the user stated]
- [Write \"(none)\" if there were none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work started but not finished]

### Blocked
- [Anything stopping progress, if there is something]

## Key Decisions
- **[Decision]**: [Why it was made, briefly]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, examples, references or findings needed to continue]
- [Write \"(none)\" if nothing applies]

Be brief in every section. Copy file paths, function names and error messages exactly.";

/// Instructions for folding new messages into the summary in `<previous-summary>`.
pub const UPDATE_SUMMARY_PROMPT: &str = "The conversation above holds only the messages that came \
after the summary in <previous-summary>. Produce the updated checkpoint that covers both.

Rules:
- KEEP everything the previous summary recorded unless it is clearly obsolete
- ADD the new progress, decisions and context
- MOVE items from \"In Progress\" to \"Done\" once they are finished
- REVISE \"Next Steps\" to match where the work now stands
- COPY file paths, function names and error messages exactly

Use exactly this layout:

## Goal
[The goals so far, plus any new ones]

## Constraints & Preferences
- [Earlier ones, plus any new ones]

## Progress
### Done
- [x] [Earlier finished items and newly finished ones]

### In Progress
- [ ] [Work in progress now]

### Blocked
- [What still blocks progress; drop what was resolved]

## Key Decisions
- **[Decision]**: [Why, briefly] (keep the earlier ones)

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Context still needed, old and new]

Be brief in every section. Copy file paths, function names and error messages exactly.";

/// Instructions for the beginning of a turn cut in the middle.
pub const TURN_PREFIX_PROMPT: &str = "The conversation above is only the BEGINNING of a turn that \
was too long to keep whole. Its END (the most recent work) stays in the context verbatim.

Summarize this beginning so the kept end makes sense:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions made and work done in this beginning]

## Context for the Kept Part
- [What is needed to understand the work that follows]

Be brief; cover only what the kept end depends on.";

/// Instructions for the summary of a branch the user leaves in the session tree: compaction's
/// layout without its last section, since the work goes on elsewhere.
pub const BRANCH_SUMMARY_PROMPT: &str = "The conversation above is a branch the user has now \
left to continue from an earlier point. Summarize it so that the work can take into account \
what was tried here.

Use exactly this layout:

## Goal
[What the user was after on this branch]

## Constraints & Preferences
- [Requirements, limits and preferences the user stated]
- [Write \"(none)\" if there were none]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work started but not finished]

### Blocked
- [Anything that stopped progress, if there was something]

## Key Decisions
- **[Decision]**: [Why it was made, briefly]

## Next Steps
1. [What would have come next on this branch]

Be brief in every section. Copy file paths, function names and error messages exactly.";

/// Introduces the user's extra instructions (`/compact <instructions>`).
pub const FOCUS_INTRO: &str = "Pay particular attention to: ";

/// Stands in for the history summary when a split turn is all there is to summarize.
pub const NO_PRIOR_HISTORY: &str = "(Nothing was discussed before this turn.)";

/// Separates the history summary from the split-turn summary in the stored summary.
pub const TURN_CONTEXT_SEPARATOR: &str =
    "\n\n---\n\n**Beginning of the current turn (split at compaction):**\n\n";

/// The user message of a summarization call: the transcript, the previous summary if any, then
/// the instructions.
pub fn summary_request(
    transcript: &str,
    previous_summary: Option<&str>,
    instructions: &str,
) -> String {
    let mut text = format!("<conversation>\n{transcript}\n</conversation>\n\n");
    if let Some(previous) = previous_summary {
        text.push_str(&format!(
            "<previous-summary>\n{previous}\n</previous-summary>\n\n"
        ));
    }
    text.push_str(instructions);
    text
}
