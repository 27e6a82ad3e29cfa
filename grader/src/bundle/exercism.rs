//! The Exercism bundle: a test runner with Exercism's interface. `bin/run.sh SLUG INPUT_DIR
//! OUTPUT_DIR` grades the solution in `INPUT_DIR` and writes `OUTPUT_DIR/results.json`
//! (version 3), exiting 0 whatever the grade. The `Dockerfile` builds the image Exercism
//! runs (`ENTRYPOINT bin/run.sh`, working folder `/opt/test-runner`, as its test-runner
//! repositories do): the kit's dependencies are built and every lesson graded once while the
//! image is built, because a run has no network and 20 seconds.

use super::script::{self, fill};
use super::{kit_under, plain_word, BundleError, BundleFile, Header, Kit};
use std::collections::BTreeMap;
use std::path::PathBuf;

const RUN: &str = r#"#!/usr/bin/env bash
# Exercism test runner for the retry practice kit.
@HEADER@#
# Exercism's interface: bin/run.sh SLUG INPUT_DIR OUTPUT_DIR. It grades the solution in
# INPUT_DIR (the lesson's file at its top, in src/ or in practice/src/) with the kit's grader:
#   grader --root KIT grade INPUT_DIR --one --lesson LESSON --report exercism --out TMP
# and copies TMP/LESSON.exercism.json to OUTPUT_DIR/results.json. LESSON is the slug when it
# names a lesson (@LESSONS@), otherwise @LESSON@.
# It exits 0 whatever the grade; when no report comes out (no lesson file, the runner
# itself failed, or the run took longer than its time guard) it writes a results.json with
# status "error" saying why. The time guard — KIT_TIME_LIMIT seconds, @LIMIT@ by default —
# stays under Exercism's 20 seconds for a run, so that code that never returns still gets a
# results.json that says so rather than none.
#
# To try it locally: bin/run.sh @LESSON@ path/to/solution/ path/to/output/, optionally with
# KIT_GRADER=a grader binary, KIT_ROOT=another copy of the kit.
set -uo pipefail

if [ "$#" -lt 3 ]; then
  echo "usage: $0 SLUG INPUT_DIR OUTPUT_DIR" >&2
  exit 2
fi
slug=$1
input=$2
output=$3
case "$slug" in
  @CASES@) group=$slug ;;
  *) group="@LESSON@" ;;
esac
case "$group" in
@FILES@
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kit="${KIT_ROOT:-$here/kit}"
grader="${KIT_GRADER:-$kit/target/debug/kit-grader}"

@PREAMBLE@

# Writes a results.json with status "error" and $1 as its message.
no_report() {
  printf '{\n  "version": 3,\n  "status": "error",\n  "message": %s\n}\n' \
    "$(json_string "$1")" >"$output/results.json"
}

mkdir -p "$output" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/test-runner.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

limit="${KIT_TIME_LIMIT:-@LIMIT@}"
timeout --kill-after=2 "$limit" "$grader" --root "$kit" grade "$input" --one@GRADE_OPTIONS@ \
  --lesson "$group" --timeout @CHECK_TIMEOUT@ --report exercism --out "$work/out" >"$work/log" 2>&1
status=$?
cat "$work/log"
report="$work/out/$group.exercism.json"
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  no_report "The tests were stopped after $limit seconds, the most a run may take, so there is no result. Code that never returns (a loop that never ends, a wait on something that never comes) does this: each test may take @CHECK_TIMEOUT@ seconds. Run the tests on your own machine to see which one hangs." || exit 1
elif [ "$status" -eq 0 ] && [ -s "$report" ]; then
  cp "$report" "$output/results.json" || exit 1
elif [ "$status" -eq 0 ] && grep -q '"missing-file"' "$work/out/grades.json" 2>/dev/null; then
  no_report "Your solution holds no $lesson_file, so nothing was tested. Put $lesson_file at the top of your solution, in src/ or in practice/src/." || exit 1
else
  no_report "The test runner failed, so your code was not tested: this is not a verdict on your work. What the grader said (exit status $status):
$(tail -c 20000 "$work/log")" || exit 1
fi
exit 0
"#;

/// The seconds a whole run may take before `run.sh` stops it: under Exercism's 20, with
/// room for the container's start and the copy of the results.
pub(super) const TIME_LIMIT_SECS: u32 = 17;

/// The seconds one check may take in a run (the grader's own default is 3): a lesson's
/// checks, a few at a time, then fit the run's time even when several loop.
pub(super) const CHECK_TIMEOUT_SECS: u32 = 2;

/// The bundle's files. `max_score` is the default lesson's points (for the README).
pub(super) fn files(
    kit: &Kit,
    header: &Header,
    max_score: f64,
) -> Result<BTreeMap<PathBuf, BundleFile>, BundleError> {
    let lesson = plain_word("lesson", header.lesson.name)?;
    let mut names = Vec::new();
    let mut file_cases = String::new();
    for (g, exercise) in &kit.exercises {
        let name = plain_word("lesson", g.name)?;
        let file = exercise
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = plain_word("lesson file", &file)?;
        names.push(name);
        file_cases.push_str(&format!("  {name}) lesson_file={file} ;;\n"));
    }
    // The default lesson is warmed last, so it is the one left warm.
    let mut warm: Vec<&str> = names.iter().copied().filter(|n| *n != lesson).collect();
    warm.push(lesson);
    let run = fill(
        RUN,
        &[
            ("PREAMBLE", &script::run_preamble()),
            ("HEADER", &header.comment("#")),
            ("LESSONS", &names.join(", ")),
            ("CASES", &names.join("|")),
            ("FILES", file_cases.trim_end()),
            ("LESSON", lesson),
            ("GRADE_OPTIONS", header.grade_options()),
            ("LIMIT", &TIME_LIMIT_SECS.to_string()),
            ("CHECK_TIMEOUT", &CHECK_TIMEOUT_SECS.to_string()),
        ],
    );
    let title = "Exercism test runner setup for the retry practice kit.".to_string();
    let setup = script::setup(kit, header, &title, "../kit", &warm)?;
    let image = match kit.toolchain.as_str() {
        "stable" => "rust:slim".to_string(),
        version => format!("rust:{version}-slim"),
    };
    let dockerfile = format!(
        "# Exercism test runner for the retry practice kit: lessons {lessons};\n\
         # a slug that names none is graded as {lesson}.\n\
         {comment}\
         #\n\
         # The image builds the kit's grader and grades each lesson's stub once, so that a run\n\
         # needs no network and takes seconds. Run it as Exercism does:\n\
         #   docker build -t retry-kit-test-runner .\n\
         #   docker run --rm --network none --mount type=bind,src=SOLUTION,dst=/solution \\\n\
         #     --mount type=bind,src=OUTPUT,dst=/output retry-kit-test-runner {lesson} /solution/ /output/\n\
         FROM {image}\n\
         WORKDIR /opt/test-runner\n\
         COPY . .\n\
         RUN bin/setup.sh\n\
         ENTRYPOINT [\"/opt/test-runner/bin/run.sh\"]\n",
        lessons = names.join(", "),
        comment = header.comment("#"),
    );
    let mut files = kit_under(kit, "kit");
    files.insert(PathBuf::from("bin/run.sh"), BundleFile::script(run));
    files.insert(PathBuf::from("bin/setup.sh"), BundleFile::script(setup));
    files.insert(PathBuf::from("Dockerfile"), BundleFile::text(dockerfile));
    files.insert(
        PathBuf::from(".dockerignore"),
        BundleFile::text("# A build of the kit made outside the image.\nkit/target\n".into()),
    );
    files.insert(
        PathBuf::from("README.md"),
        BundleFile::text(format!(
            "# Exercism test runner: the retry practice kit\n\
             \n\
             Written by `cargo run -p grader -- {command}` (kit {version}). Regenerate it with\n\
             `--force` rather than editing it.\n\
             \n\
             - `bin/run.sh SLUG INPUT_DIR OUTPUT_DIR` grades the solution in `INPUT_DIR` and\n  \
               writes `OUTPUT_DIR/results.json` (Exercism's results.json, version 3). The\n  \
               lesson is the slug when it names one ({lessons}), otherwise {lesson} ({points}\n  \
               points).\n\
             - `Dockerfile` builds the runner's image from `{image}`: it runs\n  \
               `bin/setup.sh`, which builds the grader and grades each lesson's stub once.\n\
             - `kit/` is the kit, as a fresh clone has it.\n\
             \n\
             The grader writes its grading copy under `kit/target/` at run time, so the\n\
             container's `/opt/test-runner/kit/target` must be writable.\n",
            command = header.command(),
            version = kit.version,
            lessons = names.join(", "),
            points = super::format_points(max_score),
        )),
    );
    Ok(files)
}
