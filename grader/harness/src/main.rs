//! The learner's harness: runs the grader's checks on the practice crate. The grader starts
//! it for a check, or as a fork server that forks a process per check; it is not meant to
//! be run by hand.
//!
//! It is built three ways from this one file:
//! - by cargo, with one lesson's feature: the practice crate is linked in, and the checks run
//!   beside it (learner runs only, when the grader's own build is off or not possible);
//! - by the grader, once per state of the kit, with `--cfg kit_dynamic`: the judge. It
//!   holds the checks and no learner's code: for each check it starts a runner (below) and
//!   judges what the runner says the learner's function did;
//! - by the grader, with `--cfg kit_runner`: the runner. It holds `kit-runner` and
//!   `kit-types`, never the checks nor the reference (nothing here names them), confines
//!   itself, loads the learner's library from
//!   [`LIBRARY_VAR`](kit_runner::library::LIBRARY_VAR) and answers the judge.

#[cfg(kit_runner)]
fn main() -> std::process::ExitCode {
    kit_runner::runner::main(runner::load)
}

/// The runner's lessons, loaded from the learner's library.
#[cfg(kit_runner)]
mod runner {
    use kit_runner::library::Library;
    use kit_runner::runner::Function;

    // SAFETY (all three): the library is the learner's code, loaded in the runner after its
    // limits and its sandbox are set; each lesson's symbol is a static of that lesson's
    // type in `kit_types::graded` (practice/src/root.rs); and the grader compiles the
    // library with the compiler and the kit-types that built this program (one recipe,
    // which checks the files the library links).
    pub fn load(group: &str) -> Result<Function, String> {
        let library = unsafe { Library::from_env()? };
        match group {
            "build2" => Ok(Function::Build2(unsafe { library.function("build2")? })),
            "build3" => Ok(Function::Build3(unsafe { library.function("build3")? })),
            "stage8" => Ok(Function::Stage8(unsafe { library.function("stage8")? })),
            other => Err(format!("this runner serves no lesson {other:?}")),
        }
    }
}

#[cfg(not(kit_runner))]
#[allow(unused_imports)] // with no lesson's feature on, no group is served
use grader_checks::groups::{build2, build3, stage8};
#[cfg(not(kit_runner))]
use grader_checks::{Job, Report};

/// Runs `job` of `group` on the learner's function, if this build serves that lesson.
#[cfg(not(kit_runner))]
fn run(group: &str, #[allow(unused_variables)] job: &Job) -> Option<Report> {
    match group {
        #[cfg(any(kit_dynamic, feature = "build2"))]
        "build2" => {
            Some(learner::build2().map_or_else(kit_bug, |learner| build2::run(job, &learner)))
        }
        #[cfg(any(kit_dynamic, feature = "build3"))]
        "build3" => {
            Some(learner::build3().map_or_else(kit_bug, |learner| build3::run(job, &learner)))
        }
        #[cfg(any(kit_dynamic, feature = "stage8"))]
        "stage8" => {
            Some(learner::stage8().map_or_else(kit_bug, |learner| stage8::run(job, &learner)))
        }
        _ => None,
    }
}

/// The report for a learner's function this harness could not reach: the kit's fault.
#[cfg(not(kit_runner))]
#[allow(dead_code)] // with no lesson's feature on, nothing is reached
fn kit_bug(message: String) -> Report {
    Report::KitBug {
        message,
        location: None,
    }
}

/// Each lesson's function, linked in.
#[cfg(not(any(kit_dynamic, kit_runner)))]
#[allow(dead_code)]
mod learner {
    #[cfg(feature = "build2")]
    pub fn build2() -> Result<grader_checks::groups::build2::Learner, String> {
        Ok(grader_checks::groups::build2::Learner::Here(|m, u, t| {
            practice::fetch(m, u, t)
        }))
    }
    #[cfg(feature = "build3")]
    pub fn build3() -> Result<grader_checks::groups::build3::Learner, String> {
        Ok(grader_checks::groups::build3::Learner::Here(
            |p, r, s, l| practice::retry_request(p, r, s, l),
        ))
    }
    #[cfg(feature = "stage8")]
    pub fn stage8() -> Result<grader_checks::groups::stage8::Learner, String> {
        Ok(grader_checks::groups::stage8::Learner::Here(|g, item| {
            practice::lookup_availability(g, item)
        }))
    }

    /// No lesson runs in a runner: the learner's crate is linked into this program.
    pub fn in_runner(_: &str) -> bool {
        false
    }
}

/// Each lesson's function, in a runner.
#[cfg(kit_dynamic)]
mod learner {
    use grader_checks::groups::{build2, build3, stage8};

    pub fn build2() -> Result<build2::Learner, String> {
        build2::Learner::in_runner()
    }
    pub fn build3() -> Result<build3::Learner, String> {
        build3::Learner::in_runner()
    }

    pub fn stage8() -> Result<stage8::Learner, String> {
        stage8::Learner::in_runner()
    }

    /// The lessons whose learner's code runs in a runner.
    pub fn in_runner(group: &str) -> bool {
        matches!(group, "build2" | "build3" | "stage8")
    }
}

#[cfg(not(kit_runner))]
fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    grader_checks::harness_main_with(
        &args,
        grader_checks::serve::Served {
            run,
            in_runner: learner::in_runner,
        },
    )
}
