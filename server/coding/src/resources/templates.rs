//! Prompt templates: Markdown files whose body becomes the prompt when the user types
//! `/name args` (the file name without `.md` is the command). An optional frontmatter
//! `description` says what it does; without one, the body's first non-empty line does.

use std::path::{Path, PathBuf};

use super::frontmatter;
use super::template_args::{parse_command_args, substitute_args};
use super::{Collision, ResourceDiagnostic, ResourceKind, ResourceSource};

/// Longest description taken from a body line, in characters (pi's limit).
const DESCRIPTION_FROM_BODY: usize = 60;

/// A loaded template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    /// The command name: the file name without `.md`.
    pub name: String,
    /// What it does (frontmatter `description`, else the first body line, cut at 60
    /// characters with `...`). pi also appends a `(user)`-style source label here; Tandem keeps
    /// that in [`PromptTemplate::source`].
    pub description: String,
    /// The body, with placeholders.
    pub content: String,
    /// Where it was found.
    pub source: ResourceSource,
    /// The file.
    pub file_path: PathBuf,
}

/// Reads one template file; `None` with a warning when it cannot be read or its frontmatter
/// is not valid YAML. Blocking.
pub fn load_template(
    path: &Path,
    source: ResourceSource,
    diagnostics: &mut Vec<ResourceDiagnostic>,
) -> Option<PromptTemplate> {
    let parsed = std::fs::read_to_string(path)
        .map_err(|e| format!("could not read prompt template: {e}"))
        .and_then(|text| frontmatter::parse(&text).map_err(|e| e.to_string()));
    let header = match parsed {
        Ok(header) => header,
        Err(message) => {
            diagnostics.push(ResourceDiagnostic::warning(message, path));
            return None;
        }
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = file_name
        .strip_suffix(".md")
        .unwrap_or(&file_name)
        .to_string();
    let description = match header.string("description") {
        Some(d) if !d.is_empty() => d.to_string(),
        _ => header
            .body
            .lines()
            .find(|line| !line.trim().is_empty())
            .map(|line| {
                let mut cut: String = line.chars().take(DESCRIPTION_FROM_BODY).collect();
                if line.chars().count() > DESCRIPTION_FROM_BODY {
                    cut.push_str("...");
                }
                cut
            })
            .unwrap_or_default(),
    };
    Some(PromptTemplate {
        name,
        description,
        content: header.body,
        source,
        file_path: path.to_path_buf(),
    })
}

/// Keeps the first template of each name; later ones are reported as collisions.
pub fn dedupe_templates(
    templates: Vec<PromptTemplate>,
    diagnostics: &mut Vec<ResourceDiagnostic>,
) -> Vec<PromptTemplate> {
    let mut kept: Vec<PromptTemplate> = Vec::new();
    for template in templates {
        if let Some(winner) = kept.iter().find(|t| t.name == template.name) {
            diagnostics.push(ResourceDiagnostic::collision(
                format!("name \"/{}\" collision", template.name),
                Collision {
                    resource: ResourceKind::PromptTemplate,
                    name: template.name.clone(),
                    winner: winner.file_path.clone(),
                    loser: template.file_path.clone(),
                },
            ));
        } else {
            kept.push(template);
        }
    }
    kept
}

/// Expands `/name args` when `name` is a template: the arguments (split at the first space)
/// are parsed and substituted into its body. `None` when `text` is not a template command.
pub fn expand_prompt_template(text: &str, templates: &[PromptTemplate]) -> Option<String> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = match rest.find(' ') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let template = templates.iter().find(|t| t.name == name)?;
    Some(substitute_args(
        &template.content,
        &parse_command_args(args),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) -> PathBuf {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
        path.to_path_buf()
    }

    #[test]
    fn name_description_and_body() {
        let root = tempfile::tempdir().expect("temp dir");
        let mut diagnostics = Vec::new();
        let file = write(
            &root.path().join("review.md"),
            "---\ndescription: Review a file\n---\n\nReview $1 carefully.\n",
        );
        let t = load_template(&file, ResourceSource::User, &mut diagnostics).expect("loads");
        assert_eq!(t.name, "review");
        assert_eq!(t.description, "Review a file");
        assert_eq!(t.content, "Review $1 carefully.");

        let long = "x".repeat(61);
        let file = write(
            &root.path().join("plain.md"),
            &format!("\n\n  \n{long}\nmore\n"),
        );
        let t = load_template(&file, ResourceSource::Project, &mut diagnostics).expect("loads");
        assert_eq!(t.description, format!("{}...", "x".repeat(60)));
        assert_eq!(t.content, format!("\n\n  \n{long}\nmore\n"));
        let file = write(&root.path().join("short.md"), "Just this line");
        let t = load_template(&file, ResourceSource::Project, &mut diagnostics).expect("loads");
        assert_eq!(t.description, "Just this line");
        assert!(diagnostics.is_empty());

        let file = write(
            &root.path().join("bad.md"),
            "---\ndescription: [x\n---\nBody",
        );
        assert!(load_template(&file, ResourceSource::Project, &mut diagnostics).is_none());
        assert!(diagnostics[0]
            .message
            .starts_with("invalid YAML frontmatter: "));
    }

    fn template(name: &str, content: &str, path: &str) -> PromptTemplate {
        PromptTemplate {
            name: name.into(),
            description: String::new(),
            content: content.into(),
            source: ResourceSource::User,
            file_path: PathBuf::from(path),
        }
    }

    #[test]
    fn expansion_and_collisions() {
        let mut diagnostics = Vec::new();
        let templates = dedupe_templates(
            vec![
                template("fix", "Fix $1 in ${@:2}", "/p/fix.md"),
                template("fix", "other", "/u/fix.md"),
                template("all", "All: $ARGUMENTS", "/p/all.md"),
            ],
            &mut diagnostics,
        );
        assert_eq!(templates.len(), 2);
        assert_eq!(diagnostics[0].message, "name \"/fix\" collision");
        assert_eq!(
            expand_prompt_template("/fix \"the bug\" a.rs b.rs", &templates).as_deref(),
            Some("Fix the bug in a.rs b.rs")
        );
        assert_eq!(
            expand_prompt_template("/fix", &templates).as_deref(),
            Some("Fix  in ")
        );
        assert_eq!(
            expand_prompt_template("/all", &templates).as_deref(),
            Some("All: ")
        );
        assert_eq!(expand_prompt_template("/nope x", &templates), None);
        assert_eq!(expand_prompt_template("fix x", &templates), None);
        // Only a space ends the name, as in pi.
        assert_eq!(expand_prompt_template("/fix\tx", &templates), None);
    }
}
