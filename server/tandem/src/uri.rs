//! Paths and `file://` URIs, converted in one place with the LSP types' own URI implementation
//! (`ls_types::Uri`, on the fluent-uri crate), so every message the server sends — edits, tool
//! locations, `tandem demo`'s client — encodes a path the same way, and every URI a client sends
//! decodes the same way, however it chose to percent-encode.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use tower_lsp_server::ls_types::Uri;

/// The `file://` URI of an absolute path; `None` for a relative one.
pub fn from_path(path: &Path) -> Option<Uri> {
    Uri::from_file_path(path)
}

/// [`from_path`] as a string; a relative path (which has no URI) is given as a path-only URI of
/// its text, so a message still says which file it meant.
pub fn string_from_path(path: &Path) -> String {
    match from_path(path) {
        Some(uri) => uri.to_string(),
        None => path.to_string_lossy().into_owned(),
    }
}

/// The path of a `file:` URI; `None` for other schemes or text that is not a URI.
pub fn to_path(uri: &str) -> Option<PathBuf> {
    let uri = Uri::from_str(uri).ok()?;
    if uri.scheme().as_str() != "file" {
        return None;
    }
    uri.to_file_path().map(|p| p.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_with_spaces_and_unicode() {
        let path = Path::new("/tmp/a b/ü #1.py");
        let uri = string_from_path(path);
        assert_eq!(uri, "file:///tmp/a%20b/%C3%BC%20%231.py");
        assert_eq!(to_path(&uri), Some(path.to_path_buf()));
        // Another client's encoding of the same path.
        assert_eq!(
            to_path("file:///tmp/a%20b/%c3%bc%20%231.py"),
            Some(path.to_path_buf())
        );
        assert_eq!(to_path("untitled:Untitled-1"), None);
        assert_eq!(to_path("not a uri"), None);
        assert_eq!(from_path(Path::new("relative.txt")), None);
    }
}
