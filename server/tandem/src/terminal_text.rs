//! Text from a repository or a model, made safe to print on a terminal.
//!
//! Answers, tool output, file names, MCP server names and error bodies may hold escape
//! sequences that would move the cursor, retitle the window, write the clipboard (OSC 52) or
//! reorder what the user reads (bidirectional overrides, "Trojan source"). Every path that
//! prints such text where a person reads it goes through [`sanitize`]: the terminal mode's
//! lines, stderr ([`eprintln_safe!`] and the log's stderr writer), `tandem trust`'s report,
//! and print mode's answer when stdout is a terminal. Text for programs (JSON lines, protocol
//! messages) is escaped by its format instead and is left alone.

use std::borrow::Cow;
use std::io::Write;

use unicode_width::UnicodeWidthChar;

/// Columns between tab stops.
pub const TAB_WIDTH: usize = 4;

/// Replaces characters that are unsafe to print.
///
/// - A line feed is kept; `\r\n` becomes `\n`, and a lone `\r` also ends the line (as CommonMark
///   reads it), so it can never return the cursor over text already printed.
/// - A tab becomes spaces up to the next multiple of [`TAB_WIDTH`] columns from the line start.
/// - Other C0 controls become their Control Pictures stand-ins (ESC is `␛`, BEL `␇`), DEL is
///   `␡`, and C1 controls (U+0080–U+009F, which some terminals read as CSI or OSC) become U+FFFD.
/// - Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) become
///   U+FFFD, so text is shown in the order it is stored.
///
/// Text with none of these is returned borrowed.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_care) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut column = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                out.push('\n');
                column = 0;
            }
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push('\n');
                column = 0;
            }
            '\t' => {
                let spaces = TAB_WIDTH - column % TAB_WIDTH;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            }
            c => {
                let shown = visible(c);
                out.push(shown);
                column += shown.width().unwrap_or(0);
            }
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is changed by [`sanitize`].
fn needs_care(c: char) -> bool {
    (c < ' ' && c != '\n') || ('\u{7f}'..='\u{9f}').contains(&c) || is_bidi_control(c)
}

fn is_bidi_control(c: char) -> bool {
    ('\u{202a}'..='\u{202e}').contains(&c) || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// The character shown for `c` (itself when it is safe).
fn visible(c: char) -> char {
    match c {
        // Control Pictures: U+2400 + code for C0, U+2421 for DEL.
        '\0'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
        '\u{7f}' => '\u{2421}',
        '\u{80}'..='\u{9f}' => '\u{fffd}',
        c if is_bidi_control(c) => '\u{fffd}',
        c => c,
    }
}

/// Writes one line to stderr through [`sanitize`]; errors writing are ignored (as
/// `eprintln!`, minus its panic).
pub fn eprint_line(args: std::fmt::Arguments<'_>) {
    let text = args.to_string();
    let mut line = sanitize(&text).into_owned();
    line.push('\n');
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// `eprintln!` through [`sanitize`]: for every line on stderr that may carry a repository's or
/// a model's text.
#[macro_export]
macro_rules! eprintln_safe {
    ($($arg:tt)*) => {
        $crate::terminal_text::eprint_line(format_args!($($arg)*))
    };
}

/// A writer that passes text through [`sanitize`] (line feeds and tabs kept, tabs expanded);
/// bytes that are not UTF-8 are replaced. Each `write` is taken as whole text: give it whole
/// lines (the log's formatter writes one event per call).
pub struct Sanitizing<W>(pub W);

impl<W: Write> Write for Sanitizing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(sanitize(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_bidi_overrides_become_visible_stand_ins() {
        let hostile = "evil\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}31m\u{202e}txt.exe\tok\r\nnext";
        assert_eq!(
            sanitize(hostile),
            "evil\u{241b}]0;owned\u{2407}\u{241b}[2J\u{fffd}31m\u{fffd}txt.exe  ok\nnext"
        );
        assert!(matches!(sanitize("plain text\n"), Cow::Borrowed(_)));
        let mut out = Sanitizing(Vec::new());
        out.write_all(b"a\x1b[31mred\n").expect("write");
        assert_eq!(
            String::from_utf8(out.0).expect("utf-8"),
            "a\u{241b}[31mred\n"
        );
    }
}
