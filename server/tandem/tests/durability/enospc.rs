//! Disk full (ENOSPC) on a session write is reported, not ignored.
//!
//! The session lives on a small tmpfs mounted for the test (`mount -t tmpfs -o size=…`), which
//! needs root (or CAP_SYS_ADMIN); without it the test fails saying so (CI runs as root): a
//! test that cannot run never passes. Once the file
//! exists, the rest of the tmpfs is filled, so the next answer cannot be appended: print mode
//! must exit 1 naming the error, the language server must send an `error` event after
//! `settled`, and once space is back the file must load (the partly written line skipped) and
//! take new entries after it, its earlier bytes untouched.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;
use tandem_coding::session::load_session_file;
use tandem_tests::lsp_client::event_type;
use tandem_tests::wire::{self, Turn, WireApi};

use crate::support::lsp::{sandbox_lsp, stderr_of};
use crate::support::process::assert_no_panic;
use crate::support::Sandbox;

/// A tmpfs mounted for the test, unmounted on drop.
struct Tmpfs {
    path: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` at `path`, or says why it cannot.
    fn mount(path: &Path, size: &str) -> Result<Tmpfs, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not running as root: mounting a tmpfs needs root".into());
        }
        std::fs::create_dir_all(path).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(path)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Tmpfs {
            path: path.to_path_buf(),
        })
    }

    /// Fills the file system: writes `filler` until the disk is full.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let filler = self.path.join("filler");
        let mut file = std::fs::File::create(&filler).expect("filler");
        let block = vec![0u8; 4096];
        loop {
            match file.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("filling the tmpfs: {e}"),
            }
        }
        // Also the last partial page.
        while let Ok(n) = file.write(&block[..1]) {
            if n == 0 {
                break;
            }
        }
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.path)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.path).status();
        }
    }
}

#[test]
fn a_full_disk_on_a_session_write_is_reported_and_loses_nothing_written_before(
) -> anyhow::Result<()> {
    let sandbox = Sandbox::with_quick_retries();
    let mount = sandbox.home.join("small-disk");
    let tmpfs = Tmpfs::mount(&mount, "256k").unwrap_or_else(|why| {
        panic!("ENOSPC cannot be produced here ({why}); run the tests as root, as CI does")
    });
    let dir = mount.join("sessions");
    let dir_arg = dir.to_str().unwrap();

    // A full disk when the file is first written: reported, and no half-written file left.
    let filler = tmpfs.fill();
    sandbox.answer(&Turn::text("Nowhere to write this."));
    let run = sandbox.run(&["--session-dir", dir_arg, "-p", "zeroth"]);
    assert_no_panic(&run.stderr);
    assert_eq!(
        run.code, 1,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.contains("No space left on device"),
        "{}",
        run.stderr
    );
    println!("ENOSPC on creation, print mode: {}", run.stderr.trim());
    let left: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "no half-written session file: {left:?}");
    std::fs::remove_file(filler).unwrap();

    // A first run writes the file while there is room.
    sandbox.answer(&Turn::text("Room enough for this."));
    let run = sandbox.run(&["--session-dir", dir_arg, "-p", "first"]);
    run.expect_code(0);
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let file = files[0].clone();
    let file_arg = file.to_str().unwrap().to_string();
    let before = std::fs::read(&file).unwrap();

    // The disk fills up; the next answer (larger than any slack in the file's last page)
    // cannot be appended.
    let filler = tmpfs.fill();
    let big = "This answer does not fit on the disk. ".repeat(400);
    sandbox.answer(&Turn::text(big.clone()));
    let run = sandbox.run(&[
        "--session-dir",
        dir_arg,
        "--session",
        &file_arg,
        "-p",
        "second",
    ]);
    assert_no_panic(&run.stderr);
    assert_eq!(
        run.code, 1,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.contains("No space left on device") && run.stderr.contains(&file_arg),
        "the error names the cause and the file: {}",
        run.stderr
    );
    println!("ENOSPC, print mode: {}", run.stderr.trim());
    let during = std::fs::read(&file).unwrap();
    assert!(
        during.starts_with(&before),
        "nothing written before was touched"
    );

    // JSON mode: the same exit status and error.
    sandbox.answer(&Turn::text(big.clone()));
    let run = sandbox.run(&[
        "--session-dir",
        dir_arg,
        "--session",
        &file_arg,
        "--mode",
        "json",
        "-p",
        "third",
    ]);
    assert_no_panic(&run.stderr);
    assert_eq!(run.code, 1, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("No space left on device"),
        "{}",
        run.stderr
    );

    // The language server: `settled`, then an `error` event naming the failure.
    let mut lsp = sandbox_lsp(&sandbox, json!({}))?;
    let r = lsp.request("tandem/sessions/open", json!({"path": file_arg}))?;
    let session = r["session"].as_str().unwrap_or_default().to_string();
    sandbox.enqueue(
        wire::response(WireApi::OpenAiCompletions, &Turn::text(big))
            .with_chunk(4096)
            .with_chunk_delay(Duration::from_millis(1)),
    );
    lsp.request(
        "tandem/prompt",
        json!({"session": session, "text": "fourth"}),
    )?;
    lsp.wait_settled(&session, 1)?;
    let error = lsp.wait_for("the persistence error event", |m| {
        m.params["session"] == session.as_str() && event_type(&m.params) == "error"
    })?;
    let message = error.params["event"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("No space left on device"), "{error}");
    println!("ENOSPC, language server error event: {message}");
    lsp.shutdown()?;
    assert_no_panic(&stderr_of(&lsp));

    // Space comes back: the file loads (a partly written line, if any, is skipped) and takes
    // new entries after everything that was there.
    std::fs::remove_file(filler).unwrap();
    let full = std::fs::read(&file).unwrap();
    assert!(full.starts_with(&during), "nothing was rewritten");
    let loaded = load_session_file(&file).expect("loads after ENOSPC");
    assert!(
        loaded.report.skipped.len() <= 3,
        "at most the three torn attempts are skipped: {:?}",
        loaded.report.skipped
    );
    sandbox.answer(&Turn::text("Space again."));
    let run = sandbox.run(&[
        "--session-dir",
        dir_arg,
        "--session",
        &file_arg,
        "-p",
        "fifth",
    ]);
    assert_no_panic(&run.stderr);
    run.expect_code(0);
    assert_eq!(run.stdout, "Space again.\n");
    let after = std::fs::read(&file).unwrap();
    assert!(after.starts_with(&full), "nothing was rewritten");
    let reloaded = load_session_file(&file).unwrap();
    assert_eq!(reloaded.report.skipped, loaded.report.skipped);
    assert_eq!(
        reloaded.entries.len(),
        loaded.entries.len() + 2,
        "user + answer"
    );
    println!(
        "ENOSPC: tmpfs of 256k; {} torn line(s) from the failed appends skipped on load; \
         {} entries kept",
        loaded.report.skipped.len(),
        reloaded.entries.len()
    );
    Ok(())
}
