//! The `grep` tool: pi's content search, run in-process on the crates ripgrep is made of.
//!
//! pi runs `rg --json --line-number --color=never --hidden [--ignore-case] [--fixed-strings]
//! [--glob G] PATTERN PATH` and formats rg's match events itself. Tandem ships no binary: `ignore`
//! walks the tree with rg's default filters (hidden files included; `.gitignore` honoured inside a
//! git repository, nested and parent ones alike; `.ignore` and `.rgignore` everywhere; the glob as
//! an rg override), `grep-regex` compiles the pattern with rg's settings, and `grep-searcher` reads
//! each file with a reused buffer and rg's binary detection (files met in the walk stop at the
//! first NUL byte; a file named explicitly is searched anyway). The walk is parallel, like rg's,
//! runs on the blocking pool, and stops as soon as `limit` matching lines are found or the call is
//! cancelled.
//!
//! The output is pi's: one block per matching line, `path:N: text` for the match and
//! `path-N- text` for context lines, blocks simply concatenated (overlapping windows repeat
//! lines, as in pi), then pi's notices. Deliberate differences from pi, each because rg's
//! behaviour there is an accident rather than a feature: `.git` is never searched (rg `--hidden`
//! would), files come sorted by path (rg's order changes from run to run), and an unreadable
//! file is skipped instead of failing the whole call.
//!
//! Open editor documents are searched as the user sees them (see `buffers.rs`): a file that is
//! open is searched in its buffer's text, with the buffer's line numbers, and a document not
//! saved yet is searched when its folder is, and the glob lets it through.

use std::borrow::Cow;
use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tandem_ai::sync::lock;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::{WalkBuilder, WalkState};
use serde_json::{json, Map, Value};
use tandem_agent::{AgentTool, BoxFuture, ToolError, ToolInvocation, ToolOutput};

use super::aborted;
use super::args::{parse, GrepArgs};
use super::buffers::{in_walk, Buffers};
use super::find::{posix, run_blocking, walk_root};
use super::truncate::{
    format_size, truncate_head, truncate_line, DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH,
    NO_LINE_LIMIT,
};
use crate::env::ToolEnv;
use crate::paths::Access;

#[cfg(test)]
#[path = "grep_tests.rs"]
mod tests;

/// Matching lines reported when the call sets no limit.
const DEFAULT_LIMIT: usize = 100;
const DESCRIPTION: &str = "Search the contents of files for a regular expression (or, with \
literal=true, a plain string). Prints each matching line as path:line: text, with paths relative \
to the searched directory, and optional context lines around it. Honours .gitignore; hidden \
files are searched, binary files skipped. Stops after 100 matching lines by default (limit to \
change) or 50KB of output, whichever comes first; lines longer than 500 characters are cut.";

/// The `grep` tool.
pub struct GrepTool {
    env: Arc<ToolEnv>,
    schema: Value,
}

impl GrepTool {
    /// The tool over `env`.
    pub fn new(env: Arc<ToolEnv>) -> Self {
        GrepTool {
            env,
            schema: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
                    "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
                    "glob": {"type": "string", "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"},
                    "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
                    "literal": {"type": "boolean", "description": "Treat pattern as literal string instead of regex (default: false)"},
                    "context": {"type": "number", "description": "Number of lines to show before and after each match (default: 0)"},
                    "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"}
                },
                "required": ["pattern"]
            }),
        }
    }
}

impl AgentTool for GrepTool {
    fn name(&self) -> &str {
        "grep"
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
            let args = Grep::parse(call.args.clone())?;
            let resolved = self
                .env
                .resolve(&call.call_id, &args.path, Access::Read)
                .await?;
            let buffers = Arc::new(Buffers::of(&self.env));
            let (root, root_is_dir) = match tokio::fs::metadata(&resolved.absolute).await {
                Ok(meta) => (walk_root(&resolved).await, meta.is_dir()),
                // A document open in the editor but never saved, or a folder holding some.
                Err(_) if buffers.text(&resolved.absolute).is_some() => {
                    (resolved.absolute.clone(), false)
                }
                Err(_) if !buffers.new_under(&resolved.absolute).is_empty() => {
                    (resolved.absolute.clone(), true)
                }
                Err(_) => {
                    return Err(ToolError::new(format!(
                        "Path not found: {}",
                        resolved.absolute.display()
                    )))
                }
            };
            let search = Search::new(&args, root, root_is_dir, &self.env.cwd, buffers)?;
            run_blocking(&call.cancel, "grep", move |stop| search.run(stop)).await
        })
    }
}

/// The arguments, with pi's defaults.
struct Grep {
    pattern: String,
    path: String,
    glob: Option<String>,
    ignore_case: bool,
    literal: bool,
    context: usize,
    limit: usize,
}

impl Grep {
    fn parse(args: Value) -> Result<Self, ToolError> {
        let args: GrepArgs = parse("grep", args)?;
        Ok(Grep {
            pattern: args.pattern,
            path: args
                .path
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| ".".to_string()),
            glob: args.glob.filter(|g| !g.is_empty()),
            ignore_case: args.ignore_case.unwrap_or(false),
            literal: args.literal.unwrap_or(false),
            context: args.context.filter(|c| *c > 0.0).map_or(0, |c| c as usize),
            limit: args
                .limit
                .map_or(DEFAULT_LIMIT, |l| l.ceil().max(1.0) as usize),
        })
    }
}

/// One compiled search.
struct Search {
    root: PathBuf,
    root_is_dir: bool,
    matcher: RegexMatcher,
    overrides: Option<Override>,
    context: usize,
    limit: usize,
    /// The open documents, searched instead of the disk.
    buffers: Arc<Buffers>,
}

/// A matching line: its 1-based number and (without context) its text.
struct Hit {
    line: u64,
    text: String,
}

/// The matching lines of one file, in file order.
struct FileHits {
    path: PathBuf,
    hits: Vec<Hit>,
}

impl Search {
    /// Compiles the pattern with rg's settings and the glob as rg's override, rooted like rg's
    /// at the working directory.
    fn new(
        args: &Grep,
        root: PathBuf,
        root_is_dir: bool,
        cwd: &Path,
        buffers: Arc<Buffers>,
    ) -> Result<Self, ToolError> {
        let matcher = RegexMatcherBuilder::new()
            .multi_line(true)
            .unicode(true)
            .octal(false)
            .case_insensitive(args.ignore_case)
            .fixed_strings(args.literal)
            .line_terminator(Some(b'\n'))
            .dot_matches_new_line(false)
            .ban_byte(Some(b'\0'))
            .build(&args.pattern)
            .map_err(|e| {
                ToolError::new(format!(
                    "{e}\nSet literal=true to search for the pattern as plain text."
                ))
            })?;
        let overrides = match &args.glob {
            Some(glob) => {
                let mut builder = OverrideBuilder::new(cwd);
                builder
                    .add(glob)
                    .map_err(|e| ToolError::new(e.to_string()))?;
                Some(builder.build().map_err(|e| ToolError::new(e.to_string()))?)
            }
            None => None,
        };
        Ok(Search {
            root,
            root_is_dir,
            matcher,
            overrides,
            context: args.context,
            limit: args.limit,
            buffers,
        })
    }

    /// Searches and formats (blocking). `stop` ends the walk early: set here when the limit is
    /// reached, and by the caller on cancellation.
    fn run(&self, stop: &AtomicBool) -> ToolOutput {
        let mut files = self.walk(stop);
        files.sort_by(|a, b| a.path.cmp(&b.path));
        self.render(&files)
    }

    fn walk(&self, stop: &AtomicBool) -> Vec<FileHits> {
        let mut builder = WalkBuilder::new(&self.root);
        builder
            .hidden(false)
            .parents(true)
            .ignore(true)
            .git_ignore(true)
            .git_global(true)
            .git_exclude(true)
            .require_git(true)
            .follow_links(false)
            .filter_entry(|entry| entry.file_name() != ".git");
        builder.add_custom_ignore_filename(".rgignore");
        if let Some(overrides) = &self.overrides {
            builder.overrides(overrides.clone());
        }
        let found = AtomicUsize::new(0);
        let files = Mutex::new(Vec::new());
        // Documents not on disk yet join the walk when their folder is walked.
        let unsaved = self.buffers.new_under(&self.root);
        let walked = Mutex::new(HashSet::new());
        builder.build_parallel().run(|| {
            let (found, files, walked) = (&found, &files, &walked);
            let track_folders = !unsaved.is_empty();
            let mut searcher = SearcherBuilder::new().line_number(true).build();
            let matcher = self.matcher.clone();
            Box::new(move |entry| {
                if stop.load(Ordering::Relaxed) {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                let kind = entry.file_type();
                if track_folders && kind.is_some_and(|k| k.is_dir()) {
                    lock(walked).insert(entry.path().to_path_buf());
                }
                let explicit = entry.depth() == 0;
                let searchable = kind.is_some_and(|k| k.is_file())
                    || (explicit && !kind.is_some_and(|k| k.is_dir()));
                if !searchable {
                    return WalkState::Continue;
                }
                // A file named explicitly is searched whole, NUL bytes and all, as pi shows it.
                searcher.set_binary_detection(if explicit {
                    BinaryDetection::none()
                } else {
                    BinaryDetection::quit(b'\0')
                });
                let mut sink = Collect {
                    limit: self.limit,
                    found,
                    stop,
                    keep_text: self.context == 0,
                    hits: Vec::new(),
                };
                // An unreadable file is skipped, like one without matches.
                let _ = match self.buffers.text(entry.path()) {
                    Some(text) => searcher.search_slice(&matcher, text.as_bytes(), &mut sink),
                    None => searcher.search_path(&matcher, entry.path(), &mut sink),
                };
                if !sink.hits.is_empty() {
                    let hits = FileHits {
                        path: entry.into_path(),
                        hits: sink.hits,
                    };
                    lock(files).push(hits);
                }
                WalkState::Continue
            })
        });
        let mut files = files.into_inner().unwrap_or_else(|p| p.into_inner());
        let walked = walked.into_inner().unwrap_or_else(|p| p.into_inner());
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::none())
            .build();
        for path in unsaved {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let explicit = path == self.root;
            let filtered_out = self
                .overrides
                .as_ref()
                .is_some_and(|o| o.matched(&path, false).is_ignore());
            if !explicit && (filtered_out || !in_walk(&path, &self.root, &walked)) {
                continue;
            }
            let Some(text) = self.buffers.text(&path) else {
                continue;
            };
            let mut sink = Collect {
                limit: self.limit,
                found: &found,
                stop,
                keep_text: self.context == 0,
                hits: Vec::new(),
            };
            let _ = searcher.search_slice(&self.matcher, text.as_bytes(), &mut sink);
            if !sink.hits.is_empty() {
                files.push(FileHits {
                    path,
                    hits: sink.hits,
                });
            }
        }
        files
    }

    fn render(&self, files: &[FileHits]) -> ToolOutput {
        let total: usize = files.iter().map(|f| f.hits.len()).sum();
        if total == 0 {
            return ToolOutput::text("No matches found");
        }
        let mut out = Lines::default();
        for file in files {
            let name = display_name(&self.root, self.root_is_dir, &file.path);
            if self.context == 0 {
                for hit in &file.hits {
                    out.push(&name, hit.line, true, &hit.text);
                }
                continue;
            }
            let bytes;
            let content = match self.buffers.text(&file.path) {
                Some(text) => Cow::Borrowed(text),
                None => {
                    let Ok(read) = std::fs::read(&file.path) else {
                        for hit in &file.hits {
                            out.lines
                                .push(format!("{name}:{}: (unable to read file)", hit.line));
                        }
                        continue;
                    };
                    bytes = read;
                    String::from_utf8_lossy(&bytes)
                }
            };
            // pi splits on '\n', so a final newline adds an empty last line.
            let lines: Vec<&str> = content.split('\n').collect();
            for hit in &file.hits {
                let start = hit.line.saturating_sub(self.context as u64).max(1);
                let end = hit
                    .line
                    .saturating_add(self.context as u64)
                    .min(lines.len() as u64);
                for number in start..=end {
                    let text = lines[(number - 1) as usize].replace('\r', "");
                    out.push(&name, number, number == hit.line, &text);
                }
            }
        }
        let truncation = truncate_head(&out.lines.join("\n"), NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
        let mut text = truncation.content.clone();
        let mut notices = Vec::new();
        let mut details = Map::new();
        if total >= self.limit {
            notices.push(format!(
                "{} matches limit reached. Use limit={} for more, or refine pattern",
                self.limit,
                self.limit.saturating_mul(2)
            ));
            details.insert("matchLimitReached".into(), json!(self.limit));
        }
        if truncation.truncated() {
            notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
            details.insert(
                "truncation".into(),
                truncation.details(NO_LINE_LIMIT, DEFAULT_MAX_BYTES),
            );
        }
        if out.cut {
            notices.push(format!(
                "Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
            ));
            details.insert("linesTruncated".into(), json!(true));
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

/// Output lines, and whether any was cut to the line length limit.
#[derive(Default)]
struct Lines {
    lines: Vec<String>,
    cut: bool,
}

impl Lines {
    fn push(&mut self, name: &str, number: u64, is_match: bool, text: &str) {
        let (text, cut) = truncate_line(text, GREP_MAX_LINE_LENGTH);
        self.cut |= cut;
        let sep = if is_match { ':' } else { '-' };
        self.lines.push(format!("{name}{sep}{number}{sep} {text}"));
    }
}

/// The path as pi shows it: relative to the searched directory with `/` separators, or the file
/// name when a single file was searched.
fn display_name(root: &Path, root_is_dir: bool, path: &Path) -> String {
    if root_is_dir {
        if let Ok(relative) = path.strip_prefix(root) {
            if !relative.as_os_str().is_empty() {
                return posix(relative);
            }
        }
    }
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string_lossy().into_owned())
}

/// Collects a file's matching lines while counting them against the shared limit.
struct Collect<'a> {
    limit: usize,
    found: &'a AtomicUsize,
    stop: &'a AtomicBool,
    keep_text: bool,
    hits: Vec<Hit>,
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        if self.stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let before = self.found.fetch_add(1, Ordering::Relaxed);
        if before >= self.limit {
            self.stop.store(true, Ordering::Relaxed);
            return Ok(false);
        }
        let text = if self.keep_text {
            let line = found.bytes();
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            String::from_utf8_lossy(line).replace('\r', "")
        } else {
            String::new()
        };
        self.hits.push(Hit {
            line: found.line_number().unwrap_or(0),
            text,
        });
        if before + 1 >= self.limit {
            self.stop.store(true, Ordering::Relaxed);
            return Ok(false);
        }
        Ok(true)
    }
}
