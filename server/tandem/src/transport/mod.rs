//! The stdio transports of `tandem lsp` and `tandem acp`, made to survive bad input.
//!
//! The protocol crates read stdin themselves and do not survive it: tower-lsp-server's reader
//! stops for good after the first frame it cannot decode (the server then ends, status 0, with
//! nothing said), and the ACP crate ends the connection on a line that is not UTF-8; both
//! buffer a huge `Content-Length` or an endless line without bound. So Tandem reads stdin
//! itself, with a bound on every message ([`MessageLimit`]), answers what is malformed with the
//! error JSON-RPC 2.0 asks for, logs it (a warning: never silently), and hands the crates only
//! what they can read. The crates keep everything else: dispatch, cancellation, their own
//! output.
//!
//! - [`frames`]: LSP's `Content-Length` frames, read robustly; [`envelope`]: the JSON-RPC
//!   checks and the error to send; [`lsp`]: between stdio and tower-lsp-server.
//! - [`lines`]: ACP's newline-delimited messages, read with a bound; [`acp`]: between stdio and
//!   the ACP crate.
//!
//! Why wrap tower-lsp-server rather than move to async-lsp: only the transport failed. The
//! handlers, the client seam and the tests are written against tower-lsp-server, which takes
//! any `AsyncRead`/`AsyncWrite` pair, so a layer in front of it fixes the reading without
//! touching them. async-lsp would have meant rewriting the server for a frame reader of its own
//! that we would still have had to bound and check the same way.

pub mod acp;
pub mod envelope;
pub mod frames;
pub mod lines;
pub mod lsp;

/// The environment variable that sets the message size limit when the command line does not.
pub const LIMIT_ENV: &str = "TANDEM_MAX_MESSAGE_BYTES";

/// The largest message either transport reads; larger ones are refused and skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageLimit(pub u64);

impl MessageLimit {
    /// 64 MiB: far above any document an editor sends (a 10 MB file is 10 MB of JSON, give or
    /// take its escapes).
    pub const DEFAULT: MessageLimit = MessageLimit(64 * 1024 * 1024);

    /// The limit from `--max-message-bytes` (`flag`), else from [`LIMIT_ENV`], else the
    /// default; an error naming the bad value.
    pub fn resolve(flag: Option<u64>) -> Result<MessageLimit, String> {
        if let Some(bytes) = flag {
            return Self::checked(bytes, "--max-message-bytes");
        }
        match std::env::var(LIMIT_ENV) {
            Ok(text) => {
                let bytes = text.trim().parse::<u64>().map_err(|_| {
                    format!(
                        "{LIMIT_ENV}={text:?} is not a number of bytes: set it to a whole \
                         number such as 67108864, or unset it for the default (64 MiB)"
                    )
                })?;
                Self::checked(bytes, LIMIT_ENV)
            }
            Err(_) => Ok(Self::DEFAULT),
        }
    }

    fn checked(bytes: u64, what: &str) -> Result<MessageLimit, String> {
        // A limit below a few KiB would refuse `initialize` itself.
        const MIN: u64 = 4096;
        if bytes < MIN {
            return Err(format!(
                "{what} {bytes} is too small: the limit must be at least {MIN} bytes"
            ));
        }
        Ok(MessageLimit(bytes))
    }

    /// The limit as a length in memory.
    pub fn bytes(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

impl Default for MessageLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
