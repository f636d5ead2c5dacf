//! Which language a document is written in, from the editor's `languageId` or the file name.
//!
//! The editor's `languageId` is the better witness (it knows what the user chose for a file with
//! an odd extension), but clients disagree on the spelling (VS Code says `typescriptreact`,
//! Neovim passes its filetype, Helix its language name), and some send `plaintext` for anything
//! they do not know. So an id that names one of our grammars wins, then the extension, and only
//! then does the id's own spelling name an unsupported language.

use std::fmt;
use std::path::Path;

/// A document's language: one of the grammars Tandem parses, or another language by name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Language {
    /// Rust (`.rs`).
    Rust,
    /// Python (`.py`, `.pyi`).
    Python,
    /// JavaScript, JSX included (`.js`, `.mjs`, `.cjs`, `.jsx`).
    JavaScript,
    /// TypeScript without JSX (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`); a grammar of its own, since `<T>x` means different things.
    Tsx,
    /// Go (`.go`).
    Go,
    /// C (`.c`).
    C,
    /// C++ (`.cpp`, `.cc`, `.hpp`, … and `.h`, which the C++ grammar also reads as C).
    Cpp,
    /// Java (`.java`).
    Java,
    /// Any other language, by its lower-case LSP language id (`ruby`, `markdown`, `plaintext`).
    Other(String),
}

impl Language {
    /// The language an LSP `languageId` names; an id we have no grammar for becomes
    /// [`Language::Other`] with the id in lower case.
    pub fn from_language_id(id: &str) -> Language {
        let id = id.trim().to_ascii_lowercase();
        match id.as_str() {
            "rust" | "rs" => Language::Rust,
            "python" | "py" | "python3" => Language::Python,
            "javascript" | "javascriptreact" | "js" | "jsx" | "mjs" | "cjs" => Language::JavaScript,
            "typescript" | "ts" | "mts" | "cts" => Language::TypeScript,
            "typescriptreact" | "tsx" => Language::Tsx,
            "go" | "golang" => Language::Go,
            "c" => Language::C,
            "cpp" | "c++" | "cxx" | "cc" => Language::Cpp,
            "java" => Language::Java,
            _ => Language::Other(id),
        }
    }

    /// The language a file name suggests: by extension, then a few well-known names
    /// (`Makefile`, `Dockerfile`); `plaintext` when nothing is known.
    pub fn from_path(path: &Path) -> Language {
        let file_name = path
            .file_name()
            .map(|name| name.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match file_name.as_str() {
            "makefile" | "gnumakefile" => return Language::Other("makefile".into()),
            "dockerfile" => return Language::Other("dockerfile".into()),
            "cmakelists.txt" => return Language::Other("cmake".into()),
            _ => {}
        }
        let Some(extension) = path.extension() else {
            return Language::Other("plaintext".into());
        };
        let extension = extension.to_string_lossy().to_ascii_lowercase();
        let other = match extension.as_str() {
            "rs" => return Language::Rust,
            "py" | "pyi" | "pyw" => return Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => return Language::JavaScript,
            "ts" | "mts" | "cts" => return Language::TypeScript,
            "tsx" => return Language::Tsx,
            "go" => return Language::Go,
            "c" => return Language::C,
            "h" | "cpp" | "cc" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "inl"
            | "tpp" | "ixx" | "cu" => return Language::Cpp,
            "java" => return Language::Java,
            "rb" => "ruby",
            "cs" => "csharp",
            "kt" | "kts" => "kotlin",
            "sh" | "bash" | "zsh" => "shellscript",
            "md" | "markdown" => "markdown",
            "yml" | "yaml" => "yaml",
            "htm" | "html" => "html",
            "hs" => "haskell",
            "ex" | "exs" => "elixir",
            "erl" | "hrl" => "erlang",
            "ml" | "mli" => "ocaml",
            "pl" | "pm" => "perl",
            "txt" => "plaintext",
            other => other,
        };
        Language::Other(other.to_string())
    }

    /// The document's language from both witnesses: an id naming one of our grammars wins, then
    /// the extension, then the id's own name, then what the file name suggests.
    pub fn detect(language_id: Option<&str>, path: &Path) -> Language {
        let from_id = language_id
            .filter(|id| !id.trim().is_empty())
            .map(Language::from_language_id);
        if let Some(language) = &from_id {
            if language.has_grammar() {
                return language.clone();
            }
        }
        let from_path = Language::from_path(path);
        if from_path.has_grammar() {
            return from_path;
        }
        match from_id {
            Some(Language::Other(id)) if id != "plaintext" => Language::Other(id),
            _ => from_path,
        }
    }

    /// Whether Tandem has a tree-sitter grammar for this language (every variant but `Other`).
    pub fn has_grammar(&self) -> bool {
        !matches!(self, Language::Other(_))
    }

    /// The name shown to people and to the model (`Rust`, `C++`, `TSX`, or the other id).
    pub fn display_name(&self) -> &str {
        match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::JavaScript => "JavaScript",
            Language::TypeScript => "TypeScript",
            Language::Tsx => "TSX",
            Language::Go => "Go",
            Language::C => "C",
            Language::Cpp => "C++",
            Language::Java => "Java",
            Language::Other(name) => name,
        }
    }

    /// The info string of a Markdown code fence for this language; empty for plain text or an
    /// id with characters that would break the fence line.
    pub fn fence_tag(&self) -> &str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Go => "go",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Java => "java",
            Language::Other(name) => {
                let plain = name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '#' | '.'));
                if plain && name != "plaintext" {
                    name
                } else {
                    ""
                }
            }
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_ids_of_the_supported_grammars() {
        let cases = [
            ("rust", Language::Rust),
            ("python", Language::Python),
            ("javascript", Language::JavaScript),
            ("javascriptreact", Language::JavaScript),
            ("typescript", Language::TypeScript),
            ("typescriptreact", Language::Tsx),
            ("go", Language::Go),
            ("c", Language::C),
            ("cpp", Language::Cpp),
            ("java", Language::Java),
            ("TypeScriptReact", Language::Tsx),
        ];
        for (id, expected) in cases {
            assert_eq!(Language::from_language_id(id), expected, "{id}");
        }
        assert_eq!(
            Language::from_language_id("Ruby"),
            Language::Other("ruby".into())
        );
    }

    #[test]
    fn extensions_and_file_names() {
        let cases = [
            ("src/main.rs", Language::Rust),
            ("a/b.pyi", Language::Python),
            ("App.jsx", Language::JavaScript),
            ("index.mts", Language::TypeScript),
            ("App.TSX", Language::Tsx),
            ("main.go", Language::Go),
            ("lib.c", Language::C),
            ("lib.h", Language::Cpp),
            ("x.hpp", Language::Cpp),
            ("Main.java", Language::Java),
            ("Gemfile.rb", Language::Other("ruby".into())),
            ("notes.txt", Language::Other("plaintext".into())),
            ("LICENSE", Language::Other("plaintext".into())),
            ("Makefile", Language::Other("makefile".into())),
            ("data.parquet", Language::Other("parquet".into())),
        ];
        for (path, expected) in cases {
            assert_eq!(Language::from_path(Path::new(path)), expected, "{path}");
        }
    }

    #[test]
    fn detect_prefers_a_grammar_then_the_id() {
        let path = Path::new("src/widget.tsx");
        assert_eq!(
            Language::detect(Some("typescriptreact"), path),
            Language::Tsx
        );
        // An editor that does not know TSX says plaintext: the extension still finds the grammar.
        assert_eq!(Language::detect(Some("plaintext"), path), Language::Tsx);
        assert_eq!(Language::detect(None, path), Language::Tsx);
        // The user chose Python for an extension-less script.
        assert_eq!(
            Language::detect(Some("python"), Path::new("bin/tool")),
            Language::Python
        );
        // No grammar either way: the editor's id names it.
        assert_eq!(
            Language::detect(Some("ruby"), Path::new("Rakefile")),
            Language::Other("ruby".into())
        );
        assert_eq!(
            Language::detect(Some("plaintext"), Path::new("a.rb")),
            Language::Other("ruby".into())
        );
        assert_eq!(
            Language::detect(Some(""), Path::new("a.md")),
            Language::Other("markdown".into())
        );
    }

    #[test]
    fn names_and_fence_tags() {
        assert_eq!(Language::Cpp.display_name(), "C++");
        assert_eq!(Language::Cpp.fence_tag(), "cpp");
        assert_eq!(Language::Other("ruby".into()).fence_tag(), "ruby");
        assert_eq!(Language::Other("plaintext".into()).fence_tag(), "");
        assert_eq!(Language::Other("a b`".into()).fence_tag(), "");
        assert_eq!(Language::Tsx.to_string(), "TSX");
    }
}
