//! The terminal: raw mode, finished output printed into the scrollback, and the live area drawn
//! below it with ratatui.
//!
//! The live area is a ratatui [`Viewport::Fixed`] placed right under the last printed line.
//! Printing finished lines ([`Screen::print`]) writes them where the live area was (the
//! terminal scrolls as at any program's output, so they reach the scrollback the usual way),
//! then moves the live area under them and has ratatui draw it whole. Between prints, ratatui
//! draws only the cells that changed. Every update is one synchronized-output frame, so a
//! terminal that supports it (tmux, kitty, WezTerm, …) never shows a half-drawn state.

use std::io::{self, Stdout, Write};

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{self, BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};
use crossterm::{cursor, execute, queue};
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};
use ratatui::{Frame, Terminal, TerminalOptions, Viewport};

/// The terminal while the interactive mode runs; [`Screen::leave`] (or dropping it) gives it
/// back as it was.
pub struct Screen {
    terminal: Terminal<CrosstermBackend<Stdout>>,
    cols: u16,
    rows: u16,
    /// The live area's first row.
    top: u16,
    /// Its height.
    height: u16,
    /// Whether the terminal took the keyboard-enhancement flags (Shift+Enter reported apart).
    enhanced_keys: bool,
    left: bool,
}

impl Screen {
    /// Puts the terminal in raw mode with bracketed paste (and, where the terminal has it,
    /// keys reported with their modifiers), the live area starting at the cursor's row.
    pub fn enter() -> io::Result<Screen> {
        let (enhanced_keys, (cols, rows), top) = take_terminal()?;
        let backend = CrosstermBackend::new(io::stdout());
        let terminal = Terminal::with_options(
            backend,
            TerminalOptions {
                viewport: Viewport::Fixed(Rect::new(0, top, cols, 1)),
            },
        )?;
        let mut screen = Screen {
            terminal,
            cols,
            rows,
            top,
            height: 1,
            enhanced_keys,
            left: false,
        };
        if top + 1 > rows {
            screen.scroll(top + 1 - rows)?;
        }
        Ok(screen)
    }

    /// The terminal's width.
    pub fn width(&self) -> u16 {
        self.cols
    }

    /// The terminal's height.
    pub fn rows(&self) -> u16 {
        self.rows
    }

    /// Whether Shift+Enter arrives apart from Enter.
    pub fn enhanced_keys(&self) -> bool {
        self.enhanced_keys
    }

    /// The window changed size: the live area is drawn again at the new size under the last
    /// printed line (what was printed stays as the terminal keeps it).
    pub fn resized(&mut self, cols: u16, rows: u16) -> io::Result<()> {
        self.cols = cols.max(1);
        self.rows = rows.max(2);
        self.top = self.top.min(self.rows - 1);
        let out = self.terminal.backend_mut();
        queue!(
            out,
            cursor::MoveTo(0, self.top),
            Clear(ClearType::FromCursorDown)
        )?;
        self.height = 0;
        Ok(())
    }

    /// Clears the screen and its scrollback and prints `lines` from the top: after a resize,
    /// everything is printed again at the new width (as pi does), so the history holds one
    /// copy of the conversation, wrapped to the window it is read in.
    pub fn reprint(&mut self, lines: &[Line<'_>]) -> io::Result<()> {
        let out = self.terminal.backend_mut();
        queue!(
            out,
            BeginSynchronizedUpdate,
            cursor::MoveTo(0, 0),
            Clear(ClearType::All),
            Clear(ClearType::Purge)
        )?;
        self.top = 0;
        self.height = 0;
        self.print(lines)
    }

    /// Prints finished lines above the live area (each line at most the width; longer ones
    /// are cut by the terminal's own wrapping rules, so callers wrap first). Nothing is drawn
    /// until the next [`Screen::draw`].
    pub fn print(&mut self, lines: &[Line<'_>]) -> io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let width = self.cols;
        let out = self.terminal.backend_mut();
        queue!(
            out,
            cursor::MoveTo(0, self.top),
            Clear(ClearType::FromCursorDown)
        )?;
        let mut row = self.top;
        for line in lines {
            if row >= self.rows {
                // At the bottom: one newline scrolls the screen (the top line goes to the
                // scrollback), and the line goes on the last row.
                queue!(
                    self.terminal.backend_mut(),
                    cursor::MoveTo(0, self.rows - 1)
                )?;
                self.terminal.backend_mut().write_all(b"\n")?;
                row = self.rows - 1;
            }
            let mut buffer = Buffer::empty(Rect::new(0, 0, width, 1));
            Paragraph::new(line.clone()).render(buffer.area, &mut buffer);
            let cells: Vec<_> = buffer
                .content
                .iter()
                .enumerate()
                .map(|(x, cell)| (x as u16, row, cell))
                .collect();
            // Trailing blanks are not written: the row was cleared, and a terminal keeps no
            // spaces at the end of a copied line.
            let end = cells
                .iter()
                .rposition(|(_, _, cell)| {
                    cell.symbol() != " " || cell.bg != ratatui::style::Color::Reset
                })
                .map_or(0, |i| i + 1);
            self.terminal
                .backend_mut()
                .draw(cells[..end].iter().copied())?;
            row += 1;
        }
        self.top = row;
        self.height = 0;
        Ok(())
    }

    /// Draws the live area, `height` rows tall (at most the screen less one row), under the
    /// last printed line; the screen scrolls up when it would not fit.
    pub fn draw(&mut self, height: u16, render: impl FnOnce(&mut Frame<'_>)) -> io::Result<()> {
        let height = height.clamp(1, self.rows - 1);
        if self.top + height > self.rows {
            self.scroll(self.top + height - self.rows)?;
        }
        let area = Rect::new(0, self.top, self.cols, height);
        if height != self.height || self.terminal.get_frame().area() != area {
            if height < self.height {
                queue!(
                    self.terminal.backend_mut(),
                    cursor::MoveTo(0, self.top + height),
                    Clear(ClearType::FromCursorDown)
                )?;
            }
            self.terminal.resize(area)?;
            self.height = height;
        }
        queue!(self.terminal.backend_mut(), BeginSynchronizedUpdate)?;
        self.terminal.draw(render)?;
        queue!(self.terminal.backend_mut(), EndSynchronizedUpdate)?;
        Write::flush(self.terminal.backend_mut())
    }

    /// Sets the window's title (an extension's `ctx.ui.setTitle`). The text is sanitized here,
    /// whoever gives it: a raw BEL or ESC would end the title sequence early and let the rest
    /// act on the terminal.
    pub fn set_title(&mut self, title: &str) -> io::Result<()> {
        let title = crate::terminal_text::sanitize(title).replace('\n', " ");
        let out = self.terminal.backend_mut();
        queue!(out, terminal::SetTitle(title))?;
        Write::flush(out)
    }

    /// Scrolls the whole screen up `n` rows (the top rows go to the scrollback) and moves the
    /// live area up with it.
    fn scroll(&mut self, n: u16) -> io::Result<()> {
        let out = self.terminal.backend_mut();
        queue!(out, cursor::MoveTo(0, self.rows - 1))?;
        for _ in 0..n {
            out.write_all(b"\n")?;
        }
        self.top = self.top.saturating_sub(n);
        self.height = 0;
        Ok(())
    }

    /// Clears the live area and gives the terminal back (cooked mode, no bracketed paste, the
    /// cursor shown under the last printed line).
    pub fn leave(&mut self) -> io::Result<()> {
        if self.left {
            return Ok(());
        }
        self.left = true;
        self.give_back()
    }

    /// Gives the terminal back for a while (another program uses it, or the process is
    /// stopped), the cursor under the last printed line; [`Screen::resume`] takes it again.
    pub fn suspend(&mut self) -> io::Result<()> {
        self.give_back()
    }

    /// Takes the terminal again after [`Screen::suspend`]: the live area starts at the cursor's
    /// row (what the shell or the other program printed meanwhile stays above it) and is drawn
    /// whole at the next [`Screen::draw`].
    pub fn resume(&mut self) -> io::Result<()> {
        let (enhanced_keys, (cols, rows), top) = take_terminal()?;
        self.enhanced_keys = enhanced_keys;
        self.cols = cols;
        self.rows = rows;
        self.top = top;
        self.height = 0;
        Ok(())
    }

    fn give_back(&mut self) -> io::Result<()> {
        let top = self.top;
        let out = self.terminal.backend_mut();
        queue!(
            out,
            cursor::MoveTo(0, top),
            Clear(ClearType::FromCursorDown)
        )?;
        if self.enhanced_keys {
            queue!(out, PopKeyboardEnhancementFlags)?;
        }
        queue!(out, DisableBracketedPaste, cursor::Show)?;
        Write::flush(out)?;
        terminal::disable_raw_mode()
    }
}

/// Raw mode, bracketed paste and (where the terminal has them) keys reported with their
/// modifiers; returns whether it has them, the window's size, and the row the live area starts
/// on (the cursor's, or the next when the cursor is not at a line's start).
fn take_terminal() -> io::Result<(bool, (u16, u16), u16)> {
    terminal::enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(out, EnableBracketedPaste)?;
    let enhanced_keys = matches!(terminal::supports_keyboard_enhancement(), Ok(true));
    if enhanced_keys {
        execute!(
            out,
            PushKeyboardEnhancementFlags(
                KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES
                    | KeyboardEnhancementFlags::REPORT_ALTERNATE_KEYS
            )
        )?;
    }
    let (cols, rows) = terminal::size()?;
    let (cols, rows) = (cols.max(1), rows.max(2));
    let top = match cursor::position() {
        Ok((0, row)) => row,
        Ok((_, row)) => row + 1,
        Err(_) => rows - 1,
    }
    .min(rows - 1);
    Ok((enhanced_keys, (cols, rows), top))
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.leave();
    }
}

/// Gives the terminal back before a panic's message is printed, so it is readable and the
/// shell is usable afterwards.
pub fn restore_on_panic() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let mut out = io::stdout();
        let _ = execute!(
            out,
            PopKeyboardEnhancementFlags,
            DisableBracketedPaste,
            cursor::Show
        );
        let _ = terminal::disable_raw_mode();
        let _ = writeln!(out);
        previous(info);
    }));
}
