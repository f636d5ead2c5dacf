//! The `find` tool: pi's file search by glob, run in-process on the crates fd is made of.
//!
//! pi runs `fd --glob --color=never --hidden [--no-require-git] --max-results N [--full-path]
//! -- PATTERN PATH`, with `--no-require-git` when the path is not inside a git repository (so
//! `.gitignore` files count everywhere) and, when the pattern holds a `/`, `--full-path` with the
//! pattern prefixed by `**/` (unless it starts with `/` or `**/`) because fd then matches the
//! absolute path. Tandem reproduces that with `ignore` (fd's walker, with fd's filters: hidden
//! entries included, `.gitignore`, `.ignore`, `.fdignore`, nested and parent ones) and `globset`
//! (fd's glob compiler, `*` never crossing `/`, smart case: case-insensitive unless the pattern
//! has an upper-case letter). Like fd, it lists directories too, each with a trailing `/`.
//!
//! Deliberate differences from pi: `.git` is never listed, and results come sorted by path (fd's
//! order changes from run to run). When the limit cuts the list, which entries make it depends on
//! the parallel walk, as with fd's `--max-results`.
//!
//! Documents open in the editor that were never saved are listed too, when their folder is
//! walked and the pattern matches them (see `buffers.rs`).
//!
//! The end of the file holds what `grep` shares with `find`: running a walk on the blocking pool
//! under cancellation, path display, and pi's truncation details.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tandem_ai::sync::lock;

use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};
use serde_json::{json, Map, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};

use tokio_util::sync::CancellationToken;

use super::aborted;
use super::args::{parse, FindArgs};
use super::buffers::{in_walk, Buffers};
use super::truncate::{format_size, truncate_head, DEFAULT_MAX_BYTES, NO_LINE_LIMIT};
use crate::env::ToolEnv;
use crate::paths::{Access, ResolvedPath};

#[cfg(test)]
#[path = "find_tests.rs"]
mod tests;

/// Entries listed when the call sets no limit.
const DEFAULT_LIMIT: usize = 1000;

const DESCRIPTION: &str = "Find files and directories whose name matches a glob pattern \
(e.g. '*.ts'); a pattern containing '/' (e.g. 'src/**/*.spec.ts') is matched against the whole \
path. Prints paths relative to the searched directory, directories with a trailing '/'. Honours \
.gitignore and includes hidden files. Matching is case-insensitive unless the pattern has an \
upper-case letter. Stops after 1000 results by default (limit to change) or 50KB of output, \
whichever comes first.";

/// The `find` tool.
pub struct FindTool {
    env: Arc<ToolEnv>,
    schema: Value,
}

impl FindTool {
    /// The tool over `env`.
    pub fn new(env: Arc<ToolEnv>) -> Self {
        FindTool {
            env,
            schema: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"},
                    "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
                    "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"}
                },
                "required": ["pattern"]
            }),
        }
    }
}

impl AgentTool for FindTool {
    fn name(&self) -> &str {
        "find"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, call: ToolInvocation) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            if call.cancel.is_cancelled() {
                return Err(aborted());
            }
            let FindArgs {
                pattern,
                path,
                limit,
            } = parse("find", call.args.clone())?;
            let path = path.filter(|p| !p.is_empty());
            let path = path.as_deref().unwrap_or(".");
            let limit = limit.map_or(DEFAULT_LIMIT, |l| l.ceil().max(1.0) as usize);
            let resolved = self.env.resolve(&call.call_id, path, Access::Read).await?;
            let shown = resolved.absolute.display();
            let buffers = Buffers::of(&self.env);
            match tokio::fs::metadata(&resolved.absolute).await {
                // A folder that only unsaved documents hold so far.
                Err(_)
                    if buffers
                        .new_under(&resolved.absolute)
                        .iter()
                        .any(|p| *p != resolved.absolute) => {}
                Err(_) => return Err(ToolError::new(format!("Path not found: {shown}"))),
                Ok(meta) if !meta.is_dir() => {
                    return Err(ToolError::new(format!("Not a directory: {shown}")))
                }
                Ok(_) => {}
            }
            let mut find = Find::new(&pattern, walk_root(&resolved).await, limit)?;
            find.buffers = buffers;
            run_blocking(&call.cancel, "find", move |stop| find.run(stop)).await
        })
    }
}

/// One compiled search.
struct Find {
    root: PathBuf,
    /// `None` matches everything (fd's empty pattern).
    glob: Option<GlobMatcher>,
    full_path: bool,
    limit: usize,
    /// The open documents: those not on disk yet are listed too.
    buffers: Buffers,
}

/// A listed entry.
struct Entry {
    path: PathBuf,
    is_dir: bool,
}

impl Find {
    /// Compiles the pattern the way pi's fd invocation does.
    fn new(pattern: &str, root: PathBuf, limit: usize) -> Result<Self, ToolError> {
        let full_path = pattern.contains('/');
        let pattern = if full_path
            && !pattern.starts_with('/')
            && !pattern.starts_with("**/")
            && pattern != "**"
        {
            format!("**/{pattern}")
        } else {
            pattern.to_string()
        };
        let glob = if pattern.is_empty() {
            None
        } else {
            let glob = GlobBuilder::new(&pattern)
                .literal_separator(true)
                .case_insensitive(!pattern.chars().any(char::is_uppercase))
                .build()
                .map_err(|e| ToolError::new(e.to_string()))?;
            Some(glob.compile_matcher())
        };
        Ok(Find {
            root,
            glob,
            full_path,
            limit,
            buffers: Buffers::default(),
        })
    }

    /// Walks, filters and formats (blocking). `stop` ends the walk early: set here when the
    /// limit is reached, and by the caller on cancellation.
    fn run(&self, stop: &AtomicBool) -> ToolOutput {
        let mut entries = self.walk(stop);
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        self.render(&entries)
    }

    fn walk(&self, stop: &AtomicBool) -> Vec<Entry> {
        let mut builder = WalkBuilder::new(&self.root);
        builder
            .hidden(false)
            .parents(true)
            .ignore(true)
            .git_ignore(true)
            .git_global(true)
            .git_exclude(true)
            .require_git(inside_git_repo(&self.root))
            .follow_links(false)
            .filter_entry(|entry| entry.file_name() != ".git");
        builder.add_custom_ignore_filename(".fdignore");
        let found = AtomicUsize::new(0);
        let entries = Mutex::new(Vec::new());
        let unsaved = self.buffers.new_under(&self.root);
        let walked = Mutex::new(HashSet::new());
        builder.build_parallel().run(|| {
            let (found, entries, walked) = (&found, &entries, &walked);
            let track_folders = !unsaved.is_empty();
            Box::new(move |entry| {
                if stop.load(Ordering::Relaxed) {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if track_folders && entry.file_type().is_some_and(|k| k.is_dir()) {
                    lock(walked).insert(entry.path().to_path_buf());
                }
                if entry.depth() == 0 || !self.matches(entry.path(), entry.file_name()) {
                    return WalkState::Continue;
                }
                let before = found.fetch_add(1, Ordering::Relaxed);
                if before >= self.limit {
                    stop.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
                let is_dir = entry.file_type().is_some_and(|k| k.is_dir());
                let found_entry = Entry {
                    path: entry.into_path(),
                    is_dir,
                };
                lock(entries).push(found_entry);
                if before + 1 >= self.limit {
                    stop.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
                WalkState::Continue
            })
        });
        let mut entries = entries.into_inner().unwrap_or_else(|p| p.into_inner());
        let walked = walked.into_inner().unwrap_or_else(|p| p.into_inner());
        for path in unsaved {
            if entries.len() >= self.limit {
                break;
            }
            let name = path.file_name().unwrap_or_default();
            if self.matches(&path, name) && in_walk(&path, &self.root, &walked) {
                entries.push(Entry {
                    path,
                    is_dir: false,
                });
            }
        }
        entries
    }

    /// fd's test: the glob against the entry's name, or against its absolute path when the
    /// pattern names directories.
    fn matches(&self, path: &Path, name: &std::ffi::OsStr) -> bool {
        match &self.glob {
            None => true,
            Some(glob) if self.full_path => glob.is_match(path),
            Some(glob) => glob.is_match(Path::new(name)),
        }
    }

    fn render(&self, entries: &[Entry]) -> ToolOutput {
        if entries.is_empty() {
            return ToolOutput::text("No files found matching pattern");
        }
        let lines: Vec<String> = entries
            .iter()
            .map(|e| {
                let relative = posix(e.path.strip_prefix(&self.root).unwrap_or(&e.path));
                if e.is_dir {
                    format!("{relative}/")
                } else {
                    relative
                }
            })
            .collect();
        let truncation = truncate_head(&lines.join("\n"), NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
        let mut text = truncation.content.clone();
        let mut notices = Vec::new();
        let mut details = Map::new();
        if entries.len() >= self.limit {
            notices.push(format!(
                "{} results limit reached. Use limit={} for more, or refine pattern",
                self.limit,
                self.limit.saturating_mul(2)
            ));
            details.insert("resultLimitReached".into(), json!(self.limit));
        }
        if truncation.truncated() {
            notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
            details.insert(
                "truncation".into(),
                truncation.details(NO_LINE_LIMIT, DEFAULT_MAX_BYTES),
            );
        }
        if !notices.is_empty() {
            text.push_str(&format!("\n\n[{}]", notices.join(". ")));
        }
        let output = ToolOutput::text(text);
        if details.is_empty() {
            output
        } else {
            output.with_details(Value::Object(details))
        }
    }
}

/// True when `dir` or one of its ancestors holds a `.git` (pi passes `--no-require-git` to fd
/// otherwise, so that `.gitignore` files count outside repositories too).
fn inside_git_repo(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}

// Shared with `grep`.

/// Runs a search on the blocking pool. Cancellation answers at once; the flag handed to `work`
/// is raised then (or when the caller stops waiting) so the walk ends at its next entry.
pub(super) async fn run_blocking<F>(
    cancel: &CancellationToken,
    tool: &str,
    work: F,
) -> Result<ToolOutput, ToolError>
where
    F: FnOnce(&AtomicBool) -> ToolOutput + Send + 'static,
{
    struct RaiseOnDrop(Arc<AtomicBool>);
    impl Drop for RaiseOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let stop = RaiseOnDrop(Arc::new(AtomicBool::new(false)));
    let flag = stop.0.clone();
    let task = tokio::task::spawn_blocking(move || work(&flag));
    tokio::select! {
        _ = cancel.cancelled() => Err(aborted()),
        joined = task => joined.map_err(|e| ToolError::new(format!("{tool} failed: {e}"))),
    }
}

/// Where to start walking: the real location when the path itself is a symlink (the walker does
/// not follow links, not even at the root), else the path as named.
pub(super) async fn walk_root(resolved: &ResolvedPath) -> PathBuf {
    match tokio::fs::symlink_metadata(&resolved.absolute).await {
        Ok(meta) if meta.file_type().is_symlink() => resolved.real.clone(),
        _ => resolved.absolute.clone(),
    }
}

/// A relative path with `/` between its components.
pub(super) fn posix(relative: &Path) -> String {
    let parts: Vec<_> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect();
    parts.join("/")
}
