//! Which language servers a session may start: Tandem's built-in entries (each used only when
//! its program is found), with settings.json's `languageServers` over them by name; and, for a
//! file, which entries handle it and at which root folder.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use serde_json::Value;
use tandem_coding::settings::LanguageServerSettings;

/// One language server Tandem may start.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// The entry's name (`ruff`, `basedpyright`, a settings key): in messages and logs.
    pub name: String,
    /// The program as configured.
    pub command: String,
    /// The program found on PATH (or the path given); `None` when it was not found.
    pub program: Option<PathBuf>,
    /// Its arguments.
    pub args: Vec<String>,
    /// File extensions it handles (lower case, without the dot).
    pub file_types: Vec<String>,
    /// Files or folders marking its root folder.
    pub root_markers: Vec<String>,
    /// Environment variables added to Tandem's own.
    pub env: Vec<(String, String)>,
    /// `initializationOptions`.
    pub initialization_options: Option<Value>,
    /// `workspace/configuration` answers.
    pub settings: Option<Value>,
    /// True for a settings entry (a missing program is then the user's to fix, and said so).
    pub configured: bool,
}

impl ServerSpec {
    /// Whether it handles files with extension `ext` (lower case).
    pub fn handles(&self, ext: &str) -> bool {
        self.file_types.iter().any(|t| t == ext)
    }

    /// The command line, for messages.
    pub fn command_line(&self) -> String {
        std::iter::once(self.command.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A built-in entry: name, program, arguments, file types, root markers.
struct BuiltIn {
    name: &'static str,
    command: &'static str,
    args: &'static [&'static str],
    file_types: &'static [&'static str],
    root_markers: &'static [&'static str],
}

/// Tandem's defaults, in the order their answers are merged (a type checker before a linter:
/// a rename goes to the first server that offers one).
const BUILT_INS: &[BuiltIn] = &[
    BuiltIn {
        name: "basedpyright",
        command: "basedpyright-langserver",
        args: &["--stdio"],
        file_types: &["py", "pyi"],
        root_markers: PYTHON_ROOTS,
    },
    // Used only where basedpyright is not (the same server, upstream).
    BuiltIn {
        name: "pyright",
        command: "pyright-langserver",
        args: &["--stdio"],
        file_types: &["py", "pyi"],
        root_markers: PYTHON_ROOTS,
    },
    BuiltIn {
        name: "ruff",
        command: "ruff",
        args: &["server"],
        file_types: &["py", "pyi"],
        root_markers: &[
            "pyproject.toml",
            "ruff.toml",
            ".ruff.toml",
            "setup.py",
            ".git",
        ],
    },
    BuiltIn {
        name: "typescript",
        command: "typescript-language-server",
        args: &["--stdio"],
        file_types: &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
        root_markers: &["tsconfig.json", "jsconfig.json", "package.json", ".git"],
    },
    BuiltIn {
        name: "rust-analyzer",
        command: "rust-analyzer",
        args: &[],
        file_types: &["rs"],
        root_markers: &["Cargo.toml", "rust-project.json"],
    },
    BuiltIn {
        name: "clangd",
        command: "clangd",
        args: &[],
        file_types: &["c", "h", "cc", "cpp", "cxx", "hh", "hpp", "hxx"],
        root_markers: &[
            "compile_commands.json",
            "compile_flags.txt",
            ".clangd",
            ".git",
        ],
    },
    BuiltIn {
        name: "gopls",
        command: "gopls",
        args: &[],
        file_types: &["go"],
        root_markers: &["go.work", "go.mod", ".git"],
    },
];

const PYTHON_ROOTS: &[&str] = &[
    "pyproject.toml",
    "pyrightconfig.json",
    "setup.py",
    "setup.cfg",
    ".git",
];

/// The servers of a session, and what was left out.
#[derive(Debug, Clone, Default)]
pub struct ServerTable {
    /// The entries that may be started, in merge order.
    pub specs: Vec<ServerSpec>,
    /// Built-in entries whose program was not found, for hints ("install ruff").
    pub missing: Vec<ServerSpec>,
    /// Settings entries that cannot be used, one line each.
    pub problems: Vec<String>,
}

impl ServerTable {
    /// The built-in entries whose program is found on `path`, with `configured` (settings.json's
    /// `languageServers`, already merged) over them by name: an entry replaces the built-in of
    /// its name (taking its file types and root markers, or its command, when left out); `null`
    /// or `enabled: false` removes it.
    pub fn new(
        configured: Option<&BTreeMap<String, Option<LanguageServerSettings>>>,
        path: &OsStr,
    ) -> ServerTable {
        let mut table = ServerTable::default();
        let empty = BTreeMap::new();
        let configured = configured.unwrap_or(&empty);
        let mut specs: Vec<ServerSpec> = BUILT_INS.iter().map(built_in).collect();
        // Settings entries that are new come after the built-ins, in name order.
        for (name, entry) in configured {
            let index = specs.iter().position(|s| &s.name == name);
            let Some(entry) = entry.as_ref().filter(|e| e.enabled()) else {
                if let Some(index) = index {
                    specs.remove(index);
                }
                continue;
            };
            let base = index.map(|i| specs[i].clone());
            match from_settings(name, entry, base.as_ref()) {
                Ok(spec) => match index {
                    Some(i) => specs[i] = spec,
                    None => specs.push(spec),
                },
                Err(problem) => {
                    table.problems.push(problem);
                    if let Some(i) = index {
                        specs.remove(i);
                    }
                }
            }
        }
        for mut spec in specs {
            spec.program = find_program(&spec.command, path);
            if spec.configured || spec.program.is_some() {
                table.specs.push(spec);
            } else {
                table.missing.push(spec);
            }
        }
        // pyright stands in for basedpyright only.
        if table.specs.iter().any(|s| s.name == "basedpyright") {
            table.specs.retain(|s| s.name != "pyright" || s.configured);
        }
        table
    }

    /// The entries handling `ext`.
    pub fn for_type(&self, ext: &str) -> Vec<usize> {
        (0..self.specs.len())
            .filter(|&i| self.specs[i].handles(ext))
            .collect()
    }

    /// What to do about a file of type `ext` no entry handles.
    pub fn hint(&self, ext: &str) -> String {
        let missing: Vec<&str> = self
            .missing
            .iter()
            .filter(|s| s.handles(ext))
            .map(|s| s.command.as_str())
            .collect();
        if missing.is_empty() {
            format!(
                "add a server for .{ext} files under \"languageServers\" in settings.json \
                 (\"command\", \"args\", \"fileTypes\": [\"{ext}\"])"
            )
        } else {
            format!(
                "install {} (not found on PATH), or configure a server under \"languageServers\" \
                 in settings.json",
                missing.join(" or ")
            )
        }
    }
}

fn built_in(b: &BuiltIn) -> ServerSpec {
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
    ServerSpec {
        name: b.name.to_string(),
        command: b.command.to_string(),
        program: None,
        args: strings(b.args),
        file_types: strings(b.file_types),
        root_markers: strings(b.root_markers),
        env: Vec::new(),
        initialization_options: None,
        settings: None,
        configured: false,
    }
}

fn from_settings(
    name: &str,
    entry: &LanguageServerSettings,
    base: Option<&ServerSpec>,
) -> Result<ServerSpec, String> {
    let command = match (entry.command.trim(), base) {
        ("", Some(base)) => base.command.clone(),
        ("", None) => {
            return Err(format!(
                "languageServers.{name}: \"command\" is missing (and no built-in server has this \
                 name): name the program that starts the server"
            ))
        }
        (command, _) => command.to_string(),
    };
    // Left out, a built-in's arguments (another path to the same program is the usual reason
    // to name a command).
    let args = match (&entry.args, base) {
        (Some(args), _) => args.clone(),
        (None, Some(base)) => base.args.clone(),
        (None, None) => Vec::new(),
    };
    let lower = |v: &[String]| {
        v.iter()
            .map(|t| t.trim_start_matches('.').to_lowercase())
            .collect::<Vec<_>>()
    };
    let file_types = match (entry.file_types.is_empty(), base) {
        (true, Some(base)) => base.file_types.clone(),
        (true, None) => {
            return Err(format!(
                "languageServers.{name}: \"fileTypes\" is missing: list the file extensions the \
                 server handles (\"py\", \"ts\")"
            ))
        }
        (false, _) => lower(&entry.file_types),
    };
    let root_markers = match (entry.root_markers.is_empty(), base) {
        (true, Some(base)) => base.root_markers.clone(),
        _ => entry.root_markers.clone(),
    };
    Ok(ServerSpec {
        name: name.to_string(),
        command,
        program: None,
        args,
        file_types,
        root_markers,
        env: entry
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        initialization_options: entry.initialization_options.clone(),
        settings: entry.settings.clone(),
        configured: true,
    })
}

/// `command` as found on `path` (a command with a `/` as given, when it is a file). A rustup
/// proxy (`~/.cargo/bin/rust-analyzer` is installed by rustup whether or not the component
/// is) counts only when some toolchain has the program.
pub fn find_program(command: &str, path: &OsStr) -> Option<PathBuf> {
    let found = if command.contains('/') {
        let p = PathBuf::from(command);
        p.is_file().then_some(p)
    } else {
        std::env::split_paths(path)
            .map(|dir| dir.join(command))
            .find(|p| is_executable(p))
    }?;
    let real = std::fs::canonicalize(&found).unwrap_or_else(|_| found.clone());
    if real.file_name() == Some(OsStr::new("rustup")) && !rustup_has(command) {
        return None;
    }
    Some(found)
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

fn rustup_has(command: &str) -> bool {
    let home = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")));
    let Some(toolchains) = home.map(|h| h.join("toolchains")) else {
        return false;
    };
    let Ok(entries) = std::fs::read_dir(toolchains) else {
        return false;
    };
    entries
        .filter_map(Result::ok)
        .any(|e| e.path().join("bin").join(command).is_file())
}

/// The search path servers are found on and started with: `PATH`.
pub fn search_path() -> OsString {
    std::env::var_os("PATH").unwrap_or_default()
}

/// A file's type: its extension in lower case.
pub fn file_type(path: &Path) -> Option<String> {
    path.extension()
        .and_then(OsStr::to_str)
        .map(str::to_lowercase)
}

/// The folder a server for `file` runs in: the nearest ancestor of `file` inside `workspace`
/// holding one of `markers`, else `workspace`. `None` for a file outside `workspace`.
pub fn root_for(file: &Path, workspace: &Path, markers: &[String]) -> Option<PathBuf> {
    if !file.starts_with(workspace) {
        return None;
    }
    let mut dir = file.parent();
    while let Some(d) = dir {
        if !d.starts_with(workspace) {
            break;
        }
        if markers.iter().any(|m| d.join(m).exists()) {
            return Some(d.to_path_buf());
        }
        if d == workspace {
            break;
        }
        dir = d.parent();
    }
    Some(workspace.to_path_buf())
}

/// The LSP language id of a file type.
pub fn language_id(ext: &str) -> &str {
    match ext {
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "rs" => "rust",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hh" | "hpp" | "hxx" => "cpp",
        "go" => "go",
        other => other,
    }
}
