//! Code blocks highlighted with the tree-sitter grammars Tandem links.
