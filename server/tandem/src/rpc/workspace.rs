//! RPC mode's workspace: the disk, as in print and JSON modes, except that what the editors and
//! the terminal mode ask about is asked of the client too — a path outside the folder (read or
//! written) and a file that makes tools run code (`.git/hooks/`, `.envrc`, …) — through pi's
//! extension UI sub-protocol (an `extension_ui_request` `select`; `host::asking`). A client
//! that does not answer within [`QUESTION_TIMEOUT`] (or cancels) is taken as a refusal, which
//! the model sees as the tool's error. Commands run without a question, as in pi's RPC mode.

use std::sync::Arc;
use std::time::Duration;

use tandem_agent::BoxFuture;

use super::dialogs::Dialogs;
use crate::host::asking::{Asker, AskingDisk};

/// How long a permission question waits for the client's answer.
pub const QUESTION_TIMEOUT: Duration = Duration::from_secs(120);

/// The questions go to the client as `select` dialogs.
pub struct ClientAsker(pub Arc<Dialogs>);

impl Asker for ClientAsker {
    fn ask<'a>(
        &'a self,
        question: String,
        _detail: Option<String>,
        choices: &'a [&'a str],
    ) -> BoxFuture<'a, Result<usize, Option<String>>> {
        Box::pin(async move {
            let answer = self.0.select(&question, choices, QUESTION_TIMEOUT).await;
            answer
                .and_then(|a| choices.iter().position(|c| *c == a))
                .ok_or_else(|| {
                    Some(format!(
                        "the client did not allow it (no answer within {} s, or cancelled)",
                        QUESTION_TIMEOUT.as_secs()
                    ))
                })
        })
    }
}

/// See the module docs.
pub type RpcWorkspace = AskingDisk<ClientAsker>;
