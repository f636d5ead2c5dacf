//! Markdown to styled terminal lines (pulldown-cmark), for answers as they stream.
//!
//! [`render`] parses CommonMark with GFM tables, strikethrough and task lists, and lays the
//! blocks out for a terminal of a given width: one blank row between blocks, quotes behind a
//! `│ ` bar, list items behind their marker with a hanging indent, code blocks between dim
//! fence rows (highlighted when [`super::highlight`] knows the language, hard-wrapped, never
//! cut), tables as aligned columns or, when too wide, one `header: value` row per cell. Raw
//! HTML is shown as the text it is. Every character printed went through
//! [`super::text::sanitize`]: the source before parsing (escapes, tabs, carriage returns) and
//! each parsed piece again (an entity such as `&#27;` decodes to a control character).
//!
//! The layout is driven by one pass over the parser's events with an explicit stack of
//! containers, so deep nesting costs no recursion; the prefix of a row is built from at most
//! half the width's worth of containers, so a 10,000-deep quote shows as a capped indent and
//! costs the same per row as a shallow one. Rendering is linear in the text.
//!
//! [`MarkdownStream`] renders an answer that arrives in deltas; its module explains how the
//! text is cut into blocks.

mod stream;
mod table;

pub use stream::MarkdownStream;
use table::Table;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::highlight::{highlight, plain_lines};
use super::text::{hard_wrap_with_prefix, sanitize, spans_width, wrap_with_prefix};
use super::theme::Theme;

/// Renders markdown `text` as lines at most `width` columns wide (see [`super::text::wrap`] for
/// widths below 2).
pub fn render(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    render_chunk(text, width, theme, &mut None)
}

/// An ordered list that a later chunk may continue: the next number and the delimiter (`.` or
/// `)`). CommonMark continues a list across blank lines, so a stream that renders the text in
/// chunks carries this from one chunk to the next to keep the numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OrderedCarry {
    next: u64,
    delimiter: char,
}

/// Renders one chunk of a longer text. `carry` is the ordered list the previous chunk ended
/// with, if any; it is replaced by the one this chunk ends with (kept when the chunk is blank).
fn render_chunk(
    text: &str,
    width: u16,
    theme: &Theme,
    carry: &mut Option<OrderedCarry>,
) -> Vec<Line<'static>> {
    let source = sanitize(text);
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut renderer = Renderer::new(theme, width, *carry);
    for (event, range) in Parser::new_ext(&source, options).into_offset_iter() {
        renderer.event(event, source.get(range.start..).unwrap_or(""));
    }
    renderer.finish();
    if renderer.saw_block {
        *carry = renderer.carry_out;
    }
    renderer.out
}

enum Container {
    Quote,
    List {
        next: Option<u64>,
        delimiter: char,
    },
    Item {
        marker: String,
        width: usize,
        /// The marker is shown on the item's first row; until then it is pending.
        pending: bool,
        /// Rows already printed when the item began (an empty item prints its marker alone).
        rows_before: usize,
    },
}

struct Link {
    dest: String,
    text: String,
}

struct Code {
    lang: String,
    text: String,
}

struct Renderer<'t> {
    theme: &'t Theme,
    width: usize,
    out: Vec<Line<'static>>,
    blank_pending: bool,
    containers: Vec<Container>,
    /// Open inline and block styles, each already patched over the one below.
    styles: Vec<Style>,
    /// The current block's text: logical rows (hard breaks split them), before wrapping.
    inline: Vec<Vec<Span<'static>>>,
    links: Vec<Link>,
    code: Option<Code>,
    table: Option<Table>,
    carry_in: Option<OrderedCarry>,
    carry_out: Option<OrderedCarry>,
    saw_block: bool,
}

impl<'t> Renderer<'t> {
    fn new(theme: &'t Theme, width: u16, carry_in: Option<OrderedCarry>) -> Self {
        Renderer {
            theme,
            width: usize::from(width.max(1)),
            out: Vec::new(),
            blank_pending: false,
            containers: Vec::new(),
            styles: Vec::new(),
            inline: Vec::new(),
            links: Vec::new(),
            code: None,
            table: None,
            carry_in,
            carry_out: None,
            saw_block: false,
        }
    }

    /// The style text gets now: every open style patched over the theme's text style. The
    /// stack holds them already combined, so this is O(1) however deep the nesting.
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(self.theme.text)
    }

    fn push_style(&mut self, style: Style) {
        self.styles.push(self.style().patch(style));
    }

    fn is_top_level(&self) -> bool {
        self.containers.is_empty()
    }

    /// `rest` is the source from this event's start, for list delimiters.
    fn event(&mut self, event: Event<'_>, rest: &str) {
        match event {
            Event::Start(tag) => self.start(tag, rest),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some(code) = &mut self.code {
                    code.text.push_str(&text);
                } else {
                    let style = self.style();
                    self.push_text(&text, style);
                }
            }
            Event::Code(text) => {
                let style = self.style().patch(self.theme.code);
                self.push_text(&text, style);
            }
            Event::Html(text) | Event::InlineHtml(text) => {
                let style = self.style();
                self.push_text(&text, style);
            }
            Event::InlineMath(text) | Event::DisplayMath(text) | Event::FootnoteReference(text) => {
                let style = self.style();
                self.push_text(&text, style);
            }
            Event::SoftBreak => {
                let style = self.style();
                self.push_text(" ", style);
            }
            Event::HardBreak => self.inline.push(Vec::new()),
            Event::Rule => {
                self.begin_block();
                let (first, _) = self.prefixes(true);
                let room = self.width.saturating_sub(spans_width(&first)).max(1);
                let mut spans = first;
                spans.push(Span::styled("─".repeat(room), self.theme.dim));
                self.out.push(Line::from(spans));
                self.end_block();
            }
            Event::TaskListMarker(checked) => {
                let mark = if checked { "[x] " } else { "[ ] " };
                self.push_span(Span::styled(mark, self.theme.bullet));
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>, rest: &str) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock => self.begin_block(),
            Tag::Heading { level, .. } => {
                self.begin_block();
                let mut style = self.theme.heading;
                if level == HeadingLevel::H1 {
                    style = style.add_modifier(Modifier::UNDERLINED);
                }
                self.push_style(style);
            }
            Tag::BlockQuote(_) => {
                self.begin_block();
                self.containers.push(Container::Quote);
                self.push_style(self.theme.quote);
            }
            Tag::CodeBlock(kind) => {
                self.begin_block();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                        .next()
                        .unwrap_or("")
                        .to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some(Code {
                    lang,
                    text: String::new(),
                });
            }
            Tag::List(start) => {
                let top = self.is_top_level();
                self.begin_container();
                let delimiter = list_delimiter(rest);
                let mut next = start;
                if top {
                    self.saw_block = true;
                    if let (Some(carry), Some(_)) = (self.carry_in.take(), start) {
                        if carry.delimiter == delimiter {
                            next = Some(carry.next);
                        }
                    }
                }
                self.containers.push(Container::List { next, delimiter });
            }
            Tag::Item => {
                self.begin_container();
                let marker = match self.containers.last_mut() {
                    Some(Container::List {
                        next: Some(n),
                        delimiter,
                    }) => {
                        let marker = format!("{n}{delimiter} ");
                        *n = n.saturating_add(1);
                        marker
                    }
                    _ => "- ".to_owned(),
                };
                let width = super::text::width(&marker);
                self.containers.push(Container::Item {
                    marker,
                    width,
                    pending: true,
                    rows_before: self.out.len(),
                });
            }
            Tag::Table(alignments) => {
                self.begin_block();
                self.table = Some(Table::new(alignments));
            }
            Tag::TableHead => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::TableRow | Tag::TableCell => {}
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.push_style(self.theme.link);
                self.links.push(Link {
                    dest: dest_url.into_string(),
                    text: String::new(),
                });
            }
            // Not enabled in the parser's options.
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::Superscript
            | Tag::Subscript
            | Tag::MetadataBlock(_) => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::HtmlBlock => self.end_block(),
            TagEnd::Heading(_) => {
                self.flush();
                self.styles.pop();
                self.end_block();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.styles.pop();
                self.end_block();
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.emit_code(code);
                }
                self.end_block();
            }
            TagEnd::List(_) => {
                self.flush();
                let list = self.containers.pop();
                if self.is_top_level() {
                    self.carry_out = match list {
                        Some(Container::List {
                            next: Some(next),
                            delimiter,
                        }) => Some(OrderedCarry { next, delimiter }),
                        _ => None,
                    };
                    self.saw_block = true;
                    self.blank_pending = true;
                } else if !matches!(self.containers.last(), Some(Container::Item { .. })) {
                    self.blank_pending = true;
                }
            }
            TagEnd::Item => {
                self.flush();
                if let Some(Container::Item {
                    marker,
                    rows_before,
                    ..
                }) = self.containers.last()
                {
                    if *rows_before == self.out.len() {
                        // An empty item still shows its marker.
                        let marker = Span::styled(marker.trim_end().to_owned(), self.theme.bullet);
                        self.containers.pop();
                        let (first, _) = self.prefixes(true);
                        let mut spans = first;
                        spans.push(marker);
                        self.out.push(Line::from(spans));
                        return;
                    }
                }
                self.containers.pop();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.emit_table(table);
                }
                self.end_block();
            }
            TagEnd::TableHead => {
                self.styles.pop();
                if let Some(table) = &mut self.table {
                    table.end_row(true);
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    table.end_row(false);
                }
            }
            TagEnd::TableCell => {
                let cell = self.take_inline().into_iter().flatten().collect();
                if let Some(table) = &mut self.table {
                    table.push_cell(cell);
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => {
                self.styles.pop();
                if let Some(link) = self.links.pop() {
                    let dest = link.dest.strip_prefix("mailto:").unwrap_or(&link.dest);
                    if !link.dest.is_empty() && link.text != link.dest && link.text != dest {
                        let shown = format!(" ({})", link.dest);
                        self.push_text(&shown, self.theme.dim);
                    }
                }
            }
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::MetadataBlock(_) => {}
        }
    }

    /// Adds text to the current block; line breaks in it (HTML, for one) start new rows.
    fn push_text(&mut self, text: &str, style: Style) {
        let text = sanitize(text);
        for link in &mut self.links {
            link.text.push_str(&text);
        }
        let mut parts = text.split('\n');
        if let Some(first) = parts.next() {
            self.push_span(Span::styled(first.to_owned(), style));
        }
        for part in parts {
            self.inline.push(Vec::new());
            self.push_span(Span::styled(part.to_owned(), style));
        }
    }

    fn push_span(&mut self, span: Span<'static>) {
        match self.inline.last_mut() {
            Some(row) => row.push(span),
            None => self.inline.push(vec![span]),
        }
    }

    fn take_inline(&mut self) -> Vec<Vec<Span<'static>>> {
        std::mem::take(&mut self.inline)
    }

    /// Before a block's first row: what the previous block left, and the blank row between.
    fn begin_block(&mut self) {
        self.flush();
        self.emit_blank();
        if self.is_top_level() {
            self.saw_block = true;
            self.carry_in = None;
        }
    }

    /// Before a container opens: a tight item's text is printed, then the blank row if due
    /// (outside the new container, so it carries no bar or marker).
    fn begin_container(&mut self) {
        self.flush();
        self.emit_blank();
    }

    fn end_block(&mut self) {
        self.flush();
        self.blank_pending = true;
        if self.is_top_level() {
            self.carry_out = None;
        }
    }

    fn emit_blank(&mut self) {
        if self.blank_pending && !self.out.is_empty() {
            let (_, rest) = self.prefixes(false);
            self.out.push(trim_end(rest));
        }
        self.blank_pending = false;
    }

    /// Prints the current block's text, word-wrapped behind the containers' prefixes.
    fn flush(&mut self) {
        let mut rows = self.take_inline();
        // A block's final line break (HTML blocks end with one) is not an empty row.
        while rows
            .last()
            .is_some_and(|row| row.iter().all(|span| span.content.is_empty()))
        {
            rows.pop();
        }
        if rows.is_empty() {
            return;
        }
        self.emit_blank();
        let (first, rest) = self.prefixes(true);
        for (i, spans) in rows.into_iter().enumerate() {
            let prefix = if i == 0 { first.clone() } else { rest.clone() };
            self.out.extend(wrap_with_prefix(
                Line::from(spans),
                self.width as u16,
                prefix,
                rest.clone(),
            ));
        }
    }

    /// The prefixes for a block's first row and for the rows after it. With `consume`, pending
    /// list markers are used up. Containers past half the width are left out.
    fn prefixes(&mut self, consume: bool) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let cap = self.width / 2;
        let mut used = 0;
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for container in &mut self.containers {
            match container {
                Container::List { .. } => {}
                Container::Quote => {
                    if used + 2 > cap {
                        break;
                    }
                    used += 2;
                    first.push(Span::styled("│ ", self.theme.quote));
                    rest.push(Span::styled("│ ", self.theme.quote));
                }
                Container::Item {
                    marker,
                    width,
                    pending,
                    ..
                } => {
                    if used + *width > cap {
                        break;
                    }
                    used += *width;
                    let indent = " ".repeat(*width);
                    if *pending {
                        first.push(Span::styled(marker.clone(), self.theme.bullet));
                        if consume {
                            *pending = false;
                        }
                    } else {
                        first.push(Span::raw(indent.clone()));
                    }
                    rest.push(Span::raw(indent));
                }
            }
        }
        (first, rest)
    }

    fn emit_code(&mut self, code: Code) {
        self.emit_blank();
        let (first, rest) = self.prefixes(true);
        let fence = |text: String| Line::from(Span::styled(text, self.theme.code_fence));
        let width = self.width as u16;
        let mut rows = hard_wrap_with_prefix(
            fence(format!("```{}", sanitize(&code.lang))),
            width,
            first,
            rest.clone(),
        );
        if !code.text.is_empty() {
            let lines = highlight(&code.text, &code.lang, self.theme)
                .unwrap_or_else(|| plain_lines(&code.text, self.theme));
            for line in lines {
                rows.extend(hard_wrap_with_prefix(
                    line,
                    width,
                    rest.clone(),
                    rest.clone(),
                ));
            }
        }
        rows.extend(hard_wrap_with_prefix(
            fence("```".to_owned()),
            width,
            rest.clone(),
            rest,
        ));
        self.out.extend(rows);
    }

    fn emit_table(&mut self, table: Table) {
        self.emit_blank();
        let (first, rest) = self.prefixes(true);
        let rows = table.layout(self.width as u16, first, rest, self.theme);
        self.out.extend(rows);
    }

    fn finish(&mut self) {
        if let Some(code) = self.code.take() {
            self.emit_code(code);
        }
        self.flush();
    }
}

/// The delimiter of an ordered list whose source starts at `rest` (`1.` or `1)`).
fn list_delimiter(rest: &str) -> char {
    rest.trim_start_matches([' ', '\t'])
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .chars()
        .next()
        .filter(|c| *c == ')')
        .unwrap_or('.')
}

/// A row of `spans` without trailing spaces (a blank row inside a quote is just its bars).
fn trim_end(spans: Vec<Span<'static>>) -> Line<'static> {
    trim_end_line(Line::from(spans))
}

fn trim_end_line(mut line: Line<'static>) -> Line<'static> {
    while let Some(last) = line.spans.last_mut() {
        let trimmed = last.content.trim_end_matches(' ');
        if trimmed.is_empty() {
            line.spans.pop();
        } else {
            if trimmed.len() != last.content.len() {
                last.content = trimmed.to_owned().into();
            }
            break;
        }
    }
    line
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
