//! `bundle PLATFORM LESSON --out DIR`: write a platform's autograder, generated from the kit
//! (see `crate::bundle`).

use super::output::say;
use super::{kit_root, resolve_lesson, CommandError, CommandResult};
use crate::bundle::{self, BundleError, Options, Per, Platform};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    cargo run -p grader -- bundle gradescope build3 --out gradescope-build3\n  \
    cargo run -p grader -- bundle exercism build3 --out test-runner\n  \
    cargo run -p grader -- bundle classroom build3 --per check --out build3-template\n\n\
    docs/instructors.md says how to set each platform up with its bundle.")]
pub(crate) struct BundleArgs {
    /// The platform: gradescope (setup.sh, run_autograder and autograder.zip to upload),
    /// exercism (a test runner: bin/run.sh SLUG INPUT_DIR OUTPUT_DIR and a Dockerfile) or
    /// classroom (a template repository: the kit and .github/workflows/classroom.yml).
    #[arg(value_enum, value_name = "PLATFORM")]
    platform: PlatformArg,
    /// The lesson the autograder grades, e.g. build3 (`cargo run -p grader -- list` shows
    /// them). For exercism: the lesson of a slug that names none.
    #[arg(value_name = "LESSON")]
    lesson: String,
    /// The folder to write the bundle to: a new or empty folder (see --force), outside the
    /// kit, or in the kit's bundles/ folder, which git ignores (e.g. bundles/gradescope-build3):
    /// any other folder inside the kit is refused. Each bundle holds a copy of the kit as a
    /// fresh clone has it, and a .kit-bundle-manifest listing the files it wrote.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Replace a bundle written there earlier: only the files its .kit-bundle-manifest lists
    /// are removed (then the folders left empty); every other file is kept. A folder that is
    /// not empty and holds no manifest is refused. Files already right are left alone.
    #[arg(long)]
    force: bool,
    /// classroom only: one test per check, each worth its points from
    /// exercises/LESSON/grading.toml (the default), or one test for the whole lesson, worth
    /// all of them (all or nothing). `group` is accepted for `lesson`.
    #[arg(long, value_enum, value_name = "check|lesson")]
    per: Option<PerArg>,
    /// classroom only: the minutes each test may run before the command grader stops it
    /// (1 to 360; default 10). Each check has its own 3-second limit inside the kit.
    #[arg(long, value_name = "MINUTES")]
    timeout_minutes: Option<u32>,
    /// gradescope and exercism: the Rust toolchain setup installs when there is no cargo,
    /// and the exercism image's tag: stable (the default) or a version such as 1.91, no
    /// older than the workspace's rust-version.
    #[arg(long, value_name = "TOOLCHAIN")]
    toolchain: Option<String>,
    /// gradescope only: do not write autograder.zip (zip setup.sh, run_autograder and kit/
    /// yourself).
    #[arg(long)]
    no_zip: bool,
    /// gradescope and exercism: grade even where the platform cannot give the whole sandbox
    /// (old kernels, strict containers); every report then names the protections that were
    /// off. Without it such a platform grades nothing and says why.
    #[arg(long)]
    allow_weak_sandbox: bool,
    /// gradescope only: show students the autograder's own log (hidden by default; each
    /// test's output already holds what a learner needs).
    #[arg(long)]
    show_log: bool,
    /// classroom only: a template without the answers. reference/src keeps only the shared
    /// types; the exhaustive checks compare with the reference's runs kept as data
    /// (grader/checks/oracle/), and --against reference and scenario --compare are not
    /// there. Without it the template is the whole kit: it hands out every answer.
    #[arg(long)]
    without_answers: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum PlatformArg {
    /// Gradescope's autograder: setup.sh, run_autograder, autograder.zip.
    Gradescope,
    /// Exercism's test-runner interface: bin/run.sh and a Dockerfile.
    Exercism,
    /// GitHub Classroom's command grader: a template repository with its workflow.
    Classroom,
}

impl From<PlatformArg> for Platform {
    fn from(p: PlatformArg) -> Platform {
        match p {
            PlatformArg::Gradescope => Platform::Gradescope,
            PlatformArg::Exercism => Platform::Exercism,
            PlatformArg::Classroom => Platform::Classroom,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum PerArg {
    /// One test per check, with the check's points.
    Check,
    /// One test for the whole lesson, with all its points.
    #[value(alias = "group")]
    Lesson,
}

pub(crate) fn bundle(root: Option<PathBuf>, args: BundleArgs) -> CommandResult {
    let platform = Platform::from(args.platform);
    let lesson = resolve_lesson(&args.lesson)?;
    let only = |option: &str, wanted: Platform| {
        CommandError::new(format!("{option} is for {wanted} bundles, not {platform}"))
            .hint(format!("leave {option} out"))
    };
    if platform != Platform::Classroom {
        if args.per.is_some() {
            return Err(only("--per", Platform::Classroom));
        }
        if args.timeout_minutes.is_some() {
            return Err(only("--timeout-minutes", Platform::Classroom));
        }
    }
    if platform == Platform::Classroom && args.toolchain.is_some() {
        return Err(CommandError::new(
            "--toolchain is for gradescope and exercism bundles, not classroom",
        )
        .hint(
            "a classroom workflow uses the Rust that GitHub's runner has; leave --toolchain out",
        ));
    }
    if platform != Platform::Gradescope && args.no_zip {
        return Err(only("--no-zip", Platform::Gradescope));
    }
    if platform != Platform::Classroom && args.without_answers {
        return Err(CommandError::new(format!(
            "--without-answers is for classroom bundles, not {platform}"
        ))
        .hint(format!(
            "a {platform} bundle's kit stays on the platform's side, out of learners' reach: \
             leave --without-answers out"
        )));
    }
    if platform != Platform::Gradescope && args.show_log {
        return Err(only("--show-log", Platform::Gradescope));
    }
    if platform == Platform::Classroom && args.allow_weak_sandbox {
        return Err(CommandError::new(
            "--allow-weak-sandbox is for gradescope and exercism bundles, not classroom",
        )
        .hint(
            "a classroom workflow runs the checks as a learner's own run does, which never \
             refuses a weak sandbox: leave --allow-weak-sandbox out",
        ));
    }
    let root = kit_root(root)?;
    let options = Options {
        per: match args.per {
            Some(PerArg::Lesson) => Per::Lesson,
            Some(PerArg::Check) | None => Per::Check,
        },
        timeout_minutes: args
            .timeout_minutes
            .unwrap_or(bundle::DEFAULT_TIMEOUT_MINUTES),
        zip: !args.no_zip,
        allow_weak_sandbox: args.allow_weak_sandbox,
        show_log: args.show_log,
        without_answers: args.without_answers,
        toolchain: args
            .toolchain
            .clone()
            .unwrap_or_else(|| bundle::DEFAULT_TOOLCHAIN.to_string()),
        ..Options::new(platform, lesson)
    };
    // Refused before the kit is read; `write` checks again.
    bundle::check_out(&root, &args.out).map_err(|e| failure(e, platform, lesson))?;
    let made = bundle::build(&root, &options, Some(&args.out))
        .map_err(|e| failure(e, platform, lesson))?;
    let written = made
        .write(&root, &args.out, args.force)
        .map_err(|e| failure(e, platform, lesson))?;
    say!(
        "Wrote the {platform} bundle for {} to {}: {} files ({} written, {} unchanged, {} removed).",
        lesson.name,
        args.out.display(),
        made.files.len(),
        written.written,
        written.unchanged,
        written.removed
    );
    if !written.kept.is_empty() {
        say!("{}", kept_line(&written.kept));
    }
    say!();
    for line in next_steps(&options, &args.out, made.max_score) {
        say!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// "Kept 2 files no bundle wrote (not in .kit-bundle-manifest): notes.txt, x/y.txt."
/// (the first few named).
fn kept_line(kept: &[PathBuf]) -> String {
    const NAMED: usize = 5;
    let s = if kept.len() == 1 { "" } else { "s" };
    let mut names: Vec<String> = kept
        .iter()
        .take(NAMED)
        .map(|p| p.display().to_string())
        .collect();
    if kept.len() > NAMED {
        names.push(format!("and {} more", kept.len() - NAMED));
    }
    format!(
        "Kept {} file{s} no bundle wrote (not in {}): {}.",
        kept.len(),
        bundle::MANIFEST,
        names.join(", ")
    )
}

/// What to do with the bundle, step by step.
fn next_steps(options: &Options, out: &Path, points: f64) -> Vec<String> {
    let (platform, lesson) = (options.platform, options.lesson.name);
    let out = out.display();
    let points = bundle::format_points(points);
    match platform {
        Platform::Gradescope => vec![
            "Next:".into(),
            format!("  1. Create a Programming Assignment in Gradescope worth {points} points."),
            format!(
                "  2. Configure Autograder: Zip file upload, {out}/autograder.zip (setup.sh builds \
                 the kit when the image is built)."
            ),
            format!(
                "  3. Test Autograder with a submission holding the {lesson} file; or here: \
                 AUTOGRADER_ROOT=/tmp/gs {out}/run_autograder (after {out}/setup.sh)."
            ),
        ],
        Platform::Exercism => vec![
            "Next:".into(),
            format!("  1. docker build -t retry-kit-test-runner {out}"),
            "  2. docker run --rm --network none --mount type=bind,src=SOLUTION,dst=/solution \
             --mount type=bind,src=OUTPUT,dst=/output retry-kit-test-runner SLUG /solution/ /output/"
                .into(),
            format!("     (a SLUG that is not a lesson name is graded as {lesson}; {points} points)"),
        ],
        Platform::Classroom => vec![
            "Next:".into(),
            format!(
                "  1. Push {out} to a new GitHub repository and mark it as a template \
                 (it is the kit, with .github/workflows/classroom.yml)."
            ),
            format!(
                "  2. Create the assignment in GitHub Classroom from that template; the workflow \
                 grades {lesson} on every push ({points} points)."
            ),
            if options.without_answers {
                "  The template holds no answers: reference/src keeps only the shared types \
                 (docs/instructors.md says what it keeps instead)."
                    .into()
            } else {
                "  The template holds every lesson's answer (reference/src): for an assessment, \
                 make it with --without-answers (docs/instructors.md)."
                    .into()
            },
        ],
    }
}

/// `e` as one line and a hint.
fn failure(e: BundleError, platform: Platform, lesson: &crate::Lesson) -> CommandError {
    let hint = match &e {
        BundleError::NotEmpty { .. } => Some(
            "choose a new folder, or add --force to replace the bundle in it (only the files \
             its manifest lists are removed)"
                .to_string(),
        ),
        BundleError::OutHoldsKit { .. }
        | BundleError::InsideKit { .. }
        | BundleError::NotAFolder { .. }
        | BundleError::Unresolvable { .. } => Some(format!(
            "choose a folder outside the kit, or in its {}/ folder (git ignores it), e.g. \
             --out {}/{}-{}",
            bundle::BUNDLES_DIR,
            bundle::BUNDLES_DIR,
            platform,
            lesson.name
        )),
        BundleError::NotABundle { .. } | BundleError::BadManifest { .. } => Some(format!(
            "choose a new or empty folder, e.g. --out {}/NAME in the kit; remove the folder \
             yourself if nothing in it is needed",
            bundle::BUNDLES_DIR
        )),
        BundleError::Symlink { .. } | BundleError::InTheWay { .. } => {
            Some("move it away, or choose a new or empty folder for --out".to_string())
        }
        BundleError::FractionalPoints { .. } => Some(format!(
            "give it a whole number of points in exercises/{}/grading.toml, or use --per lesson \
             if the lesson's total is whole",
            lesson.name
        )),
        BundleError::LessonInfo(_) => Some(format!(
            "restore the lesson's folder from git: `git checkout -- exercises/{}`",
            lesson.name
        )),
        BundleError::Kit { .. } | BundleError::Manifest { .. } => {
            Some("--root names the kit's folder, the one with Cargo.toml and exercises/".into())
        }
        BundleError::NoAnswers => Some(
            "make the template from the whole kit (the one with reference/src/retry.rs)".into(),
        ),
        BundleError::Timeout(_) => Some("e.g. --timeout-minutes 10".into()),
        BundleError::Toolchain(_) => {
            Some("--toolchain stable (the default), or a Rust version such as 1.91".into())
        }
        BundleError::Write { .. } => Some("check that the folder is writable".into()),
        BundleError::Unsafe { .. } => {
            Some("KIT BUG: the registry's names are plain words; report it".into())
        }
        BundleError::Zip(_) => {
            Some("use --no-zip and zip the bundle with a zip64-capable tool".into())
        }
    };
    let failure = CommandError::new(e.to_string());
    match hint {
        Some(hint) => failure.hint(hint),
        None => failure,
    }
}
