//! Code blocks highlighted with the tree-sitter grammars Tandem links.
//!
//! A fence's language name picks a grammar; its highlight query is the one the grammar crate
//! ships, combined as the tree-sitter CLI combines them (TypeScript's query follows
//! JavaScript's, TSX adds the JSX patterns, C++'s follows C's). Each configuration is compiled
//! once per process. Capture names (`keyword`, `string`, `function.method`, …) map to the
//! theme's `syntax_*` styles over [`Theme::code_block`]; operators, punctuation and plain
//! variables keep the base style. Language injections (regex, SQL in strings) are left out.
//!
//! The code is sanitized before it is parsed, so token text is safe to print. Code over
//! [`MAX_HIGHLIGHT_BYTES`], or that the highlighter fails on, comes back as plain lines.

use std::cell::RefCell;
use std::sync::OnceLock;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use tree_sitter_highlight::{HighlightConfiguration, HighlightEvent, Highlighter};

use super::text::sanitize;
use super::theme::Theme;

/// Larger code blocks are shown plain: highlighting them would stall a frame.
pub const MAX_HIGHLIGHT_BYTES: usize = 256 * 1024;

/// The languages that have a grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    C,
    Cpp,
    Java,
}

const LANGS: usize = 9;

impl Lang {
    /// The grammar for a fence's language name (its first word, any case).
    fn from_fence(name: &str) -> Option<Lang> {
        let name = name
            .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        Some(match name.as_str() {
            "rust" | "rs" => Lang::Rust,
            "python" | "py" | "python3" => Lang::Python,
            "javascript" | "js" | "jsx" | "mjs" | "cjs" | "node" => Lang::JavaScript,
            "typescript" | "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "go" | "golang" => Lang::Go,
            "c" | "h" => Lang::C,
            "cpp" | "c++" | "cc" | "cxx" | "hpp" | "hh" | "hxx" => Lang::Cpp,
            "java" => Lang::Java,
            _ => return None,
        })
    }

    fn index(self) -> usize {
        self as usize
    }

    fn build(self) -> Option<HighlightConfiguration> {
        let js = tree_sitter_javascript::HIGHLIGHT_QUERY;
        let jsx = tree_sitter_javascript::JSX_HIGHLIGHT_QUERY;
        let ts = tree_sitter_typescript::HIGHLIGHTS_QUERY;
        let c = tree_sitter_c::HIGHLIGHT_QUERY;
        let (language, query): (tree_sitter::Language, String) = match self {
            Lang::Rust => (
                tree_sitter_rust::LANGUAGE.into(),
                tree_sitter_rust::HIGHLIGHTS_QUERY.to_owned(),
            ),
            Lang::Python => (
                tree_sitter_python::LANGUAGE.into(),
                tree_sitter_python::HIGHLIGHTS_QUERY.to_owned(),
            ),
            Lang::JavaScript => (
                tree_sitter_javascript::LANGUAGE.into(),
                format!("{js}\n{jsx}"),
            ),
            Lang::TypeScript => (
                tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
                format!("{js}\n{ts}"),
            ),
            Lang::Tsx => (
                tree_sitter_typescript::LANGUAGE_TSX.into(),
                format!("{js}\n{jsx}\n{ts}"),
            ),
            Lang::Go => (
                tree_sitter_go::LANGUAGE.into(),
                tree_sitter_go::HIGHLIGHTS_QUERY.to_owned(),
            ),
            Lang::C => (tree_sitter_c::LANGUAGE.into(), c.to_owned()),
            Lang::Cpp => (
                tree_sitter_cpp::LANGUAGE.into(),
                format!("{c}\n{}", tree_sitter_cpp::HIGHLIGHT_QUERY),
            ),
            Lang::Java => (
                tree_sitter_java::LANGUAGE.into(),
                tree_sitter_java::HIGHLIGHTS_QUERY.to_owned(),
            ),
        };
        let mut config =
            HighlightConfiguration::new(language, format!("{self:?}"), &query, "", "").ok()?;
        config.configure(&CAPTURES.map(|(name, _)| name));
        Some(config)
    }

    /// The compiled configuration, built on first use; `None` if the query did not compile.
    fn config(self) -> Option<&'static HighlightConfiguration> {
        static CONFIGS: [OnceLock<Option<HighlightConfiguration>>; LANGS] =
            [const { OnceLock::new() }; LANGS];
        CONFIGS[self.index()].get_or_init(|| self.build()).as_ref()
    }
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

/// The capture names recognised, most general first; tree-sitter-highlight picks the longest
/// match for each capture (`function.method` → `function`, `type.builtin` → `type`).
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

/// Whether `lang` (a fence's info string) names a language [`highlight`] knows.
pub fn is_known(lang: &str) -> bool {
    Lang::from_fence(lang).is_some()
}

/// Highlights `code` as `lang`: one line per source line (no wrapping), tokens styled over
/// [`Theme::code_block`]. `None` when the language is unknown; plain lines when the code is
/// too large or the highlighter fails.
pub fn highlight(code: &str, lang: &str, theme: &Theme) -> Option<Vec<Line<'static>>> {
    let lang = Lang::from_fence(lang)?;
    let code = sanitize(code);
    let code = code.strip_suffix('\n').unwrap_or(&code);
    if code.len() > MAX_HIGHLIGHT_BYTES {
        return Some(split_plain(code, theme));
    }
    let Some(config) = lang.config() else {
        return Some(split_plain(code, theme));
    };
    Some(styled_lines(code, config, theme).unwrap_or_else(|| split_plain(code, theme)))
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
    static HIGHLIGHTER: RefCell<Highlighter> = RefCell::new(Highlighter::new());
}

fn styled_lines(
    code: &str,
    config: &HighlightConfiguration,
    theme: &Theme,
) -> Option<Vec<Line<'static>>> {
    HIGHLIGHTER.with(|highlighter| {
        let mut highlighter = highlighter.try_borrow_mut().ok()?;
        let events = highlighter
            .highlight(config, code.as_bytes(), None, None, |_| None)
            .ok()?;
        let mut lines = Vec::new();
        let mut current: Vec<Span<'static>> = Vec::new();
        let mut stack: Vec<Style> = Vec::new();
        for event in events {
            match event.ok()? {
                HighlightEvent::HighlightStart(h) => {
                    let token = CAPTURES.get(h.0).map(|(_, t)| t.style(theme));
                    let below = stack.last().copied().unwrap_or(theme.code_block);
                    stack.push(token.map_or(below, |s| below.patch(s)));
                }
                HighlightEvent::HighlightEnd => {
                    stack.pop();
                }
                HighlightEvent::Source { start, end } => {
                    let style = stack.last().copied().unwrap_or(theme.code_block);
                    let text = code.get(start..end)?;
                    let mut parts = text.split('\n');
                    if let Some(first) = parts.next() {
                        push_span(&mut current, first, style);
                    }
                    for part in parts {
                        lines.push(Line::from(std::mem::take(&mut current)));
                        push_span(&mut current, part, style);
                    }
                }
            }
        }
        lines.push(Line::from(current));
        Some(lines)
    })
}

fn push_span(spans: &mut Vec<Span<'static>>, text: &str, style: Style) {
    if !text.is_empty() {
        spans.push(Span::styled(text.to_owned(), style));
    }
}

#[cfg(test)]
#[path = "highlight_tests.rs"]
mod tests;
