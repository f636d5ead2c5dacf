//! The enclosing symbol in each supported grammar: a method, a nested function, top level;
//! TSX; a file with a syntax error; languages without a grammar.
//!
//! Sources mark cursors with `§` and a digit; [`find`] removes every marker and looks up the
//! symbol at the one asked for.

use super::languages::Language;
use super::symbols::{
    enclosing_symbol, find_symbol, NotParsed, Symbol, SymbolKind, SymbolSearch, MAX_PARSE_BYTES,
};

/// `src` without its `§N` markers, and the byte offset of each marker.
fn unmark(src: &str) -> (String, Vec<(char, usize)>) {
    let mut text = String::new();
    let mut marks = Vec::new();
    let mut chars = src.chars();
    while let Some(c) = chars.next() {
        if c == '§' {
            let digit = chars.next().expect("a digit after §");
            marks.push((digit, text.len()));
        } else {
            text.push(c);
        }
    }
    (text, marks)
}

fn find(language: Language, src: &str, mark: char) -> Option<Symbol> {
    let (text, marks) = unmark(src);
    let at = marks
        .iter()
        .find(|(m, _)| *m == mark)
        .map(|(_, at)| *at)
        .expect("marker");
    enclosing_symbol(&text, &language, at..at)
}

/// The symbol's path (`impl Foo > method bar`), or `-` when there is none.
fn path(language: Language, src: &str, mark: char) -> String {
    find(language, src, mark).map_or_else(|| "-".to_string(), |s| s.path())
}

const RUST: &str = r#"use std::fmt;§0

pub struct Rect {
    w: f64,§4
}

impl Shape for Rect {
    fn area(&self) -> f64 {
        self.w * §1self.w
    }
}

mod geometry {
    pub fn outer(x: i32) -> i32 {
        fn inner(y: i32) -> i32 {
            let add = |z| z + §2y;
            add(1)
        }
        inner(x)§3
    }
}
"#;

#[test]
fn rust() {
    let method = find(Language::Rust, RUST, '1').expect("method");
    assert_eq!(method.kind, SymbolKind::Method);
    assert_eq!(method.name, "area");
    assert_eq!(method.signature_line, "fn area(&self) -> f64");
    assert_eq!((method.start_line, method.end_line), (7, 9));
    assert_eq!(method.path(), "impl Shape for Rect > method area");
    assert_eq!(
        path(Language::Rust, RUST, '2'),
        "module geometry > function outer > function inner"
    );
    assert_eq!(
        path(Language::Rust, RUST, '3'),
        "module geometry > function outer"
    );
    assert_eq!(path(Language::Rust, RUST, '4'), "struct Rect");
    assert_eq!(path(Language::Rust, RUST, '0'), "-");
}

const PYTHON: &str = r#"import os§0

class Shape:
    @§4property
    def area(self):
        return §1self.w * self.h

    def visit(self, items):
        def keep(item):
            return §2item.ok
        return [i for i in items if keep(i)]

def main():
    §3pass
"#;

#[test]
fn python() {
    let method = find(Language::Python, PYTHON, '1').expect("method");
    assert_eq!(method.path(), "class Shape > method area");
    // The decorator belongs to the method: its text and signature start there.
    assert_eq!(method.signature_line, "@property def area(self):");
    assert_eq!((method.start_line, method.end_line), (3, 5));
    assert_eq!(
        path(Language::Python, PYTHON, '2'),
        "class Shape > method visit > function keep"
    );
    assert_eq!(path(Language::Python, PYTHON, '3'), "function main");
    // On the decorator's line: still the method.
    assert_eq!(
        path(Language::Python, PYTHON, '4'),
        "class Shape > method area"
    );
    assert_eq!(path(Language::Python, PYTHON, '0'), "-");
}

const JAVASCRIPT: &str = r#"import x from "x";§0

export class Cart {
  total() {
    return this.items.reduce((sum, item) => sum + §1item.price, 0);
  }
  onClick = () => { this.§5open(); };
}

export const format = (cart) => {
  function line(item) {
    return `${§2item.name}`;
  }
  return cart.items.map(line);
};

const handlers = { save: function () { §3persist(); } };
Cart.prototype.clear = function () { this.§4items = []; };
"#;

#[test]
fn javascript() {
    let js = |m| path(Language::JavaScript, JAVASCRIPT, m);
    // The arrow callback is anonymous: the method holds it.
    assert_eq!(js('1'), "class Cart > method total");
    assert_eq!(js('5'), "class Cart > method onClick");
    assert_eq!(js('2'), "function format > function line");
    assert_eq!(js('3'), "method save");
    assert_eq!(js('4'), "method Cart.prototype.clear");
    assert_eq!(js('0'), "-");
    let format = find(Language::JavaScript, JAVASCRIPT, '2').expect("line");
    assert_eq!(format.signature_line, "function line(item)");
    let outer = find(
        Language::JavaScript,
        "export const f = (a) => {\n  §1a;\n};\n",
        '1',
    )
    .expect("f");
    // `export const` is part of the symbol.
    assert_eq!(outer.byte_range.start, 0);
    assert_eq!(outer.signature_line, "export const f = (a) =>");
}

const TYPESCRIPT: &str = r#"type Id = string;§0

export interface Store {
  get(id: Id): §4Item;
}

namespace Api {
  export abstract class Client<T> {
    fetch(id: Id): Promise<T> {
      const retry = (n: number): void => {
        §2n--;
      };
      return §1this.send(<T>id);
    }
  }
}
"#;

#[test]
fn typescript() {
    let ts = |m| path(Language::TypeScript, TYPESCRIPT, m);
    assert_eq!(ts('1'), "namespace Api > class Client > method fetch");
    assert_eq!(
        ts('2'),
        "namespace Api > class Client > method fetch > function retry"
    );
    assert_eq!(ts('4'), "interface Store > method get");
    assert_eq!(ts('0'), "-");
}

const TSX: &str = r#"import React from "react";§0

export function List({ items }: Props) {
  const renderItem = (item: Item) => <li key={item.id}>{§2item.label}</li>;
  return <ul>{items.map(§1renderItem)}</ul>;
}

export default class Panel extends React.Component<Props> {
  render() {
    return <div>{this.§3props.title}</div>;
  }
}
"#;

#[test]
fn tsx() {
    let tsx = |m| path(Language::Tsx, TSX, m);
    assert_eq!(tsx('1'), "function List");
    assert_eq!(tsx('2'), "function List > function renderItem");
    assert_eq!(tsx('3'), "class Panel > method render");
    assert_eq!(tsx('0'), "-");
}

const GO: &str = r#"package main§0

type Server struct {
	addr §4string
}

func (s *Server) Serve() error {
	handle := func() { §2s.log() }
	return §1s.listen()
}

func main() {
	§3run()
}
"#;

#[test]
fn go() {
    let method = find(Language::Go, GO, '1').expect("method");
    assert_eq!(method.path(), "method Serve");
    assert_eq!(method.signature_line, "func (s *Server) Serve() error");
    // The func literal is anonymous: the method holds it.
    assert_eq!(path(Language::Go, GO, '2'), "method Serve");
    assert_eq!(path(Language::Go, GO, '3'), "function main");
    let server = find(Language::Go, GO, '4').expect("struct");
    assert_eq!(server.path(), "struct Server");
    // `type` is part of the symbol when the declaration holds one spec.
    assert_eq!(server.signature_line, "type Server struct {");
    assert_eq!(path(Language::Go, GO, '0'), "-");
}

const C: &str = r#"#include <stdio.h>§0

typedef struct {
    int §4x;
} Point;

static int *make(int n) {
    return §1alloc(n);
}

int main(void) {
    struct local { int §2y; };
    §3return 0;
}
"#;

#[test]
fn c() {
    let make = find(Language::C, C, '1').expect("function");
    assert_eq!(make.path(), "function make");
    assert_eq!(make.signature_line, "static int *make(int n)");
    assert_eq!(path(Language::C, C, '2'), "function main > struct local");
    assert_eq!(path(Language::C, C, '3'), "function main");
    let point = find(Language::C, C, '4').expect("typedef struct");
    assert_eq!(point.path(), "struct Point");
    assert_eq!((point.start_line, point.end_line), (2, 4));
    assert_eq!(path(Language::C, C, '0'), "-");
}

const CPP: &str = r#"#include <vector>§0

namespace geo {
template <typename T>
class Box {
public:
    T get() const {
        auto twice = [](T v) { return §2v * 2; };
        return §1value;
    }
private:
    T value;
};

int Box2::size() const { return §3n; }
}
"#;

#[test]
fn cpp() {
    let get = find(Language::Cpp, CPP, '1').expect("method");
    assert_eq!(get.path(), "namespace geo > class Box > method get");
    assert_eq!(get.signature_line, "T get() const");
    // The lambda is anonymous.
    assert_eq!(
        path(Language::Cpp, CPP, '2'),
        "namespace geo > class Box > method get"
    );
    assert_eq!(
        path(Language::Cpp, CPP, '3'),
        "namespace geo > method Box2::size"
    );
    let (text, _) = unmark(CPP);
    let at = text.find("public:").expect("public");
    let boxed = enclosing_symbol(&text, &Language::Cpp, at..at).expect("class");
    // `template <…>` is part of the class.
    assert_eq!(boxed.signature_line, "template <typename T> class Box");
    assert_eq!(path(Language::Cpp, CPP, '0'), "-");
}

const JAVA: &str = r#"package app;§0

public class Orders {
    public Orders() { §3init(); }

    int total(List<Item> items) {
        Runnable log = () -> { §2System.out.println(items); };
        return §1items.size();
    }

    interface Listener {
        void changed(§4int n);
    }
}
"#;

#[test]
fn java() {
    let java = |m| path(Language::Java, JAVA, m);
    assert_eq!(java('1'), "class Orders > method total");
    assert_eq!(java('2'), "class Orders > method total");
    assert_eq!(java('3'), "class Orders > constructor Orders");
    assert_eq!(
        java('4'),
        "class Orders > interface Listener > method changed"
    );
    assert_eq!(java('0'), "-");
    let total = find(Language::Java, JAVA, '1').expect("method");
    assert_eq!(total.signature_line, "int total(List<Item> items)");
}

#[test]
fn a_syntax_error_still_yields_the_symbol() {
    let rust = "impl Parser {\n    fn next(&mut self) -> Token {\n        let x = (1 + ;\n        §1self.lex()\n    }\n}\n";
    assert_eq!(path(Language::Rust, rust, '1'), "impl Parser > method next");
    let python = "class A:\n    def f(self):\n        x = (1 +\n        return §1x\n";
    assert_eq!(path(Language::Python, python, '1'), "class A > method f");
    let ts = "class A {\n  m() {\n    const = ;\n    §1this.x();\n  }\n}\n";
    assert_eq!(path(Language::TypeScript, ts, '1'), "class A > method m");
}

#[test]
fn a_selection_of_whole_lines_stays_inside_the_function() {
    let (text, _) = unmark(RUST);
    let start = text.find("    fn area").expect("area");
    let end = text.find("mod geometry").expect("mod") - "}\n\n".len();
    let symbol = enclosing_symbol(&text, &Language::Rust, start..end).expect("symbol");
    assert_eq!(symbol.path(), "impl Shape for Rect > method area");
    // A selection across two methods belongs to what holds both.
    let both = text.find("impl Shape").expect("impl")..text.len();
    assert_eq!(enclosing_symbol(&text, &Language::Rust, both), None);
}

#[test]
fn out_of_range_offsets_are_clamped() {
    let text = "fn main() {\n    println!(\"日本\");\n}";
    let inside = text.find('本').expect("char") + 1; // inside a character
    let symbol = enclosing_symbol(text, &Language::Rust, inside..inside).expect("main");
    assert_eq!(symbol.name, "main");
    assert_eq!(enclosing_symbol(text, &Language::Rust, 9000..9999), None);
}

#[test]
fn documents_too_large_are_not_parsed() {
    let text = "x".repeat(MAX_PARSE_BYTES + 1);
    assert_eq!(
        find_symbol(&text, &Language::Rust, 0..0),
        SymbolSearch::NotParsed(NotParsed::TooLarge {
            bytes: MAX_PARSE_BYTES + 1
        })
    );
}

#[test]
fn languages_without_a_grammar() {
    let text = "def f\n  1\nend\n";
    let ruby = Language::Other("ruby".into());
    assert_eq!(find_symbol(text, &ruby, 8..8), SymbolSearch::NoParser);
    assert_eq!(enclosing_symbol(text, &ruby, 8..8), None);
    assert_eq!(find_symbol("", &Language::Go, 0..0), SymbolSearch::TopLevel);
}
