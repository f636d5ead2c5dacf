//! Logging: one `tracing` subscriber for every crate, writing to stderr or a file — never to
//! stdout, the protocol channel of all three front doors.
//!
//! The level comes from `--log-level`, else the `TANDEM_LOG` environment variable, else the
//! front door's default (`warn` for the language server, ACP and the demo; `error` for print
//! and JSON modes, whose problems the CLI reports itself in plain words). A bare level
//! (`debug`) applies to Tandem's own crates only, so turning it up never prints what the HTTP
//! and TLS libraries log about requests (headers included); directives (`tandem_ai=trace,
//! reqwest=debug`) are taken as written, for whoever really wants them. rmcp (the MCP client)
//! logs nothing under a bare level: each failure it would log as an error, Tandem already
//! reports as a warning naming the server (`rmcp=debug` as a directive still shows it).
//!
//! The language server also shows its warnings and errors to the user: [`set_mirror`] hands
//! them to a channel the server forwards as `window/logMessage`.

use crate::terminal_text::Sanitizing;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Mutex, OnceLock};

use tandem_ai::sync::lock;
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// The environment variable read when `--log-level` is not given.
pub const LOG_ENV: &str = "TANDEM_LOG";

/// Tandem's own crates: what a bare level applies to.
const OWN_CRATES: [&str; 5] = [
    "tandem",
    "tandem_ai",
    "tandem_agent",
    "tandem_coding",
    "tandem_protocol",
];

/// Where and how much to log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// `--log-level`: a level or `target=level` directives.
    pub level: Option<String>,
    /// `--log-file`: append here instead of writing to stderr.
    pub file: Option<PathBuf>,
}

/// The filter for `spec` (a level, or directives). A bare level applies to Tandem's crates;
/// everything else logs errors only.
pub fn filter(spec: &str) -> Result<Targets, String> {
    let spec = spec.trim();
    if let Ok(level) = LevelFilter::from_str(spec) {
        return Ok(OWN_CRATES
            .iter()
            .fold(Targets::new(), |t, c| t.with_target(*c, level))
            .with_target("rmcp", LevelFilter::OFF)
            .with_default(LevelFilter::ERROR.min(level)));
    }
    let invalid = |why: &str| {
        format!(
            "invalid log level {spec:?} ({why}): use one of off, error, warn, info, debug, \
             trace, or directives such as tandem_ai=debug"
        )
    };
    // A word that is no level is a typo, not a target to log everything of.
    if !spec.contains('=') {
        return Err(invalid("not a level"));
    }
    Targets::from_str(spec).map_err(|e| invalid(&e.to_string()))
}

/// Installs the subscriber: `options`, else `TANDEM_LOG`, else `default_level`. A bad level or
/// a log file that cannot be opened is an error naming it (the caller reports it and goes on
/// with stderr at the default level).
pub fn init(options: &LogOptions, default_level: &str) -> Result<(), String> {
    let from_env = std::env::var(LOG_ENV).ok().filter(|v| !v.trim().is_empty());
    let (spec, problem) = match options.level.as_deref().or(from_env.as_deref()) {
        Some(spec) => match filter(spec) {
            Ok(f) => (f, None),
            Err(e) => (filter(default_level)?, Some(e)),
        },
        None => (filter(default_level)?, None),
    };
    let writer = match &options.file {
        Some(path) => Writer::File(Mutex::new(open_log(path)?)),
        None => Writer::Stderr,
    };
    let writer: &'static Writer = Box::leak(Box::new(writer));
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(move || writer.handle())
        .with_ansi(false)
        .with_target(true);
    tracing_subscriber::registry()
        .with(fmt.with_filter(spec))
        .with(MirrorLayer.with_filter(LevelFilter::WARN))
        .try_init()
        .map_err(|e| format!("logging could not start: {e}"))?;
    match problem {
        Some(p) => Err(p),
        None => Ok(()),
    }
}

fn open_log(path: &Path) -> Result<std::fs::File, String> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open the log file {}: {e}", path.display()))
}

enum Writer {
    Stderr,
    File(Mutex<std::fs::File>),
}

impl Writer {
    fn handle(&'static self) -> Box<dyn Write> {
        match self {
            // Log lines quote file names, server names and error bodies: stand-ins for
            // escapes, whether the log is read on a terminal now or from a file later.
            Writer::Stderr => Box::new(Sanitizing(std::io::stderr())),
            Writer::File(file) => Box::new(Sanitizing(FileHandle(file))),
        }
    }
}

struct FileHandle(&'static Mutex<std::fs::File>);

impl Write for FileHandle {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        lock(self.0).write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        lock(self.0).flush()
    }
}

/// A warning or error for the user, with its level.
pub type Mirrored = (Level, String);

fn mirror_slot() -> &'static Mutex<Option<mpsc::UnboundedSender<Mirrored>>> {
    static SLOT: OnceLock<Mutex<Option<mpsc::UnboundedSender<Mirrored>>>> = OnceLock::new();
    SLOT.get_or_init(|| Mutex::new(None))
}

/// From now on, every warning and error of Tandem's crates also goes to `sink` (the language
/// server forwards them as `window/logMessage`).
pub fn set_mirror(sink: mpsc::UnboundedSender<Mirrored>) {
    *lock(mirror_slot()) = Some(sink);
}

/// Sends warnings and errors of Tandem's crates to the mirror, when one is set.
struct MirrorLayer;

impl<S: Subscriber> Layer<S> for MirrorLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let target = event.metadata().target();
        let ours = OWN_CRATES
            .iter()
            .any(|c| target == *c || target.starts_with(&format!("{c}::")));
        if !ours {
            return;
        }
        let slot = lock(mirror_slot());
        let Some(sink) = slot.as_ref() else {
            return;
        };
        let mut text = MessageText(String::new());
        event.record(&mut text);
        let _ = sink.send((*event.metadata().level(), text.0));
    }
}

/// The event's message followed by its other fields (`key=value`).
struct MessageText(String);

impl Visit for MessageText {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let text = format!("{value:?}");
            self.0.insert_str(0, &text);
        } else {
            self.0.push_str(&format!(" {}={value:?}", field.name()));
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.insert_str(0, value);
        } else {
            self.0.push_str(&format!(" {}={value}", field.name()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_level_is_for_tandems_crates_and_directives_are_as_written() {
        let f = filter("debug").expect("a level");
        assert!(f.would_enable("tandem_ai::http", &Level::DEBUG));
        assert!(f.would_enable("tandem::lsp", &Level::DEBUG));
        assert!(!f.would_enable("reqwest::connect", &Level::DEBUG));
        assert!(f.would_enable("reqwest::connect", &Level::ERROR));
        let f = filter("off").expect("a level");
        assert!(!f.would_enable("tandem", &Level::ERROR));
        assert!(!f.would_enable("hyper", &Level::ERROR));
        let f = filter("tandem_ai=trace,hyper=debug").expect("directives");
        assert!(f.would_enable("hyper::proto", &Level::DEBUG));
        assert!(!f.would_enable("tandem_coding", &Level::ERROR));
        let err = filter("loud").unwrap_err();
        assert!(err.contains("invalid log level \"loud\""), "{err}");
    }
}
