//! Markdown to styled terminal lines (pulldown-cmark), for answers as they stream.
