//! `trust.json`: the saved project-trust decisions, in pi 1.6's format and under pi's lock, so a
//! folder trusted (or refused) in pi is trusted (or refused) in Tandem and the other way round.
//!
//! The file maps canonical directory paths to `true` (trusted), `false` (not trusted) or `null`
//! (no decision). A decision covers the directory and everything below it; the nearest saved
//! ancestor wins. Writes keep pi's layout (keys sorted, two-space indent, a final newline) and
//! happen under pi's lock: the directory `trust.json.lock` beside the file, created with
//! `mkdir` and taken over once it is ten seconds old (a crashed holder). A file that cannot be
//! read or holds anything but those three values is an error, never "no decision", and is never
//! overwritten.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

/// The file's name in the agent directory.
pub const TRUST_FILE: &str = "trust.json";

/// How old a lock directory must be before it is taken to be left over by a crashed process
/// (pi's lock library's default).
const STALE_LOCK: Duration = Duration::from_secs(10);
/// How long a held lock is waited for.
const LOCK_ATTEMPTS: u32 = 50;
const LOCK_PAUSE: Duration = Duration::from_millis(20);

/// Why trust.json could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrustStoreError {
    /// The file exists but could not be read.
    #[error("Cannot read {}: {detail}. Saved trust decisions are ignored until it can be read.", .file.display())]
    Unreadable {
        /// The file.
        file: PathBuf,
        /// The operating system's reason.
        detail: String,
    },
    /// The file is not what pi writes.
    #[error("{}: {detail}. Saved trust decisions are ignored until the file is fixed or removed (pi and Tandem rewrite it when you trust a folder again).", .file.display())]
    Invalid {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// Another process holds the lock.
    #[error("{} is locked by another process ({} exists); try again, or remove that directory if no pi or Tandem is running", .file.display(), .lock.display())]
    Locked {
        /// The file.
        file: PathBuf,
        /// The lock directory.
        lock: PathBuf,
    },
    /// The file could not be written.
    #[error("Cannot save the trust decision to {}: {detail}", .file.display())]
    Write {
        /// The file.
        file: PathBuf,
        /// The operating system's reason.
        detail: String,
    },
}

/// A saved decision and the directory it was saved for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedDecision {
    /// The directory named in trust.json (the folder itself or an ancestor).
    pub path: PathBuf,
    /// `true`: trusted.
    pub trusted: bool,
}

/// `<agentDir>/trust.json`.
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
}

impl TrustStore {
    /// The store of `agent_dir`.
    pub fn new(agent_dir: &Path) -> TrustStore {
        TrustStore {
            file: agent_dir.join(TRUST_FILE),
        }
    }

    /// The file's path.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The decision that applies to `dir` (canonicalized here): the nearest directory at or
    /// above it with `true` or `false`. `Ok(None)` when nothing applies.
    pub fn lookup(&self, dir: &Path) -> Result<Option<SavedDecision>, TrustStoreError> {
        let entries = self.read()?;
        let mut current = Some(canonical(dir));
        while let Some(dir) = current {
            if let Some(Some(trusted)) = entries.get(&dir) {
                return Ok(Some(SavedDecision {
                    path: dir,
                    trusted: *trusted,
                }));
            }
            current = dir.parent().map(Path::to_path_buf);
        }
        Ok(None)
    }

    /// Saves `trusted` for `dir` (canonicalized), replacing what was saved for it, under the
    /// lock pi takes.
    pub fn save(&self, dir: &Path, trusted: bool) -> Result<(), TrustStoreError> {
        let _lock = Lock::take(&self.file)?;
        let mut entries = self.read()?;
        entries.insert(canonical(dir), Some(trusted));
        self.write(&entries)
    }

    fn read(&self) -> Result<BTreeMap<PathBuf, Option<bool>>, TrustStoreError> {
        let text = match std::fs::read_to_string(&self.file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => {
                return Err(TrustStoreError::Unreadable {
                    file: self.file.clone(),
                    detail: e.to_string(),
                })
            }
        };
        let invalid = |detail: String| TrustStoreError::Invalid {
            file: self.file.clone(),
            detail,
        };
        if text.trim().is_empty() {
            return Ok(BTreeMap::new());
        }
        let root: Value = tandem_ai::jsonc::from_str(&text)
            .map_err(|e| invalid(format!("not valid JSON ({e})")))?;
        let Value::Object(map) = root else {
            return Err(invalid(
                "expected an object from directory to true, false or null".into(),
            ));
        };
        let mut entries = BTreeMap::new();
        for (key, value) in map {
            let decision = match value {
                Value::Bool(b) => Some(b),
                Value::Null => None,
                other => {
                    return Err(invalid(format!(
                        "the value for {key:?} must be true, false or null, not {other}"
                    )))
                }
            };
            entries.insert(PathBuf::from(key), decision);
        }
        Ok(entries)
    }

    /// Writes `entries` as pi does (sorted, indented, newline-terminated), through a temporary
    /// file renamed over the real one (a symlinked trust.json is written where it points).
    fn write(&self, entries: &BTreeMap<PathBuf, Option<bool>>) -> Result<(), TrustStoreError> {
        let failed = |e: std::io::Error| TrustStoreError::Write {
            file: self.file.clone(),
            detail: e.to_string(),
        };
        let mut object = serde_json::Map::new();
        let mut keys: Vec<(String, Option<bool>)> = entries
            .iter()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), *v))
            .collect();
        // pi sorts by JavaScript string order (UTF-16 code units); for the paths that occur
        // this is byte order.
        keys.sort();
        for (key, value) in keys {
            object.insert(key, value.map_or(Value::Null, Value::Bool));
        }
        let mut text = serde_json::to_string_pretty(&Value::Object(object))
            .map_err(|e| failed(std::io::Error::other(e)))?;
        text.push('\n');
        let target = std::fs::canonicalize(&self.file).unwrap_or_else(|_| self.file.clone());
        let dir = target.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(failed)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
        std::io::Write::write_all(&mut temp, text.as_bytes()).map_err(failed)?;
        temp.persist(&target).map_err(|e| failed(e.error))?;
        Ok(())
    }
}

/// `dir` with symlinks resolved (pi keys decisions by real paths); as given when it does not
/// exist.
pub fn canonical(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| crate::paths::normalize(dir))
}

/// pi's lock: the directory `<file>.lock`, removed when dropped.
struct Lock {
    dir: PathBuf,
}

impl Lock {
    fn take(file: &Path) -> Result<Lock, TrustStoreError> {
        let mut name = file.as_os_str().to_owned();
        name.push(".lock");
        let dir = PathBuf::from(name);
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(|e| TrustStoreError::Write {
                file: file.to_path_buf(),
                detail: e.to_string(),
            })?;
        }
        for _ in 0..LOCK_ATTEMPTS {
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(Lock { dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(&dir)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok())
                        .is_some_and(|age| age > STALE_LOCK);
                    if stale {
                        let _ = std::fs::remove_dir(&dir);
                        continue;
                    }
                    std::thread::sleep(LOCK_PAUSE);
                }
                Err(e) => {
                    return Err(TrustStoreError::Write {
                        file: file.to_path_buf(),
                        detail: format!("cannot create the lock {}: {e}", dir.display()),
                    })
                }
            }
        }
        Err(TrustStoreError::Locked {
            file: file.to_path_buf(),
            lock: dir,
        })
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> (tempfile::TempDir, PathBuf, TrustStore) {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(tmp.path()).expect("canonical");
        let agent = root.join("agent");
        std::fs::create_dir_all(&agent).expect("mkdir");
        let store = TrustStore::new(&agent);
        (tmp, root, store)
    }

    #[test]
    fn the_nearest_saved_ancestor_decides_and_null_is_no_decision() {
        let (_tmp, root, store) = dirs();
        let project = root.join("work/project");
        std::fs::create_dir_all(project.join("sub")).expect("mkdir");
        assert_eq!(store.lookup(&project).expect("lookup"), None);
        let text = format!(
            "{{\"{w}\": true, \"{p}\": null, \"{s}\": false}}",
            w = root.join("work").display(),
            p = project.display(),
            s = project.join("sub").display()
        );
        std::fs::write(store.file(), text).expect("write");
        let found = store.lookup(&project).expect("lookup").expect("a decision");
        assert_eq!((found.path, found.trusted), (root.join("work"), true));
        let found = store.lookup(&project.join("sub")).expect("lookup");
        assert_eq!(found.map(|d| d.trusted), Some(false));
    }

    #[test]
    fn decisions_are_keyed_by_real_paths() {
        let (_tmp, root, store) = dirs();
        let real = root.join("real");
        std::fs::create_dir_all(&real).expect("mkdir");
        std::os::unix::fs::symlink(&real, root.join("link")).expect("symlink");
        store.save(&root.join("link"), true).expect("save");
        let text = std::fs::read_to_string(store.file()).expect("read");
        assert_eq!(text, format!("{{\n  \"{}\": true\n}}\n", real.display()));
        assert!(store.lookup(&real).expect("lookup").expect("saved").trusted);
    }

    #[test]
    fn saving_keeps_other_entries_sorted_and_replaces_its_own() {
        let (_tmp, root, store) = dirs();
        let (a, b) = (root.join("b-project"), root.join("a-project"));
        store.save(&a, false).expect("save");
        store.save(&b, true).expect("save");
        store.save(&a, true).expect("save");
        let text = std::fs::read_to_string(store.file()).expect("read");
        assert_eq!(
            text,
            format!(
                "{{\n  \"{}\": true,\n  \"{}\": true\n}}\n",
                b.display(),
                a.display()
            )
        );
        assert!(!store.file().with_extension("json.lock").exists());
    }

    #[test]
    fn a_broken_file_is_an_error_and_is_never_overwritten() {
        let (_tmp, root, store) = dirs();
        for bad in ["[true]", "{\"/x\": \"yes\"}", "{not json"] {
            std::fs::write(store.file(), bad).expect("write");
            let err = store.lookup(&root).unwrap_err();
            assert!(
                matches!(err, TrustStoreError::Invalid { .. }),
                "{bad}: {err}"
            );
            assert!(store.save(&root, true).is_err(), "{bad}");
            assert_eq!(std::fs::read_to_string(store.file()).expect("read"), bad);
        }
    }

    #[test]
    fn a_held_lock_is_waited_for_and_a_stale_one_taken_over() {
        let (_tmp, root, store) = dirs();
        let lock = root.join("agent/trust.json.lock");
        std::fs::create_dir(&lock).expect("mkdir");
        let err = store.save(&root, true).unwrap_err();
        assert!(matches!(err, TrustStoreError::Locked { .. }), "{err}");
        let old = SystemTime::now() - Duration::from_secs(60);
        let times = std::fs::FileTimes::new().set_modified(old);
        std::fs::File::open(&lock)
            .and_then(|f| f.set_times(times))
            .expect("age the lock");
        store.save(&root, true).expect("a stale lock is taken over");
        assert!(!lock.exists());
    }
}
