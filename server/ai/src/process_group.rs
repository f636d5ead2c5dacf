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
