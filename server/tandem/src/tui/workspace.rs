//! The terminal mode's workspace: the disk with questions (outside paths, protected files,
//! and in confirm mode every edit and write with its diff) asked in the terminal, as a picker
//! (`host::asking`).

use tandem_agent::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::host::asking::{Asker, AskingDisk};

/// A question for the user, answered with the index of one of its choices (`None`: dismissed,
/// which counts as the last choice, the refusal).
pub struct Question {
    /// What is asked.
    pub title: String,
    /// Lines shown under it (a diff).
    pub diff: Option<String>,
    /// The answers, the refusal last.
    pub choices: Vec<String>,
    /// Where the answer goes.
    pub answer: oneshot::Sender<Option<usize>>,
}

/// The questions go to the terminal mode's loop, which shows them as pickers.
pub struct TerminalAsker(pub mpsc::UnboundedSender<Question>);

impl Asker for TerminalAsker {
    fn ask<'a>(
        &'a self,
        question: String,
        detail: Option<String>,
        choices: &'a [&'a str],
    ) -> BoxFuture<'a, Result<usize, Option<String>>> {
        Box::pin(async move {
            let (answer, heard) = oneshot::channel();
            let question = Question {
                title: question,
                diff: detail,
                choices: choices.iter().map(|c| c.to_string()).collect(),
                answer,
            };
            // Gone or dismissed: the refusal.
            self.0.send(question).map_err(|_| None)?;
            heard.await.ok().flatten().ok_or(None)
        })
    }
}

/// See the module docs.
pub type TuiWorkspace = AskingDisk<TerminalAsker>;
