//! The append-only writer of a session file.
//!
//! A new file is created with `create_new` (it can never clobber an existing one) and its first
//! content is written before anything else can be; each later entry is one `write_all` of one
//! whole line plus `\n` on a file opened for appending. If the file does not end with `\n` (a
//! torn last line from a crash), the next entry starts with a `\n`, so the torn bytes stay
//! untouched and the new entry is a whole line of its own. There is no fsync (as in pi): a
//! crash may lose the newest entries, and a torn tail is handled as above, but earlier lines are
//! never at risk. Blocking I/O.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::SessionError;
use super::lock::lock;

/// Appends whole lines to one session file, as its only writer (see `lock.rs`).
#[derive(Debug)]
pub struct SessionWriter {
    path: PathBuf,
    file: Option<File>,
    needs_newline: bool,
    /// Where the file ended after this writer's last write (or when it was read): a different
    /// length means someone else wrote to it.
    end: u64,
}

impl SessionWriter {
    /// Creates the file at `path` (and its folder) with `lines`, each followed by `\n`, and
    /// locks it. Fails if the file exists. If the write fails the half-written file is removed,
    /// so a retry starts clean.
    pub fn create(path: &Path, lines: &[&str]) -> Result<SessionWriter, SessionError> {
        Self::create_with(path, |out| {
            for line in lines {
                out.write_all(line.as_bytes()).map_err(io)?;
                out.write_all(b"\n").map_err(io)?;
            }
            Ok(())
        })
    }

    /// Like [`SessionWriter::create`] with the content written by `write` (whole lines, each
    /// ending with `\n`), through a buffer: a copy of a large session is streamed, never held
    /// whole in memory. `write` reports its I/O errors with [`io`].
    pub fn create_with(
        path: &Path,
        write: impl FnOnce(&mut dyn Write) -> Result<(), SessionError>,
    ) -> Result<SessionWriter, SessionError> {
        let write_err = |source| SessionError::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(write_err)?;
        }
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(path)
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::AlreadyExists => SessionError::AlreadyExists {
                    path: path.to_path_buf(),
                },
                _ => write_err(source),
            })?;
        // A file this process just created: nobody else can hold it yet.
        let _ = lock(&file);
        let mut out = Counting {
            inner: std::io::BufWriter::with_capacity(1 << 20, file),
            written: 0,
        };
        let written = write(&mut out).and_then(|()| out.flush().map_err(write_err));
        let Counting {
            inner,
            written: end,
        } = out;
        let file = match (written, inner.into_inner()) {
            (Ok(()), Ok(file)) => file,
            (result, inner) => {
                drop(inner);
                let _ = std::fs::remove_file(path);
                return Err(match result {
                    Err(SessionError::Write { source, .. }) => write_err(source),
                    Err(e) => e,
                    Ok(()) => write_err(std::io::Error::other("the buffered write failed")),
                });
            }
        };
        Ok(SessionWriter {
            path: path.to_path_buf(),
            file: Some(file),
            needs_newline: false,
            end,
        })
    }

    /// The writer of an existing file that `file` (opened for appending) holds locked; `len`
    /// and `ends_with_newline` describe the file as it was read after locking.
    pub(crate) fn locked(path: &Path, file: File, len: u64, ends_with_newline: bool) -> Self {
        SessionWriter {
            path: path.to_path_buf(),
            file: Some(file),
            needs_newline: !ends_with_newline,
            end: len,
        }
    }

    /// A writer for an existing file that could not be opened for writing now, `len` bytes
    /// long when read; `ends_with_newline` says whether its last line is whole. The file is
    /// opened at the first append (which reports why it cannot be written, if it still cannot).
    pub fn existing(path: &Path, len: u64, ends_with_newline: bool) -> SessionWriter {
        SessionWriter {
            path: path.to_path_buf(),
            file: None,
            needs_newline: !ends_with_newline,
            end: len,
        }
    }

    /// The file written to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Checks that the file still ends where this writer last left it: `Err` with
    /// [`SessionError::ChangedByAnother`] when another program wrote to it (or truncated it)
    /// since. A file that cannot be inspected is left to the append to report.
    pub fn check_unchanged(&mut self) -> Result<(), SessionError> {
        let len = match &self.file {
            Some(file) => file.metadata(),
            None => std::fs::metadata(&self.path),
        };
        match len {
            Ok(meta) if meta.len() != self.end => Err(SessionError::ChangedByAnother {
                path: self.path.clone(),
                expected: self.end,
                found: meta.len(),
            }),
            _ => Ok(()),
        }
    }

    /// Where the file ends after this writer's last write.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Appends `line` and `\n` in one write (preceded by `\n` after a torn last line); returns
    /// the offset of the line's first byte.
    pub fn append(&mut self, line: &str) -> Result<u64, SessionError> {
        let file = match &mut self.file {
            Some(file) => file,
            None => {
                let file = OpenOptions::new()
                    .append(true)
                    .open(&self.path)
                    .map_err(|source| SessionError::Write {
                        path: self.path.clone(),
                        source,
                    })?;
                self.file.insert(file)
            }
        };
        let record = if self.needs_newline {
            format!("\n{line}\n")
        } else {
            format!("{line}\n")
        };
        match file.write_all(record.as_bytes()).and_then(|_| file.flush()) {
            Ok(()) => {
                let start = self.end + u64::from(self.needs_newline);
                self.needs_newline = false;
                self.end += record.len() as u64;
                Ok(start)
            }
            Err(source) => {
                // Part of the line may be in the file: start the next one on a fresh line, and
                // count what did land as ours.
                self.needs_newline = true;
                if let Ok(meta) = file.metadata() {
                    self.end = meta.len();
                }
                Err(SessionError::Write {
                    path: self.path.clone(),
                    source,
                })
            }
        }
    }
}

/// A writer that counts the bytes it was given.
struct Counting<W> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// An I/O error of the writer given to [`SessionWriter::create_with`]'s content (reported with
/// the file's path).
pub(super) fn io(source: std::io::Error) -> SessionError {
    SessionError::Write {
        path: PathBuf::new(),
        source,
    }
}
