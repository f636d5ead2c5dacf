//! Code blocks highlighted with the tree-sitter grammars Tandem links.
//!
//! A fence's language name picks a grammar; its highlight query is the one the grammar crate
//! ships, combined as the tree-sitter CLI combines them (TypeScript's query follows
//! JavaScript's, TSX adds the JSX patterns, C++'s follows C's). Each query is compiled once
//! per process. Capture names (`keyword`, `string`, `function.method`, …) map to the theme's
//! `syntax_*` styles over [`Theme::code_block`]; operators, punctuation and plain variables
//! keep the base style. When several patterns capture one node the first wins, and a node
//! inside a captured node is drawn in its own style patched over the outer one — the rules of
//! tree-sitter-highlight. Language injections (regex, SQL in strings) are left out.
//!
//! Why not tree-sitter-highlight itself: it cannot be stopped in the middle of a query step,
//! and on hostile input (200,000 unmatched `(` in Rust) query matching is quadratic — minutes
//! for one code block. Here the parser and the query cursor both run under
//! [`HIGHLIGHT_BUDGET`] through their progress callbacks, and the spans come from one sorted
//! sweep over the captures (O(k log k) for k captures, however deeply they nest).
//!
//! The code is sanitized before it is parsed, so token text is safe to print. Code over
//! [`MAX_HIGHLIGHT_BYTES`], or that the highlighter fails on or runs out of time for, comes
//! back as plain lines.

use std::cell::{Cell, RefCell};
use std::ops::ControlFlow;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use tree_sitter::{
    ParseOptions, ParseState, Parser, Query, QueryCursor, QueryCursorOptions, QueryCursorState,
    StreamingIterator,
};

use super::text::sanitize;
use super::theme::Theme;
use crate::lsp::context::{Grammar, Language};

/// Larger code blocks are shown plain: highlighting them would stall a frame.
pub const MAX_HIGHLIGHT_BYTES: usize = 256 * 1024;

/// The most time one code block may take to parse and query; past it the block is plain.
pub const HIGHLIGHT_BUDGET: Duration = Duration::from_millis(200);

/// A language's compiled query and what each of its captures is drawn as.
struct Highlighting {
    language: tree_sitter::Language,
    query: Query,
    tokens: Vec<Option<Token>>,
}

/// The grammar for a fence's language name: its first word, any case, read as an editor's
/// language id, plus the names only fences use (`node`, header extensions).
fn grammar_for_fence(name: &str) -> Option<Grammar> {
    let name = name
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let language = match name.as_str() {
        "node" => Language::JavaScript,
        "h" => Language::C,
        "hpp" | "hh" | "hxx" => Language::Cpp,
        other => Language::from_language_id(other),
    };
    Grammar::of(&language)
}

/// `grammar`'s highlight query, as the tree-sitter CLI combines the crates' queries.
fn highlight_query(grammar: Grammar) -> String {
    let js = tree_sitter_javascript::HIGHLIGHT_QUERY;
    let jsx = tree_sitter_javascript::JSX_HIGHLIGHT_QUERY;
    let ts = tree_sitter_typescript::HIGHLIGHTS_QUERY;
    let c = tree_sitter_c::HIGHLIGHT_QUERY;
    match grammar {
        Grammar::Rust => tree_sitter_rust::HIGHLIGHTS_QUERY.to_owned(),
        Grammar::Python => tree_sitter_python::HIGHLIGHTS_QUERY.to_owned(),
        Grammar::JavaScript => format!("{js}\n{jsx}"),
        Grammar::TypeScript => format!("{js}\n{ts}"),
        Grammar::Tsx => format!("{js}\n{jsx}\n{ts}"),
        Grammar::Go => tree_sitter_go::HIGHLIGHTS_QUERY.to_owned(),
        Grammar::C => c.to_owned(),
        Grammar::Cpp => format!("{c}\n{}", tree_sitter_cpp::HIGHLIGHT_QUERY),
        Grammar::Java => tree_sitter_java::HIGHLIGHTS_QUERY.to_owned(),
    }
}

fn build(grammar: Grammar) -> Option<Highlighting> {
    let language = grammar.ts_language();
    let query = Query::new(&language, &highlight_query(grammar)).ok()?;
    let tokens = query
        .capture_names()
        .iter()
        .map(|name| token_for(name))
        .collect();
    Some(Highlighting {
        language,
        query,
        tokens,
    })
}

/// `grammar`'s compiled query, built on first use; `None` if it did not compile.
fn highlighting(grammar: Grammar) -> Option<&'static Highlighting> {
    static CONFIGS: [OnceLock<Option<Highlighting>>; Grammar::COUNT] =
        [const { OnceLock::new() }; Grammar::COUNT];
    CONFIGS[grammar as usize]
        .get_or_init(|| build(grammar))
        .as_ref()
}

/// What a token is drawn as.
#[derive(Debug, Clone, Copy)]
enum Token {
    Keyword,
    String,
    Comment,
    Function,
    Type,
    Number,
    Constant,
    Property,
    Attribute,
}

/// The capture names recognised. A capture takes the entry with the most dot-separated parts
/// that all appear in its own name (`function.method` → `function`, `variable.builtin` →
/// `variable.builtin`, `variable` → nothing).
const CAPTURES: [(&str, Token); 16] = [
    ("keyword", Token::Keyword),
    ("string", Token::String),
    ("escape", Token::Constant),
    ("comment", Token::Comment),
    ("function", Token::Function),
    ("constructor", Token::Type),
    ("type", Token::Type),
    ("tag", Token::Type),
    ("number", Token::Number),
    ("constant", Token::Constant),
    ("boolean", Token::Constant),
    ("variable.builtin", Token::Constant),
    ("property", Token::Property),
    ("attribute", Token::Attribute),
    ("label", Token::Attribute),
    ("embedded", Token::String),
];

/// What a capture named `name` is drawn as.
fn token_for(name: &str) -> Option<Token> {
    let parts: Vec<&str> = name.split('.').collect();
    CAPTURES
        .iter()
        .filter(|(known, _)| known.split('.').all(|part| parts.contains(&part)))
        .max_by_key(|(known, _)| known.split('.').count())
        .map(|(_, token)| *token)
}

impl Token {
    fn style(self, theme: &Theme) -> Style {
        match self {
            Token::Keyword => theme.syntax_keyword,
            Token::String => theme.syntax_string,
            Token::Comment => theme.syntax_comment,
            Token::Function => theme.syntax_function,
            Token::Type => theme.syntax_type,
            Token::Number => theme.syntax_number,
            Token::Constant => theme.syntax_constant,
            Token::Property => theme.syntax_property,
            Token::Attribute => theme.syntax_attribute,
        }
    }
}

/// Highlights `code` as `lang`: one line per source line (no wrapping), tokens styled over
/// [`Theme::code_block`]. `None` when the language is unknown; plain lines when the code is
/// too large or the highlighter fails.
pub fn highlight(code: &str, lang: &str, theme: &Theme) -> Option<Vec<Line<'static>>> {
    let grammar = grammar_for_fence(lang)?;
    let code = sanitize(code);
    let code = code.strip_suffix('\n').unwrap_or(&code);
    if code.len() > MAX_HIGHLIGHT_BYTES {
        return Some(split_plain(code, theme));
    }
    let Some(highlighting) = highlighting(grammar) else {
        return Some(split_plain(code, theme));
    };
    Some(styled_lines(code, highlighting, theme).unwrap_or_else(|| split_plain(code, theme)))
}

/// `code` as lines in the code block's base style, sanitized; a final line break ends the last
/// line rather than starting an empty one.
pub fn plain_lines(code: &str, theme: &Theme) -> Vec<Line<'static>> {
    let code = sanitize(code);
    split_plain(code.strip_suffix('\n').unwrap_or(&code), theme)
}

/// Sanitized `code` split into lines, without its final line break.
fn split_plain(code: &str, theme: &Theme) -> Vec<Line<'static>> {
    code.split('\n')
        .map(|line| Line::from(Span::styled(line.to_owned(), theme.code_block)))
        .collect()
}

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// `code` in styled lines, or `None` when parsing or querying failed or ran out of time.
fn styled_lines(
    code: &str,
    highlighting: &Highlighting,
    theme: &Theme,
) -> Option<Vec<Line<'static>>> {
    let deadline = Instant::now() + HIGHLIGHT_BUDGET;
    let tree = PARSER.with(|parser| {
        let mut parser = parser.try_borrow_mut().ok()?;
        parser.set_language(&highlighting.language).ok()?;
        let mut progress = |_: &ParseState| {
            if Instant::now() >= deadline {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let bytes = code.as_bytes();
        let mut read = |offset: usize, _| bytes.get(offset..).unwrap_or_default();
        parser.parse_with_options(
            &mut read,
            None,
            Some(ParseOptions::new().progress_callback(&mut progress)),
        )
    })?;

    // Every capture that draws something: (start, end, style), in the order found.
    let timed_out = Cell::new(false);
    let mut progress = |_: &QueryCursorState| {
        if Instant::now() >= deadline {
            timed_out.set(true);
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let mut cursor = QueryCursor::new();
    let mut captures = cursor.captures_with_options(
        &highlighting.query,
        tree.root_node(),
        code.as_bytes(),
        QueryCursorOptions::new().progress_callback(&mut progress),
    );
    let mut marks: Vec<(usize, usize, Style)> = Vec::new();
    while let Some((found, index)) = captures.next() {
        let Some(capture) = found.captures().get(*index) else {
            continue;
        };
        let token = highlighting
            .tokens
            .get(capture.index as usize)
            .copied()
            .flatten();
        if let Some(token) = token {
            let node = capture.node;
            marks.push((node.start_byte(), node.end_byte(), token.style(theme)));
        }
    }
    drop(captures);
    if timed_out.get() {
        return None;
    }
    Some(paint(code, marks, theme.code_block))
}

/// Splits `code` into lines of spans: each mark's range in its style, patched over the style
/// of the mark it lies in, the rest in `base`. Marks that cross an enclosing mark's end are
/// cut at that end.
fn paint(code: &str, mut marks: Vec<(usize, usize, Style)>, base: Style) -> Vec<Line<'static>> {
    // Outer marks before the inner ones that start at the same byte. The sort is stable, so of
    // several captures of one node the first found (the first pattern) is kept.
    marks.sort_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)));
    marks.dedup_by_key(|&mut (start, end, _)| (start, end));
    let mut lines = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut emit = |from: usize, to: usize, style: Style| {
        if to <= from {
            return;
        }
        let Some(text) = code.get(from..to) else {
            return;
        };
        let mut parts = text.split('\n');
        if let Some(first) = parts.next() {
            push_span(&mut current, first, style);
        }
        for part in parts {
            lines.push(Line::from(std::mem::take(&mut current)));
            push_span(&mut current, part, style);
        }
    };
    let mut at = 0usize;
    let mut open: Vec<(usize, Style)> = Vec::new();
    for (start, end, style) in marks {
        let start = start.max(at);
        while let Some(&(open_end, open_style)) = open.last() {
            if open_end > start {
                break;
            }
            emit(at, open_end, open_style);
            at = at.max(open_end);
            open.pop();
        }
        let (outer_end, outer_style) = open.last().copied().unwrap_or((code.len(), base));
        emit(at, start, outer_style);
        at = at.max(start);
        let end = end.min(outer_end);
        if end > start {
            open.push((end, outer_style.patch(style)));
        }
    }
    while let Some((open_end, open_style)) = open.pop() {
        emit(at, open_end, open_style);
        at = at.max(open_end);
    }
    emit(at, code.len(), base);
    lines.push(Line::from(current));
    lines
}

fn push_span(spans: &mut Vec<Span<'static>>, text: &str, style: Style) {
    if !text.is_empty() {
        spans.push(Span::styled(text.to_owned(), style));
    }
}

#[cfg(test)]
#[path = "highlight_tests.rs"]
mod tests;
