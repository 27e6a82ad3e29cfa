//! Scenario files: a learner's own script for one run of an exercise's function.
//!
//! A file names its exercise with a top-level `exercise = "stage8"` (build3 when absent):
//! - build3 ([`retry`]): an optional `[policy]`, then `[[outcome]]` entries for `request`;
//! - stage8 ([`gateway`]): an optional `[gateway]` config, optional `[[lookup]]` entries,
//!   then `[[outcome]]` entries for the provider, with latencies.
//!
//! Every run is rendered as a [`ScenarioRun`]: named fields a person reads, and that two
//! runs can be compared on, field by field. It is also what the harness process sends back.

pub mod gateway;
pub mod retry;

pub use gateway::GatewayScenario;
pub use retry::{event_json, run, Scenario};

use crate::harness::panic_message;
use crate::outcome::is_stub_panic;
use crate::Implementation;
use serde::{Deserialize, Serialize};
use std::any::Any;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A scenario file that could not be used, with the place to look.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{}:{line}:{column}: {message}", path.display())]
pub struct ScenarioError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong, naming the key.
    pub message: String,
}

impl ScenarioError {
    /// An error at byte `offset` of `text`.
    pub fn at(path: &Path, text: &str, offset: usize, message: String) -> Self {
        let before = &text[..offset.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ScenarioError {
            path: path.to_path_buf(),
            line,
            column,
            message,
        }
    }

    /// An error from the TOML parser, placed where it points.
    pub fn from_toml(path: &Path, text: &str, e: &toml::de::Error) -> Self {
        let offset = e.span().map_or(0, |s| s.start);
        ScenarioError::at(path, text, offset, e.message().trim_end().to_string())
    }
}

/// The `[[outcome]]` list both formats share: at least one entry, each converted by
/// `convert`, and `forever` allowed only on the last. Returns the converted outcomes and
/// whether the last one repeats.
fn outcomes<S, T>(
    path: &Path,
    text: &str,
    specs: Vec<toml::Spanned<S>>,
    first_call: &str,
    forever: impl Fn(&S) -> bool,
    convert: impl Fn(&S) -> Result<T, String>,
) -> Result<(Vec<T>, bool), ScenarioError> {
    let error = |offset: usize, message: String| ScenarioError::at(path, text, offset, message);
    if specs.is_empty() {
        return Err(error(
            text.len(),
            format!("no [[outcome]]: add what {first_call}"),
        ));
    }
    let count = specs.len();
    let mut converted = Vec::with_capacity(count);
    let mut repeat = false;
    for (i, spanned) in specs.into_iter().enumerate() {
        let (at, n) = (spanned.span().start, i + 1);
        let spec = spanned.into_inner();
        repeat = forever(&spec);
        if repeat && n != count {
            return Err(error(
                at,
                format!("outcome {n}: `forever` only goes on the last outcome"),
            ));
        }
        converted.push(convert(&spec).map_err(|m| error(at, format!("outcome {n}: {m}")))?);
    }
    Ok((converted, repeat))
}

/// A scenario of any exercise.
#[derive(Debug)]
pub enum AnyScenario {
    /// build3: `retry_request`.
    Retry(Scenario),
    /// stage8: `lookup_availability`.
    Gateway(GatewayScenario),
}

#[derive(Deserialize)]
struct ExerciseKey {
    #[serde(default)]
    exercise: Option<toml::Spanned<String>>,
}

impl AnyScenario {
    /// Reads a scenario file of any exercise.
    pub fn load(path: &Path) -> Result<AnyScenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: format!("cannot read the file: {e}"),
        })?;
        AnyScenario::parse(path, &text)
    }

    /// Parses scenario text of any exercise; `path` is used in messages only.
    pub fn parse(path: &Path, text: &str) -> Result<AnyScenario, ScenarioError> {
        // Only `exercise` is read here; the format's own parser refuses unknown keys.
        let key: ExerciseKey =
            toml::from_str(text).map_err(|e| ScenarioError::from_toml(path, text, &e))?;
        match key.exercise {
            None => Scenario::parse(path, text).map(AnyScenario::Retry),
            Some(name) if name.get_ref() == "build3" => {
                Scenario::parse(path, text).map(AnyScenario::Retry)
            }
            Some(name) if name.get_ref() == "stage8" => {
                GatewayScenario::parse(path, text).map(AnyScenario::Gateway)
            }
            Some(name) => Err(ScenarioError::at(
                path,
                text,
                name.span().start,
                format!(
                    "exercise {:?} has no scenarios: use \"build3\" or \"stage8\"",
                    name.get_ref()
                ),
            )),
        }
    }

    /// The exercise group the scenario belongs to.
    pub fn group(&self) -> &'static str {
        match self {
            AnyScenario::Retry(_) => "build3",
            AnyScenario::Gateway(_) => "stage8",
        }
    }

    /// One line describing the settings the run uses.
    pub fn settings(&self) -> String {
        match self {
            AnyScenario::Retry(s) => {
                let p = &s.policy;
                format!(
                    "policy:  method {:?}, max_attempts {}, base_delay {:?}, max_delay {:?}",
                    p.method, p.max_attempts, p.base_delay, p.max_delay
                )
            }
            AnyScenario::Gateway(s) => {
                let c = &s.config;
                format!(
                    "gateway: deadline {:?}, max_attempts {}, attempt_timeout {:?}, base_delay {:?}, \
                     max_delay {:?}, failure_threshold {}, open_for {:?}",
                    c.deadline, c.max_attempts, c.attempt_timeout, c.base_delay, c.max_delay,
                    c.failure_threshold, c.open_for
                )
            }
        }
    }

    /// Runs the scenario on `imp`, in this process.
    pub fn run(&self, imp: &Implementation) -> ScenarioRun {
        match self {
            AnyScenario::Retry(s) => retry::run(imp, s),
            AnyScenario::Gateway(s) => gateway::run(imp, s),
        }
    }
}

/// One named part of a run: `calls`, `waits`, `events`, `breaker`…
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    /// The name, e.g. `waits`.
    pub name: String,
    /// Its value: one line, or one line per item.
    pub lines: Vec<String>,
    /// Shown as a list under its name even when it has one line.
    pub block: bool,
}

impl Field {
    /// A field shown on one line.
    pub fn line(name: &str, value: impl Into<String>) -> Self {
        Field {
            name: name.into(),
            lines: vec![value.into()],
            block: false,
        }
    }

    /// A field shown as a list, one item per line.
    pub fn block(name: &str, lines: Vec<String>) -> Self {
        Field {
            name: name.into(),
            lines,
            block: true,
        }
    }
}

/// One run of a scenario, rendered for people. Floats are text, so NaN and infinity survive
/// the trip from the harness process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioRun {
    /// What the run did, field by field.
    pub fields: Vec<Field>,
    /// `returned: …`, `refused: …`, `ended: …`, `panicked: …`, `unfinished: …` or `error: …`.
    pub ending: String,
    /// The function returned normally (a value or a refusal).
    pub finished: bool,
}

impl ScenarioRun {
    /// A run that ended before anything could be recorded.
    pub fn stopped(ending: String) -> Self {
        ScenarioRun {
            fields: Vec::new(),
            ending,
            finished: false,
        }
    }

    /// Whether the function returned (a value or a refusal), rather than panicking, reaching
    /// `todo!()` or running out of script.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The run as printed by `grader scenario`: one fact per line, lists one item per line.
    pub fn render(&self) -> Vec<String> {
        let mut lines = render_fields(&self.fields);
        lines.push(self.ending.clone());
        lines
    }
}

/// Fields as lines: `name:   value` for one-line fields (values aligned), and `name:` then
/// one indented line per item for lists.
pub fn render_fields(fields: &[Field]) -> Vec<String> {
    let mut lines = Vec::new();
    // Values of one-line fields start in one column, after the longest name.
    let width = fields
        .iter()
        .filter(|f| !f.block)
        .map(|f| f.name.chars().count() + 2)
        .max()
        .unwrap_or(0)
        .max(9);
    for field in fields {
        match (field.block, field.lines.as_slice()) {
            (false, [one]) => lines.push(format!("{:<width$}{one}", format!("{}:", field.name))),
            (_, []) => lines.extend([format!("{}:", field.name), "  (none)".into()]),
            (_, items) => {
                lines.push(format!("{}:", field.name));
                lines.extend(items.iter().map(|l| format!("  {l}")));
            }
        }
    }
    lines
}

/// How a run that panicked ended, as its ending line says it.
pub fn panic_ending(payload: &(dyn Any + Send)) -> String {
    let message = panic_message(payload);
    if is_stub_panic(&message) {
        format!("unfinished: the function reached todo!() ({message})")
    } else {
        format!("panicked: {message}")
    }
}

/// Two runs field by field: a field both runs agree on is shown once; a field where they
/// differ is marked `≠` and shows each run's value, one under the other.
///
/// ```
/// use grader::scenario::{side_by_side, Field, ScenarioRun};
/// let run = |calls: u32| ScenarioRun {
///     fields: vec![Field::line("calls", calls.to_string()), Field::line("waits", "[]")],
///     ending: "returned: 1".into(),
///     finished: true,
/// };
/// let text = side_by_side(("yours", &run(2)), ("reference", &run(1)));
/// assert!(text.contains("≠ calls\n    yours:     2\n    reference: 1\n"));
/// assert!(text.contains("  waits: [] (same)"));
/// ```
pub fn side_by_side(left: (&str, &ScenarioRun), right: (&str, &ScenarioRun)) -> String {
    let (a, b) = (left.1, right.1);
    let width = left.0.len().max(right.0.len()) + 1;
    let mut out = String::new();
    let mut names: Vec<&str> = a.fields.iter().map(|f| f.name.as_str()).collect();
    for f in &b.fields {
        if !names.contains(&f.name.as_str()) {
            names.push(&f.name);
        }
    }
    let lines_of = |run: &ScenarioRun, name: &str| -> (Vec<String>, bool) {
        run.fields
            .iter()
            .find(|f| f.name == name)
            .map_or((vec!["(not recorded)".into()], false), |f| {
                (f.lines.clone(), f.block)
            })
    };
    let mut fields: Vec<(String, Vec<String>, Vec<String>, bool)> = names
        .iter()
        .map(|name| {
            let (x, block) = lines_of(a, name);
            let (y, _) = lines_of(b, name);
            (name.to_string(), x, y, block)
        })
        .collect();
    fields.push((
        "result".into(),
        vec![a.ending.clone()],
        vec![b.ending.clone()],
        false,
    ));
    for (name, x, y, block) in fields {
        if x == y {
            match x.as_slice() {
                [single] if !block => out.push_str(&format!("  {name}: {single} (same)\n")),
                _ => {
                    out.push_str(&format!("  {name} (same):\n"));
                    x.iter().for_each(|l| out.push_str(&format!("      {l}\n")));
                }
            }
            continue;
        }
        out.push_str(&format!("≠ {name}\n"));
        for (label, lines) in [(left.0, &x), (right.0, &y)] {
            let label = format!("{label}:");
            match lines.as_slice() {
                [one] => out.push_str(&format!("    {label:width$} {one}\n")),
                [] => out.push_str(&format!("    {label:width$} (none)\n")),
                many => {
                    out.push_str(&format!("    {label}\n"));
                    many.iter()
                        .for_each(|l| out.push_str(&format!("      {l}\n")));
                }
            }
        }
    }
    out
}
