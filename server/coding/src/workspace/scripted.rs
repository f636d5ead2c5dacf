//! A test double: disk files under a root, plus open "editor buffers" that win over disk,
//! recorded proposals and permission requests, and scripted answers (default: apply, allow).
//!
//! It behaves like an editor: an applied change to a file with an open buffer updates the
//! buffer, not the disk.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tandem_ai::sync::lock;

use tandem_agent::BoxFuture;

use super::{
    ChangeOutcome, DiskWorkspace, FileChange, FileContent, OpenBuffer, PermissionDecision,
    PermissionPolicy, PermissionRequest, Workspace, WorkspaceError,
};

/// A scriptable workspace for tests.
#[derive(Debug)]
pub struct ScriptedWorkspace {
    disk: DiskWorkspace,
    buffers: Mutex<HashMap<PathBuf, String>>,
    proposals: Mutex<Vec<FileChange>>,
    change_answers: Mutex<VecDeque<ChangeOutcome>>,
    permission_requests: Mutex<Vec<PermissionRequest>>,
    permission_answers: Mutex<VecDeque<PermissionDecision>>,
}

impl ScriptedWorkspace {
    /// A workspace rooted at `root` (a real directory, usually a temp dir).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ScriptedWorkspace {
            disk: DiskWorkspace::new([root.into()], PermissionPolicy::AllowAll),
            buffers: Mutex::new(HashMap::new()),
            proposals: Mutex::new(Vec::new()),
            change_answers: Mutex::new(VecDeque::new()),
            permission_requests: Mutex::new(Vec::new()),
            permission_answers: Mutex::new(VecDeque::new()),
        }
    }

    /// Opens an editor buffer for `path` holding `text` (unsaved).
    pub fn open_buffer(&self, path: impl Into<PathBuf>, text: impl Into<String>) {
        lock(&self.buffers).insert(path.into(), text.into());
    }

    /// The buffer's text, if open.
    pub fn buffer(&self, path: &Path) -> Option<String> {
        lock(&self.buffers).get(path).cloned()
    }

    /// The next proposals get these answers, in order (then: applied).
    pub fn answer_changes(&self, answers: impl IntoIterator<Item = ChangeOutcome>) {
        lock(&self.change_answers).extend(answers);
    }

    /// The next permission requests get these answers, in order (then: allowed once).
    pub fn answer_permissions(&self, answers: impl IntoIterator<Item = PermissionDecision>) {
        lock(&self.permission_answers).extend(answers);
    }

    /// Every proposal so far.
    pub fn proposals(&self) -> Vec<FileChange> {
        lock(&self.proposals).clone()
    }

    /// Every permission request so far.
    pub fn permission_requests(&self) -> Vec<PermissionRequest> {
        lock(&self.permission_requests).clone()
    }
}

impl Workspace for ScriptedWorkspace {
    fn roots(&self) -> &[PathBuf] {
        self.disk.roots()
    }

    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<FileContent, WorkspaceError>> {
        if let Some(text) = self.buffer(path) {
            return Box::pin(std::future::ready(Ok(FileContent::Text(text))));
        }
        self.disk.read(path)
    }

    fn open_buffers(&self) -> Vec<OpenBuffer> {
        lock(&self.buffers)
            .iter()
            .map(|(path, text)| OpenBuffer {
                path: path.clone(),
                text: text.clone(),
            })
            .collect()
    }

    fn propose<'a>(
        &'a self,
        _call: &'a str,
        change: FileChange,
    ) -> BoxFuture<'a, Result<ChangeOutcome, WorkspaceError>> {
        Box::pin(async move {
            lock(&self.proposals).push(change.clone());
            let answer = lock(&self.change_answers)
                .pop_front()
                .unwrap_or(ChangeOutcome::Applied);
            if answer == ChangeOutcome::Applied {
                let in_buffer = {
                    let mut buffers = lock(&self.buffers);
                    match buffers.get_mut(&change.path) {
                        Some(buffer) => {
                            *buffer = change.new_text.clone();
                            true
                        }
                        None => false,
                    }
                };
                if !in_buffer {
                    DiskWorkspace::write_change(&change).await?;
                }
            }
            Ok(answer)
        })
    }

    fn ask_permission<'a>(
        &'a self,
        _call: &'a str,
        request: PermissionRequest,
    ) -> BoxFuture<'a, PermissionDecision> {
        lock(&self.permission_requests).push(request);
        let answer = lock(&self.permission_answers)
            .pop_front()
            .unwrap_or(PermissionDecision::AllowOnce);
        Box::pin(std::future::ready(answer))
    }
}
