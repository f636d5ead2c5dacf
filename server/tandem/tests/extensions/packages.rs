//! pi 1.6's packages: `tandem install` / `list` / `remove` / `update` for local, git and npm
//! sources, `-e` for one run, a package that cannot be installed reported while the run goes
//! on, and pi 1.6 itself reading what Tandem installed and the other way round (same agent
//! directory). No network: git packages come from a bare repository in the sandbox (git's
//! `url.<base>.insteadOf` maps `https://git.test/` onto it, so the source is one pi accepts),
//! npm packages from a stand-in `npmCommand` that copies a fixture directory.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use tandem_tests::wire::{Turn, WireApi};

use crate::support::{body_mentions, Run, Sandbox};
use crate::{node, run_env, system_prompt, workspace_root};

/// An extension registering a tool named `tool`.
fn tool_extension(tool: &str) -> String {
    format!(
        r#"import {{ Type }} from "typebox";
export default function (pi: any) {{
  pi.registerTool({{
    name: "{tool}", label: "{tool}", description: "A tool from a package",
    parameters: Type.Object({{}}),
    async execute() {{ return {{ content: [{{ type: "text", text: "{tool} ran" }}], details: {{}} }}; }},
  }});
}}
"#
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A package at `dir` named `name` whose `extensions/` directory registers `tool`.
fn package(dir: &Path, name: &str, tool: &str) -> PathBuf {
    write(
        &dir.join("package.json"),
        &json!({"name": name, "version": "1.0.0"}).to_string(),
    );
    write(
        &dir.join(format!("extensions/{tool}.ts")),
        &tool_extension(tool),
    );
    dir.to_path_buf()
}

/// `tandem ARGS` exactly as given (package commands come first on the line), with `env`.
fn tandem(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Run {
    let node = node().display().to_string();
    let cache = sandbox.home.join("cache").display().to_string();
    let mut all: Vec<(&str, &str)> = vec![("TANDEM_NODE", &node), ("XDG_CACHE_HOME", &cache)];
    all.extend_from_slice(env);
    sandbox.run_with_env(args, None, &all)
}

/// pi 1.6 (`scripts/install-pi16`) in the sandbox's project with its agent directory, offline.
fn pi(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Run {
    let bin = workspace_root().join("target/pi16/bin/pi");
    assert!(
        bin.exists(),
        "pi 1.6 is not installed: run scripts/install-pi16"
    );
    let output = Command::new(bin)
        .args(args)
        .current_dir(&sandbox.cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sandbox.home)
        .env("PI_CODING_AGENT_DIR", &sandbox.agent_dir)
        .env("PI_OFFLINE", "1")
        .envs(env.iter().copied())
        .output()
        .expect("runs pi");
    Run {
        code: output.status.code().expect("pi exited normally"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn settings_text(sandbox: &Sandbox) -> String {
    std::fs::read_to_string(sandbox.agent_dir.join("settings.json")).expect("settings.json")
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("runs git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A bare repository `<home>/repos/team/tools.git` holding a package with tool `from_git`, and
/// the environment under which `git:git.test/team/tools` clones it.
struct Repo {
    work: PathBuf,
    env: Vec<(String, String)>,
}

impl Repo {
    fn new(sandbox: &Sandbox) -> Repo {
        let repos = sandbox.home.join("repos");
        let bare = repos.join("team/tools.git");
        std::fs::create_dir_all(&bare).expect("mkdir");
        git(&bare, &["init", "-q", "--bare", "-b", "main"]);
        let work = sandbox.home.join("tools-work");
        std::fs::create_dir_all(&work).expect("mkdir");
        git(&work, &["init", "-q", "-b", "main"]);
        package(&work, "team-tools", "from_git");
        git(&work, &["add", "."]);
        git(&work, &["commit", "-q", "-m", "first"]);
        git(
            &work,
            &["push", "-q", bare.to_str().expect("utf-8"), "main"],
        );
        let env = vec![
            ("GIT_CONFIG_NOSYSTEM".to_string(), "1".to_string()),
            ("GIT_CONFIG_COUNT".to_string(), "1".to_string()),
            (
                "GIT_CONFIG_KEY_0".to_string(),
                format!("url.file://{}/.insteadOf", repos.display()),
            ),
            (
                "GIT_CONFIG_VALUE_0".to_string(),
                "https://git.test/".to_string(),
            ),
        ];
        Repo { work, env }
    }

    fn env(&self) -> Vec<(&str, &str)> {
        self.env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    }

    /// A second commit: the tool becomes `from_git_v2`.
    fn push_update(&self, sandbox: &Sandbox) {
        std::fs::remove_file(self.work.join("extensions/from_git.ts")).expect("rm");
        write(
            &self.work.join("extensions/from_git_v2.ts"),
            &tool_extension("from_git_v2"),
        );
        git(&self.work, &["add", "-A"]);
        git(&self.work, &["commit", "-q", "-m", "second"]);
        let bare = sandbox.home.join("repos/team/tools.git");
        git(
            &self.work,
            &["push", "-q", bare.to_str().expect("utf-8"), "main"],
        );
    }
}

/// A stand-in for npm (settings.json's `npmCommand`): `install SPEC --prefix ROOT …` copies
/// `<home>/registry/NAME` to `ROOT/node_modules/NAME` (failing, with npm-like stderr, for a
/// name it does not have); `uninstall NAME --prefix ROOT` removes it. Each call's arguments go
/// to `<home>/npm-calls`.
fn fake_npm(sandbox: &Sandbox) -> String {
    let script = sandbox.home.join("fake-npm");
    let registry = sandbox.home.join("registry");
    let calls = sandbox.home.join("npm-calls");
    write(
        &script,
        &format!(
            r#"#!/bin/sh
echo "$@" >> '{calls}'
cmd=$1; spec=$2; shift 2
root=
while [ $# -gt 0 ]; do
  if [ "$1" = --prefix ]; then root=$2; shift; fi
  shift
done
name=${{spec%@*}}
[ -n "$name" ] || name=$spec
case $cmd in
  install)
    if [ ! -d '{registry}'/"$name" ]; then
      echo "npm error code E404" >&2
      echo "npm error 404 Not Found - GET https://registry.npmjs.org/$name" >&2
      exit 1
    fi
    mkdir -p "$root/node_modules" && rm -rf "$root/node_modules/$name" &&
      cp -R '{registry}'/"$name" "$root/node_modules/$name" ;;
  uninstall) rm -rf "$root/node_modules/$spec" ;;
esac
"#,
            calls = calls.display(),
            registry = registry.display()
        ),
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script.display().to_string()
}

#[test]
fn a_local_package_is_installed_listed_loaded_and_removed_keeping_the_settings_comments() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    sandbox.write_agent_file(
        "settings.json",
        "{\n  // chosen with care\n  \"defaultThinkingLevel\": \"off\"\n}\n",
    );
    let pkg = package(&sandbox.home.join("local-pkg"), "local-pkg", "from_local");
    write(
        &pkg.join("skills/pkg-skill/SKILL.md"),
        "---\nname: pkg-skill\ndescription: A skill from a package\n---\n\nDo it well.\n",
    );
    write(
        &pkg.join("prompts/pkg-prompt.md"),
        "Template body from the package",
    );

    let out = tandem(&sandbox, &["install", "../local-pkg"], &[]);
    out.expect_code(0);
    assert!(
        out.stdout.contains("Installed ../local-pkg"),
        "{}",
        out.stdout
    );
    let text = settings_text(&sandbox);
    assert!(text.contains("// chosen with care"), "{text}");
    assert!(text.contains("\"defaultThinkingLevel\": \"off\""), "{text}");
    assert!(
        text.contains("\"packages\": [\n    \"../local-pkg\"\n  ]"),
        "{text}"
    );

    let out = tandem(&sandbox, &["list"], &[]);
    out.expect_code(0);
    assert!(
        out.stdout.contains("User packages:\n  ../local-pkg\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&pkg.display().to_string()),
        "{}",
        out.stdout
    );

    sandbox.answer(&Turn::text("loaded"));
    run_env(&sandbox, &["-p", "hi"], &[]).expect_code(0);
    assert!(sandbox.offered_tools(0).contains(&"from_local".to_string()));
    let body = sandbox.requests()[0].json().expect("JSON");
    assert!(
        system_prompt(&body).contains("pkg-skill"),
        "the package's skill is offered"
    );
    sandbox.answer(&Turn::text("templated"));
    run_env(&sandbox, &["-p", "/pkg-prompt"], &[]).expect_code(0);
    assert!(body_mentions(
        &sandbox.requests()[1],
        "Template body from the package"
    ));

    let out = tandem(&sandbox, &["remove", "../local-pkg"], &[]);
    out.expect_code(0);
    assert!(
        out.stdout.contains("Removed ../local-pkg"),
        "{}",
        out.stdout
    );
    let text = settings_text(&sandbox);
    assert!(text.contains("// chosen with care"), "{text}");
    assert!(text.contains("\"packages\": []"), "{text}");
    assert!(pkg.exists(), "a local package is never deleted");
    let out = tandem(&sandbox, &["uninstall", "../local-pkg"], &[]);
    out.expect_code(1);
    assert!(out.stderr.contains("No matching package"), "{}", out.stderr);

    sandbox.answer(&Turn::text("gone"));
    run_env(&sandbox, &["-p", "hi"], &[]).expect_code(0);
    assert!(!sandbox.offered_tools(2).contains(&"from_local".to_string()));
}

#[test]
fn project_packages_need_a_trusted_folder_to_be_written_and_to_load() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    package(&sandbox.home.join("team-pkg"), "team-pkg", "from_project");
    write(&sandbox.cwd.join(".pi/settings.json"), "{}");
    let out = tandem(&sandbox, &["install", "-l", "../team-pkg"], &[]);
    out.expect_code(1);
    assert!(out.stderr.contains("is not trusted"), "{}", out.stderr);
    assert_eq!(sandbox.read(".pi/settings.json"), "{}");

    let out = tandem(
        &sandbox,
        &["install", "-l", "../team-pkg", "--approve"],
        &[],
    );
    out.expect_code(0);
    assert!(
        out.stdout.contains("once"),
        "the note on trust: {}",
        out.stdout
    );
    assert!(sandbox
        .read(".pi/settings.json")
        .contains("\"../../team-pkg\""));
    assert!(!sandbox.agent_dir.join("settings.json").exists());

    sandbox.answer(&Turn::text("untrusted"));
    run_env(&sandbox, &["-p", "hi"], &[]).expect_code(0);
    assert!(!sandbox
        .offered_tools(0)
        .contains(&"from_project".to_string()));
    sandbox.answer(&Turn::text("trusted"));
    run_env(&sandbox, &["--approve", "-p", "hi"], &[]).expect_code(0);
    assert!(sandbox
        .offered_tools(1)
        .contains(&"from_project".to_string()));

    let out = tandem(&sandbox, &["list"], &[]);
    assert!(out.stdout.contains("not listed"), "{}", out.stdout);
    let out = tandem(&sandbox, &["list", "-a"], &[]);
    assert!(
        out.stdout.contains("Project packages:\n  ../../team-pkg"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_git_package_is_cloned_from_a_local_repository_updated_and_removed() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let repo = Repo::new(&sandbox);
    let env = repo.env();
    let out = tandem(&sandbox, &["install", "git:git.test/team/tools"], &env);
    out.expect_code(0);
    let clone = sandbox.agent_dir.join("git/git.test/team/tools");
    assert!(
        clone.join("extensions/from_git.ts").exists(),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.agent_dir.join("git/.gitignore")).expect("gitignore"),
        "*\n!.gitignore\n"
    );
    assert!(settings_text(&sandbox).contains("\"git:git.test/team/tools\""));

    sandbox.answer(&Turn::text("one"));
    run_env(&sandbox, &["-p", "hi"], &env).expect_code(0);
    assert!(sandbox.offered_tools(0).contains(&"from_git".to_string()));

    repo.push_update(&sandbox);
    let out = tandem(&sandbox, &["update"], &env);
    out.expect_code(0);
    assert!(out.stdout.contains("Updated 1 package:"), "{}", out.stdout);
    assert!(clone.join("extensions/from_git_v2.ts").exists());
    assert!(!clone.join("extensions/from_git.ts").exists());
    let out = tandem(&sandbox, &["update", "git:git.test/team/tools"], &env);
    out.expect_code(0);
    assert!(
        out.stdout.contains("is already up to date"),
        "{}",
        out.stdout
    );

    sandbox.answer(&Turn::text("two"));
    run_env(&sandbox, &["-p", "hi"], &env).expect_code(0);
    assert!(sandbox
        .offered_tools(1)
        .contains(&"from_git_v2".to_string()));

    let out = tandem(&sandbox, &["remove", "git:git.test/team/tools"], &env);
    out.expect_code(0);
    assert!(!clone.exists());
    assert!(
        !sandbox.agent_dir.join("git/git.test").exists(),
        "empty parents go too"
    );
}

#[test]
fn an_npm_package_installs_through_npm_command_and_e_npm_for_one_run() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let npm = fake_npm(&sandbox);
    package(
        &sandbox.home.join("registry/npm-tools"),
        "npm-tools",
        "from_npm",
    );
    package(
        &sandbox.home.join("registry/once-tools"),
        "once-tools",
        "from_once",
    );
    sandbox.write_settings(json!({"npmCommand": [npm]}));

    let out = tandem(&sandbox, &["install", "npm:npm-tools"], &[]);
    out.expect_code(0);
    let root = sandbox.agent_dir.join("npm");
    assert!(root
        .join("node_modules/npm-tools/extensions/from_npm.ts")
        .exists());
    assert_eq!(
        std::fs::read_to_string(root.join("package.json")).expect("package.json"),
        "{\n  \"name\": \"pi-extensions\",\n  \"private\": true\n}"
    );
    let calls = std::fs::read_to_string(sandbox.home.join("npm-calls")).expect("calls");
    assert_eq!(
        calls.lines().next(),
        Some(
            format!(
                "install npm-tools --prefix {} --legacy-peer-deps --no-audit --no-fund",
                root.display()
            )
            .as_str()
        )
    );

    sandbox.answer(&Turn::text("one"));
    run_env(&sandbox, &["-e", "npm:once-tools", "-p", "hi"], &[]).expect_code(0);
    let tools = sandbox.offered_tools(0);
    assert!(tools.contains(&"from_npm".to_string()), "{tools:?}");
    assert!(tools.contains(&"from_once".to_string()), "{tools:?}");
    assert!(
        sandbox
            .agent_dir
            .join("tmp/extensions/npm/f35b2129/node_modules/once-tools")
            .exists(),
        "-e packages go where pi puts them"
    );
    assert!(
        !settings_text(&sandbox).contains("once-tools"),
        "-e is for one run"
    );

    let out = tandem(&sandbox, &["remove", "npm:npm-tools"], &[]);
    out.expect_code(0);
    assert!(!root.join("node_modules/npm-tools").exists());

    let out = tandem(&sandbox, &["install", "npm:not-published"], &[]);
    out.expect_code(1);
    assert!(out.stderr.contains("404 Not Found"), "{}", out.stderr);
    assert!(!settings_text(&sandbox).contains("not-published"));
}

#[test]
fn e_loads_a_local_package_directory_for_one_run() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let pkg = package(&sandbox.home.join("try-me"), "try-me", "from_try");
    sandbox.answer(&Turn::text("tried"));
    run_env(
        &sandbox,
        &["-e", pkg.to_str().expect("utf-8"), "-p", "hi"],
        &[],
    )
    .expect_code(0);
    assert!(sandbox.offered_tools(0).contains(&"from_try".to_string()));
    assert!(!sandbox.agent_dir.join("settings.json").exists());
}

#[test]
fn a_package_that_cannot_be_installed_is_reported_and_the_run_still_answers() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let npm = fake_npm(&sandbox);
    let repo = Repo::new(&sandbox);
    sandbox.write_settings(json!({
        "npmCommand": [npm],
        "packages": ["npm:nowhere", "git:git.test/team/missing", "git:git.test/team/tools"],
    }));
    sandbox.answer(&Turn::text("still answered"));
    let out = run_env(&sandbox, &["-p", "hi"], &repo.env());
    out.expect_code(0);
    assert_eq!(out.stdout, "still answered\n");
    assert!(out.stderr.contains("npm:nowhere"), "{}", out.stderr);
    assert!(out.stderr.contains("404 Not Found"), "{}", out.stderr);
    assert!(
        out.stderr.contains("git:git.test/team/missing"),
        "{}",
        out.stderr
    );
    assert_eq!(
        out.stderr.matches("npm:nowhere").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(
        sandbox.offered_tools(0).contains(&"from_git".to_string()),
        "a configured package that was missing is installed at the start"
    );
}

#[test]
fn pi_reads_what_tandem_installed_and_tandem_loads_what_pi_installed() {
    let sandbox = Sandbox::new(WireApi::OpenAiCompletions);
    let repo = Repo::new(&sandbox);
    let env = repo.env();
    package(&sandbox.home.join("ours"), "ours", "from_tandem_install");
    package(&sandbox.cwd.join("theirs"), "theirs", "from_pi_install");

    tandem(&sandbox, &["install", "../ours"], &env).expect_code(0);
    let out = pi(&sandbox, &["list"], &env);
    out.expect_code(0);
    assert!(
        out.stdout.contains("../ours"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stdout
            .contains(&sandbox.home.join("ours").display().to_string()),
        "{}",
        out.stdout
    );

    let out = pi(&sandbox, &["install", "./theirs"], &env);
    out.expect_code(0);
    let out = pi(&sandbox, &["install", "git:git.test/team/tools"], &env);
    out.expect_code(0);
    let out = tandem(&sandbox, &["list"], &env);
    out.expect_code(0);
    for shown in ["../ours", "../project/theirs", "git:git.test/team/tools"] {
        assert!(out.stdout.contains(shown), "{shown}: {}", out.stdout);
    }
    assert!(!out.stdout.contains("not installed"), "{}", out.stdout);

    sandbox.answer(&Turn::text("all three"));
    run_env(&sandbox, &["-p", "hi"], &env).expect_code(0);
    let tools = sandbox.offered_tools(0);
    for tool in ["from_tandem_install", "from_pi_install", "from_git"] {
        assert!(tools.contains(&tool.to_string()), "{tool}: {tools:?}");
    }

    // Removed by Tandem, gone for pi.
    tandem(&sandbox, &["remove", "./theirs"], &env).expect_code(0);
    let out = pi(&sandbox, &["list"], &env);
    assert!(!out.stdout.contains("theirs"), "{}", out.stdout);
}
