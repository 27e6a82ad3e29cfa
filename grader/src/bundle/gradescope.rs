//! The Gradescope bundle: `setup.sh`, `run_autograder`, the kit under `kit/`, and
//! `autograder.zip` holding those three at its top, as Gradescope's zip upload wants.
//!
//! Gradescope unpacks the zip into `/autograder/source`, runs `setup.sh` once with bash as
//! it builds the image, copies `run_autograder` to `/autograder/run_autograder`, and runs it
//! for each submission with the learner's files in `/autograder/submission`; the grade is
//! `/autograder/results/results.json`.

use super::script::{self, fill};
use super::{kit_under, plain_word, zip, BundleError, BundleFile, Header, Kit};
use crate::LessonInfo;
use std::collections::BTreeMap;
use std::path::PathBuf;

const RUN_AUTOGRADER: &str = r#"#!/usr/bin/env bash
# Gradescope autograder for @LESSON@ ("@TITLE@") of the retry practice kit.
@HEADER@#
# Gradescope runs this for each submission, with the learner's files in
# /autograder/submission. It grades the submission's @FILE@ with the kit's grader:
#   grader --root KIT grade /autograder/submission --one --lesson @LESSON@ --report gradescope --out TMP
# and copies TMP/@LESSON@.gradescope.json to /autograder/results/results.json. When no report
# comes out (no @FILE@ in the submission, or the autograder itself failed), it still writes a
# valid results.json: score 0, and an output that says why.
#
# To try it locally: AUTOGRADER_ROOT=DIR (a folder holding submission/; results/ is made
# there), and optionally KIT_GRADER=a grader binary, KIT_ROOT=another copy of the kit.
set -uo pipefail

group="@LESSON@"
lesson_file="@FILE@"
root="${AUTOGRADER_ROOT:-/autograder}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Gradescope runs a copy of this script in /autograder; the bundle is in /autograder/source.
if [ -d "$here/kit" ]; then source_dir=$here; else source_dir=$root/source; fi
kit="${KIT_ROOT:-$source_dir/kit}"
grader="${KIT_GRADER:-$kit/target/debug/kit-grader}"
results="$root/results"

@PREAMBLE@

# Writes a results.json for a submission that got no report: score 0, and why.
no_report() {
  printf '{\n  "score": 0,\n  "execution_time": 0,\n  "output": %s,\n  "output_format": "text",\n  "stdout_visibility": "@LOG_VISIBILITY@",\n  "tests": []\n}\n' \
    "$(json_string "$1")" >"$results/results.json"
}

mkdir -p "$results" || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/autograder.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

"$grader" --root "$kit" grade "$root/submission" --one --lesson "$group"@GRADE_OPTIONS@ \
  --report gradescope --out "$work/out" >"$work/log" 2>&1
status=$?
cat "$work/log"
report="$work/out/$group.gradescope.json"
if [ "$status" -eq 0 ] && [ -s "$report" ]; then
  # The report hides this log from students; the bundle says whether to show it. The line
  # is the grader's own (learner text inside a JSON string cannot hold a bare quote).
  sed 's/^  "stdout_visibility": "hidden",$/  "stdout_visibility": "@LOG_VISIBILITY@",/' \
    "$report" >"$results/results.json" || exit 1
elif [ "$status" -eq 0 ] && grep -q '"missing-file"' "$work/out/grades.json" 2>/dev/null; then
  no_report "Your submission holds no $lesson_file, so nothing was graded. Submit $lesson_file (at the top of your submission, in src/ or in practice/src/) and it will be graded." || exit 1
else
  no_report "The autograder failed, so your code was not graded: this is not a verdict on your work; please tell your instructor. What the grader said (exit status $status):
$(tail -c 20000 "$work/log")" || exit 1
fi
exit 0
"#;

/// The bundle's files.
pub(super) fn files(
    kit: &Kit,
    header: &Header,
    exercise: &LessonInfo,
    with_zip: bool,
    max_score: f64,
) -> Result<BTreeMap<PathBuf, BundleFile>, BundleError> {
    let lesson = plain_word("lesson", header.lesson.name)?;
    let file_name = exercise
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lesson_file = plain_word("lesson file", &file_name)?;
    let title = format!(
        "Gradescope autograder setup for {lesson} (\"{}\") of the retry practice kit.",
        header.lesson.title
    );
    let setup = script::setup(kit, header, &title, "kit", &[lesson])?;
    let run = fill(
        RUN_AUTOGRADER,
        &[
            ("PREAMBLE", &script::run_preamble()),
            ("HEADER", &header.comment("#")),
            ("TITLE", header.lesson.title),
            ("LESSON", lesson),
            ("FILE", lesson_file),
            ("GRADE_OPTIONS", header.grade_options()),
            (
                "LOG_VISIBILITY",
                if header.show_log { "visible" } else { "hidden" },
            ),
        ],
    );
    let mut files = kit_under(kit, "kit");
    files.insert(PathBuf::from("setup.sh"), BundleFile::script(setup));
    files.insert(PathBuf::from("run_autograder"), BundleFile::script(run));
    if with_zip {
        let entries: Vec<zip::Entry> = files
            .iter()
            .map(|(path, file)| zip::Entry {
                name: super::slash_path(path),
                content: file.content.clone(),
                executable: file.executable,
            })
            .collect();
        let archive = zip::archive(&entries)?;
        files.insert(
            PathBuf::from(ZIP_NAME),
            BundleFile {
                content: archive,
                executable: false,
            },
        );
    }
    files.insert(
        PathBuf::from("README.md"),
        BundleFile::text(readme(kit, header, lesson_file, with_zip, max_score)),
    );
    Ok(files)
}

/// The archive's name in the bundle.
pub(super) const ZIP_NAME: &str = "autograder.zip";

fn readme(kit: &Kit, header: &Header, lesson_file: &str, with_zip: bool, max_score: f64) -> String {
    let lesson = header.lesson.name;
    let upload = if with_zip {
        format!("`{ZIP_NAME}` (it holds `setup.sh`, `run_autograder` and `kit/`)")
    } else {
        "a zip of `setup.sh`, `run_autograder` and `kit/`, made in this folder with \
         `zip -r ../autograder.zip setup.sh run_autograder kit -x 'kit/target/*'`"
            .to_string()
    };
    format!(
        "# Gradescope autograder: {lesson} ({title})\n\
         \n\
         Written by `cargo run -p grader -- {command}` (kit {version}). Regenerate it with\n\
         `--force` rather than editing it.\n\
         \n\
         1. In Gradescope, create a *Programming Assignment*; set its total points to the\n   \
            lesson's points ({points}).\n\
         2. *Configure Autograder*: choose *Zip file upload* and upload {upload}; keep the\n   \
            default Ubuntu base image. Building the image runs `setup.sh`: it installs Rust\n   \
            {toolchain} if needed, builds the grader and grades the pristine stub once (a few\n   \
            minutes).\n\
         3. Use *Test Autograder* with a submission holding `{lesson_file}` (at its top, in\n   \
            `src/` or in `practice/src/`). A `GUIDANCE_LOG.md` at the top of a submission\n   \
            is read for the guidance counts.\n\
         \n\
         To try it here: `AUTOGRADER_ROOT=/tmp/gs ./run_autograder` grades\n\
         `/tmp/gs/submission` into `/tmp/gs/results/results.json` (run `./setup.sh` once\n\
         first, or set `KIT_GRADER` to a grader binary).\n",
        title = header.lesson.title,
        command = header.command(),
        version = kit.version,
        points = super::format_points(max_score),
        toolchain = kit.toolchain,
    )
}
