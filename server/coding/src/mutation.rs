//! pi's file mutation queue: changes to one file happen one at a time, in the order they were
//! asked for, while changes to different files proceed in parallel.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tandem_ai::sync::lock;

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// Per-file FIFO locks.
#[derive(Debug, Default)]
pub struct FileMutationQueue {
    locks: Mutex<HashMap<PathBuf, Arc<AsyncMutex<()>>>>,
}

/// Held while a file is being changed.
#[derive(Debug)]
pub struct MutationGuard {
    _guard: OwnedMutexGuard<()>,
}

impl FileMutationQueue {
    /// An empty queue.
    pub fn new() -> Self {
        FileMutationQueue::default()
    }

    /// Waits for the turn to change `path` (tokio's mutex is fair: first come, first served).
    pub async fn lock(&self, path: &Path) -> MutationGuard {
        let lock = {
            let mut locks = lock(&self.locks);
            // Forget locks nobody holds or waits for, so the map does not grow forever.
            locks.retain(|_, l| Arc::strong_count(l) > 1);
            locks.entry(path.to_path_buf()).or_default().clone()
        };
        MutationGuard {
            _guard: lock.lock_owned().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_file_is_changed_in_arrival_order() {
        let queue = Arc::new(FileMutationQueue::new());
        let order = Arc::new(Mutex::new(Vec::new()));
        let first = queue.lock(Path::new("/a")).await;
        let mut waiters = Vec::new();
        for i in 0..5 {
            let (q, o) = (queue.clone(), order.clone());
            waiters.push(Box::pin(async move {
                let _g = q.lock(Path::new("/a")).await;
                o.lock().expect("order").push(i);
            }));
        }
        // Poll each once, in order, so each joins the queue behind the previous one.
        for w in waiters.iter_mut() {
            assert!(futures_util::poll!(w.as_mut()).is_pending());
        }
        // Another file is not blocked.
        drop(queue.lock(Path::new("/b")).await);
        drop(first);
        futures_util::future::join_all(waiters).await;
        assert_eq!(*order.lock().expect("order"), vec![0, 1, 2, 3, 4]);
    }
}
