//! What a lesson is: its name, its checks, its scenario format, and how it runs a job.
//!
//! A lesson's checks are plain functions over that lesson's learner type (the function the
//! learner writes, as a function pointer), returning `Err(message)` when what they observed
//! differs from the lesson's rules. The child process runs one check at a time (see
//! [`crate::serve`]), so a check may panic, loop or crash without taking the grader with it.
//!
//! The parent process never sees the learner type: it works with [`Lesson`], which names the
//! checks and holds plain function pointers for everything else.

use crate::report::Report;
use crate::scenario::{Format, ScenarioError};
use crate::view::ScenarioRun;
use std::path::Path;
use std::time::Duration;

/// What a check returns: `Err` holds the message shown to the learner.
pub type CheckResult = Result<(), String>;

/// A check's name and the least time it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckInfo {
    /// A libtest-style path, e.g. `fixtures::third_attempt_success`.
    pub name: &'static str,
    /// The least time this check is given, whatever `--timeout` says (an exhaustive check
    /// runs hundreds of thousands of cases).
    pub min_timeout: Duration,
}

/// One named check over learner type `L`.
#[derive(Debug)]
pub struct Check<L> {
    /// Its name and time.
    pub(crate) info: CheckInfo,
    /// Runs the check against one implementation.
    pub(crate) run: fn(&L) -> CheckResult,
}

/// What a child process is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Job {
    /// Run the check of this name.
    Check(String),
    /// Run the scenario file at this path and report the run.
    Scenario(std::path::PathBuf),
}

/// A scenario file of a lesson, parsed: what the run uses, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioSummary {
    /// The settings the run uses, e.g. `policy: method "GET", max_attempts 3, …`.
    pub settings: String,
    /// The ids of the lesson's situations the file covers (`crate::scenario::Situation`).
    pub situations: Vec<&'static str>,
}

/// One lesson, as the parent process sees it.
#[derive(Debug)]
pub struct Lesson {
    /// The lesson's name on the command line, e.g. `build3`.
    pub name: &'static str,
    /// The lesson's title, as `exercises/LESSON/info.toml` gives it.
    pub title: &'static str,
    /// The learner's function the checks call.
    pub function: &'static str,
    /// The checks, in the order they are listed.
    pub checks: &'static [CheckInfo],
    /// Whether a scenario file's text is exactly the one its exhaustive check saves for a
    /// case it found (that case's number): replaying it beside the reference shows only what
    /// the check's failure showed already. `None` for a lesson with no exhaustive check.
    pub saved_case: Option<fn(&str) -> Option<usize>>,
    /// How its scenario files are laid out, in a few words for a hint (`one [[call]] per
    /// call of fetch`).
    pub scenario_shape: &'static str,
    /// What to tell a learner whose code never finished a check: the stops this lesson's
    /// loops need.
    pub stop_hint: &'static str,
    /// Parses a scenario file of this lesson (`path` for messages, `text` its content).
    pub parse_scenario: fn(&Path, &str) -> Result<ScenarioSummary, ScenarioError>,
    /// Runs a scenario file's text on the reference, in this process.
    pub run_scenario_on_reference: fn(&Path, &str) -> Result<ScenarioRun, ScenarioError>,
    /// Runs one job on the reference, in this process (the child side of
    /// `--against reference`).
    pub run_reference: fn(&Job) -> Report,
    /// Data one check of this lesson is handed, if any: see [`CheckInput`].
    pub check_input: Option<CheckInput>,
    /// The ids of the situations the lesson asks the learner's own scenarios to cover, in
    /// order, as the lesson's code recognises them (`situation_ids`).
    pub situations: fn() -> Vec<&'static str>,
    /// The reference's run of every case its exhaustive check compares, as the bytes a
    /// copy of the kit without the answers compiles in from `grader/checks/oracle/NAME.bin`
    /// (`bundle classroom --without-answers` writes them). `None` for a lesson whose checks
    /// need no run of the reference.
    pub oracle: Option<fn() -> Vec<u8>>,
    /// The lesson's test implementations, when it keeps them in its own folder: the kit's
    /// tests grade each of them through the grader, with no list of lessons to extend.
    pub trials: Option<Trials>,
}

/// A lesson's function under check, and where it runs; `F` is the function's graded type
/// (each lesson names its own: `lessons::build3::Learner` is `Learner<RetryFn>`).
#[derive(Debug, Clone)]
pub enum Learner<F> {
    /// In this process: the reference, the kit's own tests, a harness cargo linked with the
    /// practice crate.
    Here(F),
    /// In a runner process that holds the learner's code and nothing of the checks': the
    /// checks send it their inputs and judge what it says it observed.
    Runner(std::sync::Arc<kit_runner::remote::Runner>),
}

impl<F> Learner<F> {
    /// The learner's function of `lesson` in a runner started for this check
    /// ([`kit_runner::remote`]).
    pub fn in_runner(lesson: &str) -> Result<Self, kit_runner::SetupError> {
        kit_runner::remote::Runner::from_env(lesson)
            .map(|runner| Learner::Runner(std::sync::Arc::new(runner)))
    }
}

/// A lesson's test implementations of its function, by label — at least `correct`, `stub`,
/// `spins`, `panics` and `aborts`, and each realistic mistake — for the kit's own tests
/// (`grader/tests/implementations.rs`), which grade each through the grader as a learner's
/// code is graded. Never used to grade a learner.
#[derive(Debug, Clone, Copy)]
pub struct Trials {
    /// Runs `job` on implementation `label`: in `runner` when one is given (started for
    /// this check, it holds [`Trials::function`]'s side), otherwise in this process. `None`
    /// for a label the lesson does not have.
    pub run: fn(
        label: &str,
        job: &Job,
        runner: Option<std::sync::Arc<kit_runner::remote::Runner>>,
    ) -> Option<Report>,
    /// Implementation `label` as a runner holds it.
    pub function: fn(label: &str) -> Option<kit_runner::runner::Function>,
    /// The realistic mistakes among the labels, each with the check that must catch it
    /// first and the words its message must hold.
    pub mistakes: &'static [Mistake],
}

/// A realistic mistake a lesson's test implementation makes, and how the checks must say so.
#[derive(Debug, Clone, Copy)]
pub struct Mistake {
    /// The test implementation's label.
    pub label: &'static str,
    /// The first check, in the lesson's order, that fails.
    pub first: &'static str,
    /// Words its message holds.
    pub says: &'static [&'static str],
}

/// Data the grader computes where no code under test runs, once per state of the checks and
/// the reference (it keeps it in its target folder), and writes to one check's standard
/// input (`crate::serve::check_input` reads it): build3's and stage8's exhaustive checks
/// get the reference's run of every case this way, so each run of the check runs only the
/// learner's code. The check must work without it too (more slowly), and must not trust it blindly: a
/// grader and a harness built from different states of the kit could disagree, and the kept
/// copy is a file like the rest of the target folder.
#[derive(Debug, Clone, Copy)]
pub struct CheckInput {
    /// The check that reads it.
    pub check: &'static str,
    /// Computes it.
    pub make: fn() -> Vec<u8>,
}

impl Lesson {
    /// The check called `name`, if there is one.
    pub fn check(&self, name: &str) -> Option<&'static CheckInfo> {
        self.checks.iter().find(|c| c.name == name)
    }
}

/// Declares a lesson's checks once, as both the typed list the child runs and the names the
/// parent lists, so the two can never disagree:
///
/// ```text
/// checks! { Learner;
///     fixtures::third_attempt_success,
///     exhaustive::matches_reference_on_every_case => 120 s,
/// }
/// ```
///
/// defines `CHECKS: &[Check<Learner>]` and `CHECK_INFO: &[CheckInfo]` in the calling module.
#[macro_export]
macro_rules! checks {
    ($learner:ty; $($module:ident :: $name:ident $(=> $secs:literal s)?),* $(,)?) => {
        /// The checks, typed: what the child process runs.
        pub const CHECKS: &[$crate::lesson::Check<$learner>] = &[
            $($crate::lesson::Check {
                info: $crate::lesson::CheckInfo {
                    name: concat!(stringify!($module), "::", stringify!($name)),
                    min_timeout: ::std::time::Duration::from_secs(0 $(+ $secs)?),
                },
                run: $module::$name,
            },)*
        ];
        /// The checks' names and times: what the parent process lists.
        pub const CHECK_INFO: &[$crate::lesson::CheckInfo] = &[
            $($crate::lesson::CheckInfo {
                name: concat!(stringify!($module), "::", stringify!($name)),
                min_timeout: ::std::time::Duration::from_secs(0 $(+ $secs)?),
            },)*
        ];
    };
}

/// [`Lesson::parse_scenario`] for a lesson whose scenarios are `S`.
pub(crate) fn scenario_summary<S: Format>(
    path: &Path,
    text: &str,
) -> Result<ScenarioSummary, ScenarioError> {
    let scenario = S::parse(path, text)?;
    Ok(ScenarioSummary {
        settings: scenario.settings(),
        situations: crate::scenario::covered(&scenario),
    })
}

/// [`Lesson::situations`] for a lesson whose scenarios are `S`.
pub(crate) fn situation_ids<S: Format>() -> Vec<&'static str> {
    S::SITUATIONS.iter().map(|s| s.id).collect()
}

/// Parses scenario text of format `S` and runs it on `learner`: with the lesson's reference,
/// [`Lesson::run_scenario_on_reference`].
pub(crate) fn run_scenario_text<S: Format>(
    learner: &S::Learner,
    path: &Path,
    text: &str,
) -> Result<ScenarioRun, ScenarioError> {
    Ok(S::parse(path, text)?.run(learner))
}

/// What the reference does in a copy of the kit without the answers (built without the
/// `answers` feature): it is not there, and says so. The grader refuses what would run it
/// (`--against reference`, a scenario run on the reference) before any of it starts.
#[cfg(not(feature = "answers"))]
pub(crate) fn without_answers() -> ! {
    panic!(
        "the kit's own error: this copy of the kit has no answers (a template made without \
         them), so nothing here can run the reference"
    )
}
