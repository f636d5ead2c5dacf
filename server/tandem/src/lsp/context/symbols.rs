//! The definition around a selection, found with tree-sitter.
//!
//! A prompt about "this" means the selection, but the model needs the function, method or class
//! the selection sits in to act without reading the file first. The document is parsed afresh
//! for each prompt (prompts are rare next to keystrokes, and a fresh parse needs no edit
//! bookkeeping shared with the document store); the parser itself is kept per thread. From the
//! smallest node covering the selection we walk up to the root and keep every named definition
//! [`rules`](super::rules) recognises: the first is the symbol, the rest its outer chain.
//!
//! Languages without a grammar get [`SymbolSearch::NoParser`]: the context then shows the lines
//! around the selection and says that no symbol could be looked for, rather than guessing one
//! from indentation (a wrong symbol misleads the model more than none).

use std::cell::RefCell;
use std::fmt;
use std::ops::{ControlFlow, Range};
use std::time::{Duration, Instant};

use tree_sitter::{ParseOptions, ParseState, Parser};

use super::languages::Language;
use super::lines::{clamp_range, trim_range, LineIndex};
use super::rules::{classify, one_line, Def, Grammar};

/// Documents larger than this are not parsed (the context falls back to nearby lines).
pub const MAX_PARSE_BYTES: usize = 16 * 1024 * 1024;

/// A parse that takes longer than this is abandoned; 10k lines take a few milliseconds.
pub const PARSE_BUDGET: Duration = Duration::from_millis(500);

/// Longest signature kept, in characters.
const MAX_SIGNATURE_CHARS: usize = 300;

/// What kind of definition a [`Symbol`] is, across languages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    /// A free function (or a function bound to a name, like `const f = () => …`).
    Function,
    /// A function inside a class, impl, trait or interface, or a Go method.
    Method,
    /// A Java constructor.
    Constructor,
    /// A class (Python, JS/TS, C++, Java).
    Class,
    /// A struct (Rust, Go, C, C++).
    Struct,
    /// A union (Rust, C, C++).
    Union,
    /// An enum.
    Enum,
    /// An interface (Go, TypeScript, Java).
    Interface,
    /// A Rust trait.
    Trait,
    /// A Rust `impl` block, named `Type` or `Trait for Type`.
    Impl,
    /// A module (Rust `mod`, TypeScript `declare module`).
    Module,
    /// A namespace (C++, TypeScript).
    Namespace,
    /// A named type that is none of the above (Go `type X int`, TypeScript `type X = …`).
    Type,
    /// A Java record.
    Record,
    /// A Rust `macro_rules!`.
    Macro,
}

impl SymbolKind {
    /// The lower-case word for this kind (`function`, `impl`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Constructor => "constructor",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Union => "union",
            SymbolKind::Enum => "enum",
            SymbolKind::Interface => "interface",
            SymbolKind::Trait => "trait",
            SymbolKind::Impl => "impl",
            SymbolKind::Module => "module",
            SymbolKind::Namespace => "namespace",
            SymbolKind::Type => "type",
            SymbolKind::Record => "record",
            SymbolKind::Macro => "macro",
        }
    }
}

impl fmt::Display for SymbolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A definition's kind and name, as in an outer chain (`impl Shape for Rect`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolName {
    /// What it is.
    pub kind: SymbolKind,
    /// Its name as written (`Shape for Rect`, `Box::get`, `prototype.run`).
    pub name: String,
}

impl fmt::Display for SymbolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind, self.name)
    }
}

/// The innermost named definition around a selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// What it is.
    pub kind: SymbolKind,
    /// Its name.
    pub name: String,
    /// Its bytes in the document, decorators, `export` and `template <…>` included.
    pub byte_range: Range<usize>,
    /// Its first line, 0-based.
    pub start_line: usize,
    /// Its last line, 0-based (inclusive).
    pub end_line: usize,
    /// Its header up to the body, on one line (`pub fn area(&self) -> f64`).
    pub signature_line: String,
    /// The definitions around it, outermost first.
    pub outer_chain: Vec<SymbolName>,
}

impl Symbol {
    /// The chain down to this symbol: `impl Shape for Rect > method area`.
    pub fn path(&self) -> String {
        let own = SymbolName {
            kind: self.kind,
            name: self.name.clone(),
        };
        let mut parts: Vec<String> = self.outer_chain.iter().map(ToString::to_string).collect();
        parts.push(own.to_string());
        parts.join(" > ")
    }
}

/// Why a document with a grammar was not parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotParsed {
    /// Larger than [`MAX_PARSE_BYTES`].
    TooLarge {
        /// The document's size.
        bytes: usize,
    },
    /// The parse ran past [`PARSE_BUDGET`].
    TimedOut,
    /// The grammar was refused by the tree-sitter runtime (an ABI mismatch; a build problem).
    GrammarRejected,
}

impl fmt::Display for NotParsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotParsed::TooLarge { bytes } => write!(
                f,
                "the file is too large to parse: {bytes} bytes, the limit is {MAX_PARSE_BYTES}"
            ),
            NotParsed::TimedOut => write!(
                f,
                "parsing took longer than {} ms",
                PARSE_BUDGET.as_millis()
            ),
            NotParsed::GrammarRejected => f.write_str("the grammar could not be loaded"),
        }
    }
}

/// The outcome of looking for the definition around a selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SymbolSearch {
    /// The innermost named definition containing the selection.
    Found(Symbol),
    /// Parsed, but the selection is in no named definition.
    TopLevel,
    /// No grammar for the language.
    NoParser,
    /// A grammar exists but the document was not parsed.
    NotParsed(NotParsed),
}

impl SymbolSearch {
    /// The symbol, if one was found.
    pub fn found(self) -> Option<Symbol> {
        match self {
            SymbolSearch::Found(symbol) => Some(symbol),
            _ => None,
        }
    }
}

/// The innermost named definition of `text` containing `byte_range` (an empty range is a
/// cursor), or `None` at top level, for a language without a grammar, or for a document too
/// large or too slow to parse. See [`find_symbol`] for which of these it was.
#[cfg(test)]
pub fn enclosing_symbol(
    text: &str,
    language: &Language,
    byte_range: Range<usize>,
) -> Option<Symbol> {
    find_symbol(text, language, byte_range).found()
}

/// The innermost named definition containing `byte_range`, or why there is none.
pub fn find_symbol(text: &str, language: &Language, byte_range: Range<usize>) -> SymbolSearch {
    find_symbol_indexed(text, &LineIndex::new(text), language, byte_range)
}

/// [`find_symbol`] with a line index the caller already built for `text`.
pub(crate) fn find_symbol_indexed(
    text: &str,
    lines: &LineIndex,
    language: &Language,
    byte_range: Range<usize>,
) -> SymbolSearch {
    let Some(grammar) = Grammar::of(language) else {
        return SymbolSearch::NoParser;
    };
    if text.len() > MAX_PARSE_BYTES {
        return SymbolSearch::NotParsed(NotParsed::TooLarge { bytes: text.len() });
    }
    let tree = match parse(grammar, text) {
        Ok(tree) => tree,
        Err(reason) => return SymbolSearch::NotParsed(reason),
    };
    let range = trim_range(text, clamp_range(text, byte_range));
    let src = text.as_bytes();
    let Some(mut node) = tree
        .root_node()
        .descendant_for_byte_range(range.start, range.end)
    else {
        return SymbolSearch::TopLevel;
    };
    let mut defs = Vec::new();
    loop {
        if let Some(def) = classify(grammar, node, src) {
            let same_span = defs
                .last()
                .is_some_and(|last: &Def| last.span.id() == def.span.id());
            if !same_span {
                defs.push(def);
            }
        }
        match node.parent() {
            Some(parent) => node = parent,
            None => break,
        }
    }
    let mut defs = defs.into_iter();
    let Some(inner) = defs.next() else {
        return SymbolSearch::TopLevel;
    };
    let byte_range = inner.span.byte_range();
    let header_end = inner
        .body
        .map(|body| body.start_byte())
        .filter(|&start| start > byte_range.start);
    let header_end = header_end.unwrap_or_else(|| {
        let first_line = lines.line_range(text, lines.line_of(byte_range.start));
        first_line.end.max(byte_range.start)
    });
    // Node bounds fall on characters; `get` keeps a surprise from becoming a panic.
    let header = text.get(byte_range.start..header_end).unwrap_or_default();
    let mut outer_chain: Vec<SymbolName> = defs
        .map(|def| SymbolName {
            kind: def.kind,
            name: def.name,
        })
        .collect();
    outer_chain.reverse();
    let start_line = lines.line_of(byte_range.start);
    SymbolSearch::Found(Symbol {
        kind: inner.kind,
        name: inner.name,
        start_line,
        end_line: lines
            .line_of(byte_range.end.saturating_sub(1))
            .max(start_line),
        signature_line: one_line(header, MAX_SIGNATURE_CHARS),
        byte_range,
        outer_chain,
    })
}

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// Parses `text` with this thread's parser, within [`PARSE_BUDGET`].
fn parse(grammar: Grammar, text: &str) -> Result<tree_sitter::Tree, NotParsed> {
    PARSER.with(|parser| {
        let mut parser = parser.borrow_mut();
        parser
            .set_language(&grammar.ts_language())
            .map_err(|_| NotParsed::GrammarRejected)?;
        let deadline = Instant::now() + PARSE_BUDGET;
        let mut progress = |_: &ParseState| {
            if Instant::now() >= deadline {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let options = ParseOptions::new().progress_callback(&mut progress);
        let bytes = text.as_bytes();
        let mut read = |offset: usize, _| bytes.get(offset..).unwrap_or_default();
        let tree = parser.parse_with_options(&mut read, None, Some(options));
        match tree {
            Some(tree) => Ok(tree),
            None => {
                // An abandoned parse would otherwise resume on the next call.
                parser.reset();
                Err(NotParsed::TimedOut)
            }
        }
    })
}
