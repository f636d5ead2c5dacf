//! Which tree-sitter nodes are definitions, per grammar, and what they are called.
//!
//! One table of node kinds per grammar family (Rust; Python; JavaScript, TypeScript and TSX;
//! Go; C and C++; Java), read from each grammar's `node-types.json`. Two things the grammars do
//! not say directly are decided here:
//! - *wrappers*: a Python decorator, a JS `export`, a `const f = () => …` declaration, a C++
//!   `template <…>` or a Go `type (…)` with one spec hold a definition without being one. The
//!   symbol's span is the outermost wrapper, so its text and signature start at `@decorator`,
//!   `export` or `template`, and a cursor on the wrapper's own line still finds the definition.
//! - *methods*: a function whose definition sits in a class, impl or trait body.
//!
//! Anonymous things (callbacks, lambdas, anonymous namespaces and structs) are not definitions:
//! the symbol is the innermost *named* definition.

use tree_sitter::Node;

use super::languages::Language;
use super::symbols::SymbolKind;

/// A grammar Tandem ships, one per supported [`Language`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grammar {
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

// `COUNT` must follow the last variant.
const _: () = assert!(Grammar::Java as usize + 1 == Grammar::COUNT);

impl Grammar {
    /// How many grammars there are (the variants are numbered from 0).
    pub(crate) const COUNT: usize = 9;

    /// The grammar for `language`, if Tandem has one.
    pub(crate) fn of(language: &Language) -> Option<Grammar> {
        Some(match language {
            Language::Rust => Grammar::Rust,
            Language::Python => Grammar::Python,
            Language::JavaScript => Grammar::JavaScript,
            Language::TypeScript => Grammar::TypeScript,
            Language::Tsx => Grammar::Tsx,
            Language::Go => Grammar::Go,
            Language::C => Grammar::C,
            Language::Cpp => Grammar::Cpp,
            Language::Java => Grammar::Java,
            Language::Other(_) => return None,
        })
    }

    /// The compiled grammar to hand the parser.
    pub(crate) fn ts_language(self) -> tree_sitter::Language {
        match self {
            Grammar::Rust => tree_sitter_rust::LANGUAGE.into(),
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Grammar::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Grammar::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Grammar::Go => tree_sitter_go::LANGUAGE.into(),
            Grammar::C => tree_sitter_c::LANGUAGE.into(),
            Grammar::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Grammar::Java => tree_sitter_java::LANGUAGE.into(),
        }
    }

    fn is_js_family(self) -> bool {
        matches!(
            self,
            Grammar::JavaScript | Grammar::TypeScript | Grammar::Tsx
        )
    }
}

/// A definition found at a node.
#[derive(Debug, Clone)]
pub(crate) struct Def<'t> {
    pub(crate) kind: SymbolKind,
    pub(crate) name: String,
    /// The outermost wrapper (or the definition itself): the symbol's text.
    pub(crate) span: Node<'t>,
    /// Where the body starts, to end the signature; `None` for bodiless definitions.
    pub(crate) body: Option<Node<'t>>,
}

/// The definition `node` is, or wraps; `None` if it is neither.
pub(crate) fn classify<'t>(grammar: Grammar, node: Node<'t>, src: &[u8]) -> Option<Def<'t>> {
    let mut core = node;
    while let Some(inner) = unwrap(grammar, core) {
        core = inner;
    }
    let mut span = core;
    while let Some(parent) = span.parent() {
        if unwrap(grammar, parent).is_some_and(|inner| inner.id() == span.id()) {
            span = parent;
        } else {
            break;
        }
    }
    let (kind, name, body) = definition(grammar, core, span, src)?;
    let name = one_line(&name, 120);
    if name.is_empty() {
        return None;
    }
    Some(Def {
        kind,
        name,
        span,
        body,
    })
}

/// The one definition a wrapper node holds.
fn unwrap<'t>(grammar: Grammar, node: Node<'t>) -> Option<Node<'t>> {
    let inner = match (grammar, node.kind()) {
        (Grammar::Python, "decorated_definition") => node.child_by_field_name("definition")?,
        (g, "export_statement") if g.is_js_family() => node
            .child_by_field_name("declaration")
            .or_else(|| node.child_by_field_name("value"))?,
        (g, "lexical_declaration" | "variable_declaration" | "ambient_declaration")
        | (g, "expression_statement")
            if g.is_js_family() =>
        {
            sole_named_child(node)?
        }
        (Grammar::Cpp, "template_declaration") => last_named_child(node)?,
        (Grammar::C | Grammar::Cpp, "type_definition") => node.child_by_field_name("type")?,
        (Grammar::Go, "type_declaration") => sole_named_child(node)?,
        _ => return None,
    };
    Some(inner)
}

/// Kind, name and body of `core` if it is a definition (`span` is its outermost wrapper).
fn definition<'t>(
    grammar: Grammar,
    core: Node<'t>,
    span: Node<'t>,
    src: &[u8],
) -> Option<(SymbolKind, String, Option<Node<'t>>)> {
    let body = core.child_by_field_name("body");
    let named = |kind: SymbolKind| Some((kind, field_text(core, "name", src)?, body));
    match grammar {
        Grammar::Rust => match core.kind() {
            "function_item" | "function_signature_item" => {
                let in_impl = span
                    .parent()
                    .and_then(|list| list.parent())
                    .is_some_and(|owner| matches!(owner.kind(), "impl_item" | "trait_item"));
                named(if in_impl {
                    SymbolKind::Method
                } else {
                    SymbolKind::Function
                })
            }
            "impl_item" => {
                let ty = field_text(core, "type", src)?;
                let name = match field_text(core, "trait", src) {
                    Some(tr) => format!("{tr} for {ty}"),
                    None => ty,
                };
                Some((SymbolKind::Impl, name, body))
            }
            "struct_item" => named(SymbolKind::Struct),
            "enum_item" => named(SymbolKind::Enum),
            "union_item" => named(SymbolKind::Union),
            "trait_item" => named(SymbolKind::Trait),
            "mod_item" => named(SymbolKind::Module),
            "macro_definition" => named(SymbolKind::Macro),
            _ => None,
        },
        Grammar::Python => match core.kind() {
            "function_definition" => {
                let in_class = span
                    .parent()
                    .filter(|block| block.kind() == "block")
                    .and_then(|block| block.parent())
                    .is_some_and(|owner| owner.kind() == "class_definition");
                named(if in_class {
                    SymbolKind::Method
                } else {
                    SymbolKind::Function
                })
            }
            "class_definition" => named(SymbolKind::Class),
            _ => None,
        },
        g if g.is_js_family() => js_definition(core, src),
        Grammar::Go => match core.kind() {
            "function_declaration" => named(SymbolKind::Function),
            "method_declaration" => named(SymbolKind::Method),
            "type_spec" => {
                let kind = match core.child_by_field_name("type").map(|t| t.kind()) {
                    Some("struct_type") => SymbolKind::Struct,
                    Some("interface_type") => SymbolKind::Interface,
                    _ => SymbolKind::Type,
                };
                named(kind)
            }
            "type_alias" => named(SymbolKind::Type),
            _ => None,
        },
        Grammar::C | Grammar::Cpp => c_definition(core, span, src),
        Grammar::Java => match core.kind() {
            "class_declaration" => named(SymbolKind::Class),
            "interface_declaration" | "annotation_type_declaration" => named(SymbolKind::Interface),
            "enum_declaration" => named(SymbolKind::Enum),
            "record_declaration" => named(SymbolKind::Record),
            "method_declaration" => named(SymbolKind::Method),
            "constructor_declaration" => named(SymbolKind::Constructor),
            "compact_constructor_declaration" => {
                // `record R(int a) { R { … } }`: the name is the record's.
                let record = span.parent()?.parent()?;
                Some((
                    SymbolKind::Constructor,
                    field_text(record, "name", src)?,
                    body,
                ))
            }
            _ => None,
        },
        _ => None,
    }
}

/// JavaScript, TypeScript and TSX: declarations, methods, and functions or classes given a
/// name by a variable, a field, an object key or an assignment.
fn js_definition<'t>(core: Node<'t>, src: &[u8]) -> Option<(SymbolKind, String, Option<Node<'t>>)> {
    let body = core.child_by_field_name("body");
    let named = |kind: SymbolKind| Some((kind, field_text(core, "name", src)?, body));
    match core.kind() {
        "function_declaration"
        | "generator_function_declaration"
        | "function_expression"
        | "function"
        | "generator_function" => named(SymbolKind::Function),
        "method_definition" | "method_signature" | "abstract_method_signature" => {
            named(SymbolKind::Method)
        }
        "class_declaration" | "abstract_class_declaration" | "class" => named(SymbolKind::Class),
        "interface_declaration" => named(SymbolKind::Interface),
        "enum_declaration" => named(SymbolKind::Enum),
        "type_alias_declaration" => named(SymbolKind::Type),
        "internal_module" => named(SymbolKind::Namespace),
        "module" => named(SymbolKind::Module),
        "variable_declarator" => named_value(core, "name", "value", SymbolKind::Function, src),
        "field_definition" => named_value(core, "property", "value", SymbolKind::Method, src),
        "public_field_definition" => named_value(core, "name", "value", SymbolKind::Method, src),
        "pair" => named_value(core, "key", "value", SymbolKind::Method, src),
        "assignment_expression" => {
            let method = core
                .child_by_field_name("left")
                .is_some_and(|left| left.kind() == "member_expression");
            let kind = if method {
                SymbolKind::Method
            } else {
                SymbolKind::Function
            };
            named_value(core, "left", "right", kind, src)
        }
        _ => None,
    }
}

/// `name = <function or class>`: the value's kind and body under the binding's name.
fn named_value<'t>(
    core: Node<'t>,
    name_field: &str,
    value_field: &str,
    function_kind: SymbolKind,
    src: &[u8],
) -> Option<(SymbolKind, String, Option<Node<'t>>)> {
    let value = core.child_by_field_name(value_field)?;
    let kind = match value.kind() {
        "arrow_function" | "function_expression" | "function" | "generator_function" => {
            function_kind
        }
        "class" => SymbolKind::Class,
        _ => return None,
    };
    let name = field_text(core, name_field, src)?;
    Some((kind, name, value.child_by_field_name("body")))
}

/// C and C++: functions (methods inside a class body or when qualified `A::f`), structs,
/// unions, enums and classes with a body, and named namespaces.
fn c_definition<'t>(
    core: Node<'t>,
    span: Node<'t>,
    src: &[u8],
) -> Option<(SymbolKind, String, Option<Node<'t>>)> {
    let body = core.child_by_field_name("body");
    match core.kind() {
        "function_definition" => {
            let name = declarator_name(core, src)?;
            let in_class = span
                .parent()
                .is_some_and(|parent| parent.kind() == "field_declaration_list");
            let kind = if in_class || name.contains("::") {
                SymbolKind::Method
            } else {
                SymbolKind::Function
            };
            Some((kind, name, body))
        }
        "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" => {
            body?;
            let kind = match core.kind() {
                "struct_specifier" => SymbolKind::Struct,
                "union_specifier" => SymbolKind::Union,
                "enum_specifier" => SymbolKind::Enum,
                _ => SymbolKind::Class,
            };
            // `typedef struct { … } Point;` is named by its typedef.
            let name = field_text(core, "name", src).or_else(|| {
                let typedef = core.parent().filter(|p| p.kind() == "type_definition")?;
                field_text(typedef, "declarator", src)
            })?;
            Some((kind, name, body))
        }
        "namespace_definition" => {
            Some((SymbolKind::Namespace, field_text(core, "name", src)?, body))
        }
        _ => None,
    }
}

/// The declared name inside a function definition's declarators (`*f(…)`, `A::f(…)`, `~A()`).
fn declarator_name(function: Node<'_>, src: &[u8]) -> Option<String> {
    let mut node = function.child_by_field_name("declarator")?;
    for _ in 0..16 {
        match node.kind() {
            "function_declarator"
            | "pointer_declarator"
            | "reference_declarator"
            | "parenthesized_declarator"
            | "attributed_declarator" => {
                node = node
                    .child_by_field_name("declarator")
                    .or_else(|| last_named_child(node))?;
            }
            _ => return text(node, src),
        }
    }
    None
}

fn field_text(node: Node<'_>, field: &str, src: &[u8]) -> Option<String> {
    text(node.child_by_field_name(field)?, src)
}

fn text(node: Node<'_>, src: &[u8]) -> Option<String> {
    node.utf8_text(src).ok().map(str::to_string)
}

fn sole_named_child(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    let mut children = node
        .named_children(&mut cursor)
        .filter(|child| !child.is_extra());
    let only = children.next()?;
    children.next().is_none().then_some(only)
}

fn last_named_child(node: Node<'_>) -> Option<Node<'_>> {
    let mut cursor = node.walk();
    let last = node
        .named_children(&mut cursor)
        .filter(|child| !child.is_extra())
        .last();
    last
}

/// `text` on one line (runs of whitespace become one space), cut at `max` characters with `…`.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let mut cut: String = joined.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}
