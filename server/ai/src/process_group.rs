//! Signals to a whole process group. Every command Tandem starts — bash calls, MCP servers, key
//! commands — leads a group of its own (`process_group(0)` at spawn), so stopping it also stops
//! what it started (`npx` and its node, a password manager's helper). This is the one place
//! that sends those signals.

/// What to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Ask to stop (SIGTERM).
    Term,
    /// Stop now (SIGKILL).
    Kill,
}

/// Sends `signal` to the process group led by `pid`. False when there is no such group any
/// more (everything in it exited), or on a system without process groups.
#[cfg(unix)]
pub fn signal(pid: u32, signal: Signal) -> bool {
    let Ok(pgid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    let signal = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: killpg only sends a signal and touches no memory; the group is one Tandem
    // started (its id is its leader's pid, unreaped or with members still running).
    unsafe { libc::killpg(pgid, signal) == 0 }
}

/// Without process groups there is nothing to signal; callers also kill the child itself.
#[cfg(not(unix))]
pub fn signal(_pid: u32, _signal: Signal) -> bool {
    false
}

/// Makes the calling process a child subreaper (Linux): a descendant orphaned by its parent's
/// exit — a double fork, `(setsid cmd &)` — is reparented to it rather than to init, so the
/// whole tree stays below it for [`kill_tree`]. The attribute survives `execve`, so this is
/// called in the child between fork and exec (`pre_exec`); it makes one system call, which is
/// async-signal-safe. Elsewhere it does nothing.
pub fn adopt_orphans() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) changes one attribute of the calling
        // process and reads no memory of ours.
        let done = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if done != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Kills the process `pid`, its process group and every descendant of it, including those
/// that left the group (`setsid`) or were orphaned by a double fork (kept below `pid` when it
/// called [`adopt_orphans`]). On Linux the tree is read from `/proc`: each process found is
/// stopped first (SIGSTOP, so none can fork a new one meanwhile), the tree is read again until
/// nothing new appears, then everything is killed (SIGKILL). Elsewhere only the group is.
pub fn kill_tree(pid: u32) {
    #[cfg(target_os = "linux")]
    {
        let mut stopped = Vec::new();
        send(pid, libc::SIGSTOP);
        // A bound on the rounds: a fork bomb must not keep this loop going forever.
        for _ in 0..64 {
            let fresh: Vec<u32> = descendants(pid)
                .into_iter()
                .filter(|p| !stopped.contains(p))
                .collect();
            if fresh.is_empty() {
                break;
            }
            for p in fresh {
                send(p, libc::SIGSTOP);
                stopped.push(p);
            }
        }
        for p in stopped {
            send(p, libc::SIGKILL);
        }
    }
    signal(pid, Signal::Kill);
    #[cfg(target_os = "linux")]
    send(pid, libc::SIGKILL);
}

#[cfg(target_os = "linux")]
fn send(pid: u32, signal: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill only sends a signal; `pid` is Tandem's child or one of its descendants,
        // found a moment ago.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Every process below `root` in the process tree, read from `/proc` (parents from each
/// process's `stat`).
#[cfg(target_os = "linux")]
fn descendants(root: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(ppid) = parent_of(pid) {
            parents.push((pid, ppid));
        }
    }
    let mut found = vec![root];
    let mut at = 0;
    while at < found.len() {
        let parent = found[at];
        found.extend(
            parents
                .iter()
                .filter(|(_, ppid)| *ppid == parent)
                .map(|(pid, _)| *pid),
        );
        at += 1;
    }
    found.remove(0);
    found
}

/// The parent of `pid` from `/proc/<pid>/stat` (the field after the state, which follows the
/// command name's closing parenthesis; the name itself may hold spaces and parentheses).
#[cfg(target_os = "linux")]
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn kill_tree_ends_what_left_the_group_and_what_a_double_fork_orphaned() {
        use std::os::unix::process::CommandExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let pids = dir.path().join("pids");
        let script = format!(
            "setsid sleep 1001 & echo $! >> '{0}'; (setsid sleep 1002 & echo $! >> '{0}'); \
             sh -c 'sleep 1003 & echo $! >> \"{0}\"' & sleep 1000",
            pids.display()
        );
        let mut child = unsafe {
            std::process::Command::new("sh")
                .arg("-c")
                .arg(&script)
                .process_group(0)
                .pre_exec(adopt_orphans)
                .spawn()
                .expect("sh")
        };
        let alive = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| !s[s.rfind(')').unwrap_or(0)..].starts_with(") Z"))
        };
        // Wait (bounded) for the three background sleeps to say who they are.
        let mut started = Vec::new();
        for _ in 0..500 {
            started = std::fs::read_to_string(&pids)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse::<u32>().ok())
                .collect();
            if started.len() == 3 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(started.len(), 3, "the sleeps did not start");
        assert!(started.iter().all(|p| alive(*p)));
        kill_tree(child.id());
        let _ = child.wait();
        for _ in 0..500 {
            if started.iter().all(|p| !alive(*p)) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let left: Vec<u32> = started.into_iter().filter(|p| alive(*p)).collect();
        assert!(left.is_empty(), "still running: {left:?}");
    }
}
