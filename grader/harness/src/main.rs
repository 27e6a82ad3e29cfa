//! The learner's harness: runs the grader's checks on the practice crate. The grader starts
//! it for a check, or (the loading build) as a fork server that forks a process per check;
//! it is not meant to be run by hand.
//!
//! It is built two ways from this one file:
//! - by cargo, with one lesson's feature: the practice crate is linked in;
//! - by the grader, once per state of the kit, with `--cfg kit_dynamic`: it loads the
//!   learner's code from the library the grader names in
//!   [`LIBRARY_VAR`](grader_checks::library::LIBRARY_VAR), so that an edit rebuilds only that
//!   library (see `grader/src/replay.rs`).

#[allow(unused_imports)] // with no lesson's feature on, no group is served
use grader_checks::groups::{build2, build3, stage8};
use grader_checks::{Job, Report};

/// Runs `job` of `group` on the learner's function, if this build serves that lesson.
fn run(group: &str, #[allow(unused_variables)] job: &Job) -> Option<Report> {
    match group {
        #[cfg(any(kit_dynamic, feature = "build2"))]
        "build2" => Some(learner::build2().map_or_else(kit_bug, |fetch| {
            build2::run(job, &build2::Learner { fetch })
        })),
        #[cfg(any(kit_dynamic, feature = "build3"))]
        "build3" => Some(learner::build3().map_or_else(kit_bug, |retry_request| {
            build3::run(job, &build3::Learner { retry_request })
        })),
        #[cfg(any(kit_dynamic, feature = "stage8"))]
        "stage8" => Some(
            learner::stage8().map_or_else(kit_bug, |lookup_availability| {
                stage8::run(
                    job,
                    &stage8::Learner {
                        lookup_availability,
                    },
                )
            }),
        ),
        _ => None,
    }
}

/// The report for a learner's function this harness could not reach: the kit's fault.
#[allow(dead_code)] // with no lesson's feature on, nothing is reached
fn kit_bug(message: String) -> Report {
    Report::KitBug {
        message,
        location: None,
    }
}

/// Each lesson's function, linked in.
#[cfg(not(kit_dynamic))]
#[allow(dead_code)]
mod learner {
    #[cfg(feature = "build2")]
    pub fn build2() -> Result<grader_checks::groups::build2::FetchFn, String> {
        Ok(|m, u, t| practice::fetch(m, u, t))
    }
    #[cfg(feature = "build3")]
    pub fn build3() -> Result<grader_checks::groups::build3::RetryFn, String> {
        Ok(|p, r, s, l| practice::retry_request(p, r, s, l))
    }
    #[cfg(feature = "stage8")]
    pub fn stage8() -> Result<grader_checks::groups::stage8::LookupFn, String> {
        Ok(|g, item| practice::lookup_availability(g, item))
    }
}

/// Each lesson's function, loaded from the learner's library.
#[cfg(kit_dynamic)]
mod learner {
    use grader_checks::groups::{build2, build3, stage8};
    use grader_checks::library::Library;

    // SAFETY (all three): the library is the learner's code, loaded in a check's own process
    // after its limits are set; each lesson's symbol is a static of that lesson's type in
    // `kit_types::graded` (practice/src/root.rs); and the grader compiles the library with
    // the compiler and the kit-types that built this program (one recipe, which checks the
    // files the library links).
    pub fn build2() -> Result<build2::FetchFn, String> {
        unsafe { Library::from_env()?.function("build2") }
    }
    pub fn build3() -> Result<build3::RetryFn, String> {
        unsafe { Library::from_env()?.function("build3") }
    }
    pub fn stage8() -> Result<stage8::LookupFn, String> {
        unsafe { Library::from_env()?.function("stage8") }
    }
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    grader_checks::harness_main(&args, run)
}
