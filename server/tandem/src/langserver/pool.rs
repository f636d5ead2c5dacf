//! The servers of a session, each started on first use for its root folder and kept warm: one
//! slot per (entry, root). A start runs in its own task, so a caller that stops waiting (its
//! wait ran out) does not cancel it; a server that exits is started again on the next request,
//! at most [`Limits::restarts`] times; one that could not start is not tried again in the
//! session (each request says why at once rather than waiting again).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tandem_ai::sync::lock;
use tandem_coding::intel::IntelError;
use tokio::sync::watch;
use tokio::time::Instant;

use super::client::Client;
use super::spec::ServerSpec;
use super::Limits;

type Outcome = Option<Result<Arc<Client>, IntelError>>;

enum SlotState {
    New,
    Starting(watch::Receiver<Outcome>),
    Ready(Arc<Client>),
    Failed(IntelError),
}

struct Slot {
    state: SlotState,
    /// Starts so far (the first one included).
    starts: u32,
}

/// The running (and failed) servers of a session.
pub(super) struct Pool {
    path: OsString,
    limits: Limits,
    slots: Mutex<BTreeMap<(usize, PathBuf), Slot>>,
    closed: Arc<AtomicBool>,
}

impl Pool {
    pub(super) fn new(path: OsString, limits: Limits) -> Pool {
        Pool {
            path,
            limits,
            slots: Mutex::new(BTreeMap::new()),
            closed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The running server of entry `index` (`spec`) for `root`, started if need be; waits for
    /// a start at most until `deadline` (`Ok(None)`: still starting then).
    pub(super) async fn get(
        self: &Arc<Self>,
        index: usize,
        spec: &ServerSpec,
        root: PathBuf,
        deadline: Instant,
    ) -> Result<Option<Arc<Client>>, IntelError> {
        let waiting = {
            let mut slots = lock(&self.slots);
            if self.closed.load(Ordering::SeqCst) {
                return Err(IntelError::Failed(
                    "Tandem's language servers were stopped with the session.".to_string(),
                ));
            }
            let key = (index, root);
            let slot = slots.entry(key.clone()).or_insert_with(|| Slot {
                state: SlotState::New,
                starts: 0,
            });
            match &slot.state {
                SlotState::Ready(client) if client.alive() => return Ok(Some(client.clone())),
                SlotState::Failed(error) => return Err(error.clone()),
                SlotState::Starting(rx) => rx.clone(),
                SlotState::New => {
                    slot.starts = 1;
                    self.begin(key, spec, &mut slot.state)
                }
                SlotState::Ready(client) => {
                    // It exited: started again while restarts are left.
                    let exit = client
                        .exit_status()
                        .unwrap_or_else(|| "its connection closed".to_string());
                    if slot.starts > self.limits.restarts {
                        let error = IntelError::Failed(format!(
                            "language server `{}` stopped {} times (the last time: {exit}); it \
                             is not started again in this session.",
                            spec.name, slot.starts
                        ));
                        slot.state = SlotState::Failed(error.clone());
                        return Err(error);
                    }
                    tracing::warn!(
                        target: "tandem::langserver",
                        server = %spec.name,
                        "stopped ({exit}); starting it again"
                    );
                    slot.starts += 1;
                    self.begin(key, spec, &mut slot.state)
                }
            }
        };
        self.wait(waiting, spec, deadline).await
    }

    async fn wait(
        &self,
        mut waiting: watch::Receiver<Outcome>,
        spec: &ServerSpec,
        deadline: Instant,
    ) -> Result<Option<Arc<Client>>, IntelError> {
        let waited = tokio::time::timeout_at(deadline, waiting.wait_for(Option::is_some)).await;
        match waited {
            Ok(Ok(outcome)) => match outcome.as_ref() {
                Some(result) => result.clone().map(Some),
                None => Err(IntelError::Failed(format!(
                    "language server `{}` did not start.",
                    spec.name
                ))),
            },
            Ok(Err(_)) => Err(IntelError::Failed(format!(
                "language server `{}` did not start (its start was abandoned).",
                spec.name
            ))),
            Err(_) => Ok(None),
        }
    }

    /// Starts `spec` in a task that records the outcome in the slot; returns the receiver of
    /// the outcome.
    fn begin(
        self: &Arc<Self>,
        key: (usize, PathBuf),
        spec: &ServerSpec,
        state: &mut SlotState,
    ) -> watch::Receiver<Outcome> {
        let (tx, rx) = watch::channel(None);
        *state = SlotState::Starting(rx.clone());
        let pool = self.clone();
        let spec = spec.clone();
        tokio::spawn(async move {
            let started = Client::start(&spec, &key.1, &pool.path, pool.limits).await;
            let outcome = started.map(Arc::new);
            let closed = {
                let mut slots = lock(&pool.slots);
                let closed = pool.closed.load(Ordering::SeqCst);
                if let Some(slot) = slots.get_mut(&key) {
                    slot.state = match &outcome {
                        Ok(client) => SlotState::Ready(client.clone()),
                        Err(error) => SlotState::Failed(error.clone()),
                    };
                }
                closed
            };
            if let (true, Ok(client)) = (closed, &outcome) {
                client.shutdown().await;
            }
            tx.send_replace(Some(outcome));
        });
        rx
    }

    /// The running servers.
    pub(super) fn running(&self) -> Vec<Arc<Client>> {
        lock(&self.slots)
            .values()
            .filter_map(|slot| match &slot.state {
                SlotState::Ready(client) if client.alive() => Some(client.clone()),
                _ => None,
            })
            .collect()
    }

    /// Stops every server (each within the shutdown limit, all at once); later requests fail.
    pub(super) async fn shutdown(&self) {
        let clients: Vec<Arc<Client>> = {
            let mut slots = lock(&self.slots);
            self.closed.store(true, Ordering::SeqCst);
            std::mem::take(&mut *slots)
                .into_values()
                .filter_map(|slot| match slot.state {
                    SlotState::Ready(client) => Some(client),
                    _ => None,
                })
                .collect()
        };
        futures_util::future::join_all(clients.iter().map(|c| c.shutdown())).await;
    }
}
