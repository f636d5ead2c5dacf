//! `mock-llm`: the mock LLM provider as a process, for tests that cannot link Rust (editor
//! extensions, shell scripts) and for demos.
//!
//! It prints exactly one line, the base URL, to stdout once the server listens, so a parent
//! process can read it and point a client at it; everything else goes to stderr. It exits when
//! stdin reaches end of file, so a test harness ends it by closing the pipe and no process
//! outlives the harness that started it. Arguments are parsed by hand: four options do not
//! justify a dependency.

use std::ffi::OsString;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use tandem_tests::mock_llm::{MockLlm, MockResponse, RecordedRequest};
use tokio::io::AsyncReadExt;

const USAGE: &str = "\
usage: mock-llm [--port N] [--loop] [--dir DIR]... [FIXTURE]...

Serves the fixtures in order on http://127.0.0.1:PORT, one per request, whatever the
method and path. Prints the base URL as one line on stdout, logs requests on stderr,
and runs until stdin is closed or the process is killed.

  --port N    listen on port N (default: a free port)
  --dir DIR   queue every file in DIR, in name order (dot files and folders skipped)
  --loop      when the queue runs out, start over (for demos)
  -h, --help  show this help";

/// What the command line asks for.
struct Options {
    port: u16,
    cycle: bool,
    fixtures: Vec<PathBuf>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse_args(std::env::args_os().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(err) => {
            eprintln!("mock-llm: {err:#}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("mock-llm: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Parses the arguments; `Ok(None)` means help was asked for.
fn parse_args(args: impl IntoIterator<Item = OsString>) -> anyhow::Result<Option<Options>> {
    let mut options = Options {
        port: 0,
        cycle: false,
        fixtures: Vec::new(),
    };
    let mut args = args.into_iter();
    let mut only_files = false;
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        if only_files || !text.starts_with('-') || text == "-" {
            options.fixtures.push(PathBuf::from(arg));
            continue;
        }
        let (flag, inline) = match text.split_once('=') {
            Some((flag, value)) => (flag.to_owned(), Some(OsString::from(value))),
            None => (text.into_owned(), None),
        };
        let mut value = |flag: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .with_context(|| format!("{flag} needs a value"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--" => only_files = true,
            "--loop" => options.cycle = true,
            "--port" => {
                let port = value("--port")?;
                options.port = port
                    .to_string_lossy()
                    .parse()
                    .with_context(|| format!("--port: {port:?} is not a port number"))?;
            }
            "--dir" => {
                let dir = PathBuf::from(value("--dir")?);
                options.fixtures.extend(files_in(&dir)?);
            }
            _ => bail!("unknown option {flag}"),
        }
    }
    Ok(Some(options))
}

/// The regular files of `dir` in name order, skipping dot files.
fn files_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("--dir: cannot list {}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("--dir: cannot list {}", dir.display()))?;
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        let path = entry.path();
        if !hidden && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        bail!("--dir: {} holds no fixture files", dir.display());
    }
    Ok(files)
}

async fn run(options: Options) -> anyhow::Result<()> {
    // Parse everything before listening, so a broken fixture fails before a URL is printed.
    let responses = options
        .fixtures
        .iter()
        .map(MockResponse::from_file)
        .collect::<Result<Vec<_>, _>>()?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, options.port));
    let mock = MockLlm::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let count = responses.len();
    for response in responses {
        mock.enqueue(response);
    }
    mock.set_cycle(options.cycle);
    eprintln!(
        "mock-llm: serving {count} fixture(s){} on {}",
        if options.cycle { " in a loop" } else { "" },
        mock.base_url()
    );
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{}", mock.base_url()).context("cannot write the URL to stdout")?;
        stdout.flush().context("cannot write the URL to stdout")?;
    }
    let mut log = RequestLog::default();
    tokio::select! {
        () = log.follow(&mock) => {}
        () = stdin_closed() => {}
    }
    // Requests answered just before stdin closed may not have been logged yet.
    log.print_new(&mock.requests());
    eprintln!("mock-llm: stdin closed, exiting");
    mock.shutdown().await;
    Ok(())
}

/// Logs each answered request to stderr, once.
#[derive(Default)]
struct RequestLog {
    printed: usize,
}

impl RequestLog {
    /// Logs requests as they are answered. Never returns.
    async fn follow(&mut self, mock: &MockLlm) {
        loop {
            let wait = mock.wait_for_requests_within(self.printed + 1, Duration::from_secs(3600));
            if let Ok(requests) = wait.await {
                self.print_new(&requests);
            }
        }
    }

    fn print_new(&mut self, requests: &[RecordedRequest]) {
        for request in requests.iter().skip(self.printed) {
            self.printed += 1;
            let answer = request
                .response
                .as_deref()
                .unwrap_or("500, no response queued");
            eprintln!(
                "mock-llm: #{} {} -> {answer}",
                self.printed,
                request.summary()
            );
        }
    }
}

/// Resolves when stdin reaches end of file (or fails), i.e. when the parent lets go.
async fn stdin_closed() {
    let mut stdin = tokio::io::stdin();
    let mut buf = [0_u8; 1024];
    while let Ok(1..) = stdin.read(&mut buf).await {}
}
