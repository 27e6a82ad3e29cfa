//! Rebuilding the learner's harness without cargo, while only the learner's code changes.
//!
//! After an edit of the learner's file, cargo spends about 0.1 s finding that only two
//! compiler runs are needed — the practice crate, then the harness that links it. So once
//! per state of the kit (the second of [`fingerprints`](crate::cache::fingerprints)), the
//! grader has cargo show the two commands it runs (`cargo build -vv`, see
//! [`steps_from_cargo`]) and keeps them as a
//! [`Recipe`]; while nothing but the learner's `.rs` files changes, it runs those commands
//! itself ([`run`]).
//!
//! Anything unexpected — a compile error, a message it cannot read, a file that is gone —
//! makes [`run`] give up, and the caller builds with cargo as usual, which compiles and
//! reports everything the normal way. cargo is never misled: its own records of the practice
//! crate predate the edit, so its next build compiles the crate again.

use crate::cache::Fingerprint;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One compiler run as cargo made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The crate it compiles (`practice`, `practice_harness`).
    pub crate_name: String,
    /// The compiler.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The variables cargo set for it.
    pub env: Vec<(String, String)>,
}

/// The two compiler runs that rebuild a lesson's harness after an edit of the learner's code,
/// and what they are valid for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recipe {
    /// How the grader that made it makes recipes ([`RECIPE_FORMAT`]): a recipe made another
    /// way (an older grader's) is made again.
    pub format: u32,
    /// The kit's state without the learner's code when cargo ran them.
    pub key: Fingerprint,
    /// The folder they run in (the workspace root).
    pub root: PathBuf,
    /// The target folder they write to.
    pub target: PathBuf,
    /// Whether their messages carry colour.
    pub color: bool,
    /// The practice crate's run, then the harness's.
    pub steps: Vec<Step>,
}

/// How this grader makes recipes; raised whenever that changes (2: the harness links
/// without debug information).
pub const RECIPE_FORMAT: u32 = 2;

/// What a replayed build made.
#[derive(Debug, PartialEq, Eq)]
pub struct Replayed {
    /// The harness executable (in `target/debug/deps`).
    pub executable: PathBuf,
    /// The practice crate's artifacts (its `.rmeta` and `.rlib`).
    pub practice_artifacts: Vec<PathBuf>,
    /// The compiler's warnings about the learner's code, rendered.
    pub warnings: Vec<String>,
}

/// The crates a recipe compiles, in order.
pub const CRATES: [&str; 2] = ["practice", "practice_harness"];

/// The compiler runs for [`CRATES`] among what `cargo build -vv` printed on its standard
/// error (`Running `VAR=value … rustc --crate-name practice …``), or `None` when one is not
/// there or cannot be read.
///
/// The harness's run links without debug information (`-C strip=debuginfo`): the link is
/// the largest part of a rebuild after an edit, and stripping makes it about 0.01 s faster.
/// Nothing is lost: a check reports where the learner's code panicked from the panic itself,
/// and no report reads a backtrace. (cargo's own build of the harness keeps the profile's
/// setting: changing the profile in the kit's folder would rebuild the shared crates.)
pub fn steps_from_cargo(stderr: &str) -> Option<Vec<Step>> {
    let steps: Vec<Step> = stderr.lines().filter_map(running_step).collect();
    let mut steps: Vec<Step> = CRATES
        .iter()
        .map(|name| steps.iter().find(|s| s.crate_name == *name).cloned())
        .collect::<Option<_>>()?;
    let harness = &mut steps[1];
    if !harness.args.iter().any(|a| a.starts_with("strip=")) {
        harness
            .args
            .extend(["-C".to_string(), "strip=debuginfo".to_string()]);
    }
    Some(steps)
}

/// One `Running `…`` line of cargo's, as a [`Step`].
fn running_step(line: &str) -> Option<Step> {
    let command = line.trim().strip_prefix("Running `")?.strip_suffix('`')?;
    let mut words = shell_words(command)?.into_iter().peekable();
    let mut env = Vec::new();
    while let Some((name, value)) = words.peek().and_then(|w| env_assignment(w)) {
        env.push((name, value));
        words.next();
    }
    let program = words.next()?;
    let args: Vec<String> = words.collect();
    let crate_name = args
        .windows(2)
        .find(|w| w[0] == "--crate-name")
        .map(|w| w[1].clone())?;
    Some(Step {
        crate_name,
        program,
        args,
        env,
    })
}

/// `NAME=value` with a name as cargo's variables have them.
fn env_assignment(word: &str) -> Option<(String, String)> {
    let (name, value) = word.split_once('=')?;
    let is_name = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    is_name.then(|| (name.to_string(), value.to_string()))
}

/// Splits a command line as a POSIX shell would (cargo quotes with `'…'` and `'\''`), or
/// `None` when a quote is left open.
fn shell_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// A line rustc writes on its standard error with `--error-format=json`.
#[derive(Deserialize)]
struct RustcLine {
    #[serde(rename = "$message_type", default)]
    message_type: String,
    #[serde(default)]
    level: String,
    #[serde(default)]
    rendered: Option<String>,
    #[serde(default)]
    artifact: Option<PathBuf>,
    #[serde(default)]
    emit: Option<String>,
}

/// Runs `recipe`'s compiler commands. `None` means "build with cargo instead": a step failed,
/// reported an error, or printed something this cannot read.
pub fn run(recipe: &Recipe) -> Option<Replayed> {
    let [practice, harness] = recipe.steps.as_slice() else {
        return None;
    };
    let (practice_lines, harness_lines) = (compile(recipe, practice)?, compile(recipe, harness)?);
    let artifacts = |lines: &[RustcLine], emit: &str| -> Vec<PathBuf> {
        lines
            .iter()
            .filter(|l| l.message_type == "artifact" && l.emit.as_deref() == Some(emit))
            .filter_map(|l| l.artifact.clone())
            .collect()
    };
    let executable = artifacts(&harness_lines, "link").into_iter().next()?;
    let mut practice_artifacts = artifacts(&practice_lines, "metadata");
    practice_artifacts.extend(artifacts(&practice_lines, "link"));
    let warnings = practice_lines
        .iter()
        .filter(|l| l.message_type == "diagnostic")
        .filter_map(|l| l.rendered.clone())
        .collect();
    Some(Replayed {
        executable,
        practice_artifacts,
        warnings,
    })
}

/// Runs one step; its lines, or `None` when it failed or said something unexpected.
fn compile(recipe: &Recipe, step: &Step) -> Option<Vec<RustcLine>> {
    let output = Command::new(&step.program)
        .args(&step.args)
        .envs(step.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&recipe.root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stderr).ok()?;
    let mut lines = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let line: RustcLine = serde_json::from_str(line).ok()?;
        match line.message_type.as_str() {
            "artifact" => {}
            // Warnings only; an error means the build failed after all.
            "diagnostic" if line.level.starts_with("warning") || line.level == "note" => {}
            "future_incompat" => continue,
            _ => return None,
        }
        lines.push(line);
    }
    Some(lines)
}

/// Whether `recipe` was made by this grader's way of making them, for this kit state,
/// folder and colour, and its compiler is still there.
pub fn fits(recipe: &Recipe, key: &Fingerprint, root: &Path, target: &Path, color: bool) -> bool {
    recipe.format == RECIPE_FORMAT
        && recipe.key == *key
        && recipe.root == root
        && recipe.target == target
        && recipe.color == color
        && recipe.steps.len() == CRATES.len()
        && recipe.steps.iter().all(|s| Path::new(&s.program).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as cargo 1.9x prints them with `-vv` (shortened).
    const CARGO_VV: &str = "\
   Compiling practice v0.1.0 (/k/practice)
     Running `CARGO=/c/bin/cargo CARGO_CRATE_NAME=practice CARGO_MANIFEST_DIR=/k/practice CARGO_PKG_DESCRIPTION='The learner'\\''s crate' /t/bin/rustc --crate-name practice --edition=2021 practice/src/root.rs --error-format=json --cfg 'feature=\"build3\"' -C metadata=1a2b --out-dir /k/target/debug/deps -L dependency=/k/target/debug/deps`
   Compiling practice-harness v0.1.0 (/k/grader/harness)
     Running `CARGO=/c/bin/cargo CARGO_CRATE_NAME=practice_harness /t/bin/rustc --crate-name practice_harness --edition=2021 grader/harness/src/main.rs --crate-type bin --extern practice=/k/target/debug/deps/libpractice-1a2b.rlib`
    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.31s
";

    #[test]
    fn cargos_running_lines_become_the_two_steps() {
        let steps = steps_from_cargo(CARGO_VV).expect("both steps");
        assert_eq!(steps.len(), 2);
        let practice = &steps[0];
        assert_eq!(practice.crate_name, "practice");
        assert_eq!(practice.program, "/t/bin/rustc");
        assert!(practice
            .env
            .contains(&("CARGO_PKG_DESCRIPTION".into(), "The learner's crate".into())));
        assert!(practice.args.contains(&"feature=\"build3\"".to_string()));
        assert_eq!(practice.args[0], "--crate-name");
        assert_eq!(steps[1].crate_name, "practice_harness");
        assert_eq!(steps[1].env.len(), 2);
        // Only the harness is linked without debug information, and only once.
        assert!(!practice.args.iter().any(|a| a.starts_with("strip=")));
        assert!(steps[1]
            .args
            .ends_with(&["-C".into(), "strip=debuginfo".into()]));
        let stripped = CARGO_VV.replace("--crate-type bin", "--crate-type bin -C strip=debuginfo");
        let again = steps_from_cargo(&stripped).expect("both steps");
        assert_eq!(
            again[1]
                .args
                .iter()
                .filter(|a| a.starts_with("strip="))
                .count(),
            1
        );
    }

    #[test]
    fn a_missing_step_or_an_open_quote_is_no_recipe() {
        let only_practice: String = CARGO_VV
            .lines()
            .filter(|l| !l.contains("practice_harness"))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(steps_from_cargo(&only_practice), None);
        assert_eq!(shell_words("rustc 'open"), None);
        assert_eq!(
            shell_words(r#"a 'b c' "d \"e\"" f\ g"#).unwrap(),
            ["a", "b c", "d \"e\"", "f g"]
        );
    }

    #[test]
    fn a_recipe_fits_only_its_own_format_kit_state_folder_and_colour() {
        let rustc = std::env::current_exe().unwrap();
        let step = |name: &str| Step {
            crate_name: name.into(),
            program: rustc.display().to_string(),
            args: vec![],
            env: vec![],
        };
        let recipe = Recipe {
            format: RECIPE_FORMAT,
            key: Fingerprint("k".into()),
            root: "/k".into(),
            target: "/k/target".into(),
            color: false,
            steps: vec![step("practice"), step("practice_harness")],
        };
        let key = Fingerprint("k".into());
        let (root, target) = (Path::new("/k"), Path::new("/k/target"));
        assert!(fits(&recipe, &key, root, target, false));
        assert!(!fits(
            &recipe,
            &Fingerprint("other".into()),
            root,
            target,
            false
        ));
        assert!(!fits(&recipe, &key, Path::new("/copy"), target, false));
        assert!(!fits(&recipe, &key, root, Path::new("/t2"), false));
        assert!(!fits(&recipe, &key, root, target, true));
        let older = Recipe {
            format: RECIPE_FORMAT - 1,
            ..recipe.clone()
        };
        assert!(!fits(&older, &key, root, target, false));
    }

    #[test]
    fn a_failing_or_unreadable_compiler_means_cargo_builds() {
        let recipe = |program: &str, args: &[&str]| Recipe {
            format: RECIPE_FORMAT,
            key: Fingerprint("k".into()),
            root: std::env::temp_dir(),
            target: std::env::temp_dir(),
            color: false,
            steps: vec![
                Step {
                    crate_name: "practice".into(),
                    program: program.into(),
                    args: args.iter().map(|a| a.to_string()).collect(),
                    env: vec![],
                },
                Step {
                    crate_name: "practice_harness".into(),
                    program: program.into(),
                    args: args.iter().map(|a| a.to_string()).collect(),
                    env: vec![],
                },
            ],
        };
        assert_eq!(run(&recipe("false", &[])), None, "a failing step");
        assert_eq!(
            run(&recipe("sh", &["-c", "echo 'error: not JSON' >&2"])),
            None,
            "what it cannot read"
        );
        let error = r#"{"$message_type":"diagnostic","level":"error","rendered":"error: x"}"#;
        assert_eq!(
            run(&recipe("sh", &["-c", &format!("echo '{error}' >&2")])),
            None,
            "a compile error"
        );
        let made = r#"{"$message_type":"artifact","artifact":"/t/deps/h","emit":"link"}"#;
        let warning = r#"{"$message_type":"diagnostic","level":"warning","rendered":"warning: w"}"#;
        let ok = run(&recipe(
            "sh",
            &["-c", &format!("echo '{made}' >&2; echo '{warning}' >&2")],
        ))
        .expect("a clean build with a warning");
        assert_eq!(ok.executable, Path::new("/t/deps/h"));
        assert_eq!(ok.warnings, ["warning: w"]);
    }
}
