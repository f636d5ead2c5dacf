use std::path::{Path, PathBuf};

use super::*;
use crate::resources::DiagnosticKind;

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
    path.to_path_buf()
}

/// Loads `<root>/<dir>` and returns the skills and the warning texts.
fn load_dir(root: &Path, dir: &str) -> (Vec<Skill>, Vec<String>) {
    let mut diagnostics = Vec::new();
    let skills = load_skills_from_dir(&root.join(dir), ResourceSource::Path, &mut diagnostics);
    let texts = diagnostics
        .iter()
        .map(|d| {
            assert_eq!(d.kind, DiagnosticKind::Warning);
            d.message.clone()
        })
        .collect();
    (skills, texts)
}

fn skill_md(name: Option<&str>, description: Option<&str>, extra: &str) -> String {
    let mut s = String::from("---\n");
    if let Some(n) = name {
        s.push_str(&format!("name: {n}\n"));
    }
    if let Some(d) = description {
        s.push_str(&format!("description: {d}\n"));
    }
    s.push_str(extra);
    s.push_str("---\n\n# Body\n\nDo the thing.\n");
    s
}

#[test]
fn a_valid_skill() {
    let root = tempfile::tempdir().expect("temp dir");
    let file = write(
        &root.path().join("valid-skill/SKILL.md"),
        &skill_md(Some("valid-skill"), Some("A valid skill."), ""),
    );
    let (skills, warnings) = load_dir(root.path(), "valid-skill");
    assert!(warnings.is_empty());
    assert_eq!(
        skills,
        vec![Skill {
            name: "valid-skill".into(),
            description: "A valid skill.".into(),
            file_path: file,
            base_dir: root.path().join("valid-skill"),
            source: ResourceSource::Path,
            disable_model_invocation: false,
        }]
    );
}

#[test]
fn every_validation_warning() {
    let root = tempfile::tempdir().expect("temp dir");
    let r = root.path();
    let long = "a".repeat(65);
    let cases: Vec<(&str, String, Vec<String>, bool)> = vec![
        (
            "name-mismatch",
            skill_md(Some("different-name"), Some("d"), ""),
            vec![
                "name \"different-name\" does not match parent directory \"name-mismatch\"".into(),
            ],
            true,
        ),
        (
            "Invalid_Name",
            skill_md(None, Some("d"), ""),
            vec![
                "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)"
                    .into(),
            ],
            true,
        ),
        (
            long.as_str(),
            skill_md(None, Some("d"), ""),
            vec!["name exceeds 64 characters (65)".into()],
            true,
        ),
        (
            "-edge-",
            skill_md(None, Some("d"), ""),
            vec!["name must not start or end with a hyphen".into()],
            true,
        ),
        (
            "bad--name",
            skill_md(None, Some("d"), ""),
            vec!["name must not contain consecutive hyphens".into()],
            true,
        ),
        (
            "missing-description",
            skill_md(Some("missing-description"), None, ""),
            vec!["description is required".into()],
            false,
        ),
        (
            "blank-description",
            skill_md(None, Some("\"  \""), ""),
            vec!["description is required".into()],
            false,
        ),
        (
            "long-description",
            skill_md(None, Some(&"x".repeat(1025)), ""),
            vec!["description exceeds 1024 characters (1025)".into()],
            true,
        ),
        (
            "no-frontmatter",
            "# No frontmatter\n".to_string(),
            vec!["description is required".into()],
            false,
        ),
        (
            "unknown-field",
            skill_md(None, Some("d"), "author: someone\nversion: 1.0\n"),
            vec![],
            true,
        ),
    ];
    for (dir, text, expected, loads) in cases {
        write(&r.join(dir).join("SKILL.md"), &text);
        let (skills, warnings) = load_dir(r, dir);
        assert_eq!(warnings, expected, "{dir}");
        assert_eq!(skills.len(), usize::from(loads), "{dir}");
    }
}

#[test]
fn invalid_yaml_is_skipped_with_its_position() {
    let root = tempfile::tempdir().expect("temp dir");
    write(
        &root.path().join("invalid-yaml/SKILL.md"),
        "---\nname: invalid-yaml\ndescription: [unclosed bracket\n---\n\nBody\n",
    );
    let (skills, warnings) = load_dir(root.path(), "invalid-yaml");
    assert!(skills.is_empty());
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].starts_with("invalid YAML frontmatter: "),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].contains(" at line "), "{}", warnings[0]);
}

#[test]
fn multi_line_description_nested_skills_root_preferred_and_manual_only() {
    let root = tempfile::tempdir().expect("temp dir");
    let r = root.path();
    write(
        &r.join("multi/SKILL.md"),
        "---\nname: multi\ndescription: |\n  This is a multiline description.\n  It spans lines.\n---\nBody",
    );
    let (skills, warnings) = load_dir(r, "multi");
    assert!(warnings.is_empty());
    assert_eq!(
        skills[0].description,
        "This is a multiline description.\nIt spans lines.\n"
    );

    write(
        &r.join("nested/child-skill/SKILL.md"),
        &skill_md(None, Some("child"), ""),
    );
    let (skills, _) = load_dir(r, "nested");
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].name, "child-skill");

    write(
        &r.join("root-pref/SKILL.md"),
        &skill_md(None, Some("Root wins."), ""),
    );
    write(
        &r.join("root-pref/inner/SKILL.md"),
        &skill_md(None, Some("Ignored."), ""),
    );
    let (skills, _) = load_dir(r, "root-pref");
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].description, "Root wins.");

    write(
        &r.join("manual/SKILL.md"),
        &skill_md(None, Some("Manual."), "disable-model-invocation: true\n"),
    );
    let (skills, warnings) = load_dir(r, "manual");
    assert!(warnings.is_empty());
    assert!(skills[0].disable_model_invocation);
}

fn skill(name: &str, description: &str, hidden: bool) -> Skill {
    Skill {
        name: name.into(),
        description: description.into(),
        file_path: PathBuf::from(format!("/s/{name}/SKILL.md")),
        base_dir: PathBuf::from(format!("/s/{name}")),
        source: ResourceSource::User,
        disable_model_invocation: hidden,
    }
}

#[test]
fn prompt_listing_is_pi_xml_escaped_without_hidden_skills() {
    assert_eq!(format_skills_for_prompt(&[]), "");
    assert_eq!(format_skills_for_prompt(&[skill("h", "x", true)]), "");
    let text = format_skills_for_prompt(&[
        skill("one", "Uses <tags> & \"quotes\" 'too'.", false),
        skill("hidden", "x", true),
        skill("two", "Second.", false),
    ]);
    let xml = &text[text.find("<available_skills>").expect("block")..];
    assert_eq!(
        xml,
        "<available_skills>\n  <skill>\n    <name>one</name>\n    <description>Uses &lt;tags&gt; \
         &amp; &quot;quotes&quot; &apos;too&apos;.</description>\n    \
         <location>/s/one/SKILL.md</location>\n  </skill>\n  <skill>\n    <name>two</name>\n    \
         <description>Second.</description>\n    <location>/s/two/SKILL.md</location>\n  \
         </skill>\n</available_skills>"
    );
    assert!(text.contains("read tool"));
}

#[test]
fn first_of_a_name_wins_and_symlinked_duplicates_are_silent() {
    let root = tempfile::tempdir().expect("temp dir");
    let r = root.path();
    let first = write(
        &r.join("a/dup/SKILL.md"),
        &skill_md(None, Some("first"), ""),
    );
    let second = write(
        &r.join("b/dup/SKILL.md"),
        &skill_md(None, Some("second"), ""),
    );
    std::os::unix::fs::symlink(r.join("a/dup"), r.join("c")).expect("symlink");
    let mut set = SkillSet::default();
    let mut diagnostics = Vec::new();
    for file in [&first, &r.join("c/SKILL.md"), &second] {
        let loaded = load_skill(file, ResourceSource::Path, &mut diagnostics).expect("loads");
        set.add(loaded);
    }
    assert_eq!(set.skills.len(), 1);
    assert_eq!(set.skills[0].description, "first");
    assert_eq!(set.collisions.len(), 1);
    let c = &set.collisions[0];
    assert_eq!(c.message, "name \"dup\" collision");
    assert_eq!(
        c.kind,
        DiagnosticKind::Collision(Collision {
            resource: ResourceKind::Skill,
            name: "dup".into(),
            winner: first,
            loser: second,
        })
    );
}

#[test]
fn skill_commands_expand_to_the_skill_block() {
    let root = tempfile::tempdir().expect("temp dir");
    let file = write(
        &root.path().join("review/SKILL.md"),
        "---\nname: review\ndescription: Reviews.\n---\n\n# Review\n\nCheck everything.\n\n",
    );
    let mut diagnostics = Vec::new();
    let skills = vec![load_skill(&file, ResourceSource::Project, &mut diagnostics).expect("loads")];
    let dir = root.path().join("review");
    let block = format!(
        "<skill name=\"review\" location=\"{}\">\nRelative paths in this skill start at {}.\n\n\
         # Review\n\nCheck everything.\n</skill>",
        file.display(),
        dir.display()
    );
    assert_eq!(
        expand_skill_command("/skill:review", &skills).expect("reads"),
        Some(block.clone())
    );
    assert_eq!(
        expand_skill_command("/skill:review   src/lib.rs please  ", &skills).expect("reads"),
        Some(format!("{block}\n\nsrc/lib.rs please"))
    );
    assert_eq!(
        expand_skill_command("/skill:other x", &skills).expect("ok"),
        None
    );
    assert_eq!(expand_skill_command("review", &skills).expect("ok"), None);
    std::fs::remove_file(&file).expect("rm");
    let err = expand_skill_command("/skill:review", &skills).expect_err("gone");
    assert!(err.to_string().starts_with(&format!(
        "Cannot read skill \"review\" from {}: ",
        file.display()
    )));
}
