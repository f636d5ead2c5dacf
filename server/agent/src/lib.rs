//! tandem-agent: pi's two-level agent loop over an injected stream function (issue 3).
//!
//! It knows nothing of files, sessions or editors.

pub use tandem_ai as ai;
