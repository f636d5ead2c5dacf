//! tandem-protocol: the custom LSP methods and payloads Tandem adds (issue 6).
