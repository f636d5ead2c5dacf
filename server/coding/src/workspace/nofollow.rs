//! Writing a file without following any symlink: the last line of defence behind the path
//! checks, for the case where something swaps a directory for a link between the check and the
//! write.
//!
//! The path given is the real one the user approved ([`crate::paths::real_path`]: absolute, no
//! symlinks, no `..`). Each directory on the way is opened relative to its parent with
//! `O_NOFOLLOW | O_DIRECTORY` (a missing one is created with `mkdirat` first), and the file
//! itself with `O_NOFOLLOW`. A component that is a symlink by the time it is opened makes the
//! open fail (`ELOOP` / `ENOTDIR`), so the write fails instead of landing somewhere else. This
//! is the operating system's no-follow primitive used step by step, not a string check.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use rustix::fs::{mkdirat, openat, Mode, OFlags, CWD};
use rustix::io::Errno;

use super::WorkspaceError;

/// Writes `new_text` to `path` (absolute and real), creating missing parent directories, and
/// refusing to follow a symlink anywhere. With `old_text`, the file must still hold exactly
/// that (else [`WorkspaceError::Conflict`]). Blocking.
pub fn write(path: &Path, old_text: Option<&str>, new_text: &str) -> Result<(), WorkspaceError> {
    let changed = |what: &Path| {
        WorkspaceError::Client(format!(
            "{} is a symbolic link now (the folder was swapped while the change was prepared); \
             nothing was written to {}",
            what.display(),
            path.display()
        ))
    };
    let io = |at: &Path, e: Errno| WorkspaceError::io(at, &std::io::Error::from(e));
    if !path.is_absolute() {
        return Err(WorkspaceError::Client(format!(
            "{} is not an absolute path; nothing was written",
            path.display()
        )));
    }
    let name = path.file_name().ok_or_else(|| {
        WorkspaceError::Client(format!(
            "{} names no file; nothing was written",
            path.display()
        ))
    })?;
    let parent = path.parent().unwrap_or(Path::new("/"));
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir: OwnedFd = openat(CWD, "/", dir_flags, Mode::empty()).map_err(|e| io(parent, e))?;
    let mut walked = std::path::PathBuf::from("/");
    for component in parent.components() {
        let part = match component {
            Component::RootDir | Component::CurDir => continue,
            Component::Normal(part) => part,
            Component::ParentDir | Component::Prefix(_) => {
                return Err(WorkspaceError::Client(format!(
                    "{} is not a resolved path; nothing was written",
                    path.display()
                )))
            }
        };
        walked.push(part);
        let next = match openat(&dir, part, dir_flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => {
                match mkdirat(&dir, part, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(io(&walked, e)),
                }
                openat(&dir, part, dir_flags, Mode::empty()).map_err(|e| match e {
                    Errno::LOOP | Errno::NOTDIR => changed(&walked),
                    e => io(&walked, e),
                })?
            }
            Err(Errno::LOOP | Errno::NOTDIR) => return Err(changed(&walked)),
            Err(e) => return Err(io(&walked, e)),
        };
        dir = next;
    }
    let file_flags = OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if let Some(old) = old_text {
        let fd = openat(&dir, name, file_flags | OFlags::RDONLY, Mode::empty()).map_err(
            |e| match e {
                Errno::LOOP => changed(path),
                e => io(path, e),
            },
        )?;
        let mut current = Vec::new();
        File::from(fd)
            .read_to_end(&mut current)
            .map_err(|e| WorkspaceError::io(path, &e))?;
        if current != old.as_bytes() {
            return Err(WorkspaceError::Conflict(path.to_path_buf()));
        }
    }
    let fd = openat(
        &dir,
        name,
        file_flags | OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC,
        Mode::from_raw_mode(0o666),
    )
    .map_err(|e| match e {
        Errno::LOOP => changed(path),
        e => io(path, e),
    })?;
    let mut file = File::from(fd);
    file.write_all(new_text.as_bytes())
        .map_err(|e| WorkspaceError::io(path, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_root() -> (tempfile::TempDir, std::path::PathBuf) {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(tmp.path()).expect("canon");
        (tmp, root)
    }

    #[test]
    fn writes_creating_parents_and_checks_the_old_text() {
        let (_tmp, root) = temp_root();
        let file = root.join("a/b/c.txt");
        write(&file, None, "one").expect("create");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "one");
        write(&file, Some("one"), "two").expect("replace");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "two");
        let err = write(&file, Some("one"), "three").unwrap_err();
        assert!(matches!(err, WorkspaceError::Conflict(_)), "{err}");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "two");
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_is_not_followed() {
        let (_tmp, root) = temp_root();
        let (_out_tmp, outside) = temp_root();
        std::fs::create_dir(root.join("sub")).expect("mkdir");
        let approved = root.join("sub/file.txt");
        std::fs::remove_dir(root.join("sub")).expect("rmdir");
        std::os::unix::fs::symlink(&outside, root.join("sub")).expect("symlink");
        let err = write(&approved, None, "payload").unwrap_err();
        assert!(err.to_string().contains("is a symbolic link now"), "{err}");
        assert!(!outside.join("file.txt").exists());
    }

    #[test]
    fn a_final_symlink_is_not_followed() {
        let (_tmp, root) = temp_root();
        let (_out_tmp, outside) = temp_root();
        std::os::unix::fs::symlink(outside.join("target.txt"), root.join("f.txt"))
            .expect("symlink");
        let err = write(&root.join("f.txt"), None, "payload").unwrap_err();
        assert!(err.to_string().contains("is a symbolic link now"), "{err}");
        assert!(!outside.join("target.txt").exists());
        std::fs::write(outside.join("target.txt"), "old").expect("write");
        let err = write(&root.join("f.txt"), Some("old"), "payload").unwrap_err();
        assert!(err.to_string().contains("is a symbolic link now"), "{err}");
        assert_eq!(
            std::fs::read_to_string(outside.join("target.txt")).expect("read"),
            "old"
        );
    }
}
