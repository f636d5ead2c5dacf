//! Diagnostics around an edit: the file's diagnostics just before the change is proposed, and
//! once it is applied, the newer ones after the language servers settled (bounded by the
//! `diagnostics.settleMs` setting), turned into the paragraph that ends the tool's result.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::settings::DiagnosticsConfig;

use super::report::{self, EditedFile};
use super::{Diagnostic, Document, LanguageIntel, Settle};

/// A file's diagnostics just before an edit.
#[derive(Debug, Clone)]
pub struct Before {
    path: PathBuf,
    generation: u64,
    diagnostics: Vec<Diagnostic>,
}

/// Reads `path`'s diagnostics before an edit (its text now is `text`: empty for a new file).
/// `Ok(None)`: nothing will be reported (reports are off, or no language server looks at the
/// file); `Err`: the diagnostics could not be read, said in the result.
pub async fn before(
    intel: &dyn LanguageIntel,
    config: &DiagnosticsConfig,
    path: PathBuf,
    text: String,
) -> Result<Option<Before>, String> {
    if !config.after_edit || !intel.features().diagnostics {
        return Ok(None);
    }
    let answer = intel
        .diagnostics(
            Some(vec![Document {
                path: path.clone(),
                text,
            }]),
            None,
        )
        .await
        .map_err(|e| e.to_string())?;
    let Some(file) = answer.files.into_iter().next() else {
        return Ok(None);
    };
    if !file.analyzed {
        return Ok(None);
    }
    Ok(Some(Before {
        path,
        generation: file.generation,
        diagnostics: file.diagnostics,
    }))
}

/// The report once the edit is applied and the file holds `text`; `shown` is its display path.
pub async fn after(
    intel: &dyn LanguageIntel,
    config: &DiagnosticsConfig,
    before: Before,
    text: &str,
    shown: &str,
) -> Option<String> {
    let settle = Settle {
        after: BTreeMap::from([(before.path.clone(), before.generation)]),
        wait: config.settle,
        quiet: config.quiet,
    };
    let document = Document {
        path: before.path.clone(),
        text: text.to_string(),
    };
    match intel.diagnostics(Some(vec![document]), Some(settle)).await {
        Ok(answer) => report::after_edit(
            config,
            &EditedFile {
                shown,
                text,
                before: &before.diagnostics,
                after: &answer,
                source: intel.label(),
                waited: config.settle,
            },
        ),
        Err(e) => Some(report::unavailable(shown, &e.to_string())),
    }
}
