//! The terminal handed to something else for a while, as pi does: the prompt edited in an
//! external editor (Ctrl+G) and the process suspended to the shell (Ctrl+Z).
//!
//! Both give the terminal back first (cooked mode, the live area cleared, finished output
//! printed) and take it again afterwards, the live area starting wherever the cursor was left.
//! The app's key reader is dropped before and made again after (see [`App::run`]): a reader
//! left waiting on the terminal would take the editor's keystrokes. The session goes on
//! meanwhile; its events wait in their channel and are drawn once the terminal is back.

use std::io::Write;
use std::path::Path;

use super::app::App;

/// What the terminal is handed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outside {
    /// The user's editor, on the prompt (Ctrl+G).
    Editor,
    /// The shell: the process stops until `fg` (Ctrl+Z).
    Shell,
}

/// The editor pi 1.6 falls back to when nothing names one.
const FALLBACK_EDITOR: &str = "nano";

impl App {
    /// Hands the terminal to `outside` and takes it back; problems are said in the transcript.
    pub(super) async fn hand_over(&mut self, outside: Outside) {
        let theme = self.transcript.theme().clone();
        let before = (self.screen.width(), self.screen.rows());
        if let Err(e) = self.flush_and_suspend() {
            self.transcript.note(
                &format!("Could not give the terminal back: {e}"),
                theme.error,
            );
            return;
        }
        let said = match outside {
            Outside::Editor => self.edit_prompt_outside().await,
            Outside::Shell => {
                stop_process_group();
                None
            }
        };
        if let Err(e) = self.screen.resume() {
            tracing::warn!("taking the terminal back failed: {e}");
        }
        if let Some((text, error)) = said {
            let style = if error { theme.error } else { theme.dim };
            self.transcript.note(&text, style);
        }
        // The window may have changed size meanwhile (its resize events went to nobody).
        if (self.screen.width(), self.screen.rows()) != before {
            self.reprint_soon();
        }
        self.transcript.dirty = true;
    }

    fn flush_and_suspend(&mut self) -> std::io::Result<()> {
        let finished = self.transcript.take_finished();
        self.screen.print(&finished)?;
        self.screen.suspend()
    }

    /// Runs the external editor on the prompt's text; the editor's text replaces it when the
    /// editor exits with 0. Returns what to say (and whether it is an error).
    async fn edit_prompt_outside(&mut self) -> Option<(String, bool)> {
        let settings = self.held.live.session().settings();
        let command = editor_command(
            settings.external_editor.as_deref(),
            std::env::var("VISUAL").ok().as_deref(),
            std::env::var("EDITOR").ok().as_deref(),
        );
        let dir = match tempfile::Builder::new().prefix("tandem-editor-").tempdir() {
            Ok(dir) => dir,
            Err(e) => return Some((format!("Could not make the prompt's file: {e}"), true)),
        };
        let file = dir.path().join("prompt.md");
        if let Err(e) = std::fs::write(&file, self.editor.text()) {
            return Some((format!("Could not write {}: {e}", file.display()), true));
        }
        let mut out = std::io::stdout();
        let _ = writeln!(
            out,
            "Editing the prompt with {command}; Tandem comes back when the editor exits."
        );
        let _ = out.flush();
        let status = run_editor(&command, &file, &self.cwd).await;
        match status {
            Err(e) => Some((
                format!("Could not start the external editor `{command}`: {e}"),
                true,
            )),
            Ok(status) if !status.success() => {
                let how = match status.code() {
                    Some(code) => format!("code {code}"),
                    None => "a signal".to_string(),
                };
                Some((
                    format!("The external editor exited with {how}; the prompt is unchanged."),
                    true,
                ))
            }
            Ok(_) => match std::fs::read(&file) {
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes);
                    let text = prompt_from_file(&text);
                    let theme = self.transcript.theme().clone();
                    self.editor.set_text(&text, &theme);
                    None
                }
                Err(e) => Some((format!("Could not read {}: {e}", file.display()), true)),
            },
        }
    }
}

/// The editor to run: the settings' `externalEditor` (the agent directory's only), then
/// `$VISUAL`, then `$EDITOR`, then nano; empty values count as unset.
pub fn editor_command(setting: Option<&str>, visual: Option<&str>, editor: Option<&str>) -> String {
    [setting, visual, editor]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|c| !c.is_empty())
        .unwrap_or(FALLBACK_EDITOR)
        .to_string()
}

/// The prompt an edited file holds: without a byte-order mark or its one final line break,
/// line breaks as `\n`.
pub fn prompt_from_file(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    match text.strip_suffix('\n') {
        Some(stripped) => stripped.to_string(),
        None => text,
    }
}

/// Runs `command` on `file` through `sh`, as git runs `$EDITOR`: the command may carry its own
/// arguments and quoting (`code --wait`, `"/path with spaces/vim"`), and the file is one more
/// argument, never part of the command's text.
async fn run_editor(
    command: &str,
    file: &Path,
    cwd: &Path,
) -> std::io::Result<std::process::ExitStatus> {
    tokio::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{command} \"$@\""))
        .arg(command)
        .arg(file)
        .current_dir(cwd)
        .kill_on_drop(true)
        .status()
        .await
}

/// Stops this process's group until the shell continues it (`fg`). Where nothing can
/// continue it (no job control: the group is orphaned), the kernel drops the signal and this
/// returns at once.
fn stop_process_group() {
    // SAFETY: kill(2) with pid 0 signals the caller's process group; no memory is involved.
    let rc = unsafe { libc::kill(0, libc::SIGTSTP) };
    if rc != 0 {
        tracing::warn!("suspending failed: {}", std::io::Error::last_os_error());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_then_visual_then_editor_then_nano() {
        assert_eq!(editor_command(Some("hx"), Some("vim"), Some("vi")), "hx");
        assert_eq!(editor_command(None, Some("vim"), Some("vi")), "vim");
        assert_eq!(editor_command(Some("  "), Some(""), Some("vi")), "vi");
        assert_eq!(editor_command(None, None, None), "nano");
        assert_eq!(
            editor_command(Some(" code --wait "), None, None),
            "code --wait"
        );
    }

    #[test]
    fn an_edited_file_loses_its_mark_and_one_final_line_break() {
        assert_eq!(prompt_from_file("\u{feff}fix it\n"), "fix it");
        assert_eq!(prompt_from_file("a\r\nb\r\n\n"), "a\nb\n");
        assert_eq!(prompt_from_file("no break"), "no break");
        assert_eq!(prompt_from_file(""), "");
        assert_eq!(prompt_from_file("old\rmac"), "old\nmac");
    }
}
