//! The learner's harness: links `practice` to the grader's checks. The grader builds it with
//! one lesson's feature and starts it once per check; it is not meant to be run by hand.

#[allow(unused_imports)] // with no lesson's feature on, no group is served
use grader_checks::groups::{build2, build3, stage8};
use grader_checks::{Job, Report};

/// Runs `job` of `group` on the learner's function, if this build compiled that lesson.
fn run(group: &str, #[allow(unused_variables)] job: &Job) -> Option<Report> {
    match group {
        #[cfg(feature = "build2")]
        "build2" => Some(build2::run(
            job,
            &build2::Learner {
                fetch: |m, u, t| practice::fetch(m, u, t),
            },
        )),
        #[cfg(feature = "build3")]
        "build3" => Some(build3::run(
            job,
            &build3::Learner {
                retry_request: |p, r, s, l| practice::retry_request(p, r, s, l),
            },
        )),
        #[cfg(feature = "stage8")]
        "stage8" => Some(stage8::run(
            job,
            &stage8::Learner {
                lookup_availability: |g, item| practice::lookup_availability(g, item),
            },
        )),
        _ => None,
    }
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    grader_checks::serve::main(&args, run)
}
