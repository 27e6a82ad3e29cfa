//! The shell pieces the Gradescope and Exercism bundles share: the setup script, finding
//! cargo, and writing a JSON string from bash (a fallback results file must be valid JSON
//! even when the grader could not run, so it cannot be the grader's job).
//!
//! Templates hold `@NAME@` placeholders, filled by [`fill`] with values checked by
//! [`super::plain_word`] — never with learner text, which only reaches the scripts at run
//! time, through files.

use super::{plain_word, slash_path, BundleError, Header, Kit};

/// `template` with each `@NAME@` of `values` replaced.
pub(super) fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut text = template.to_string();
    for (name, value) in values {
        text = text.replace(&format!("@{name}@"), value);
    }
    debug_assert!(
        !text.contains("@LESSON@") && !text.contains("@KIT@") && !text.contains("@GRADE_OPTIONS@"),
        "a placeholder was left"
    );
    text
}

/// Finds cargo when it is not on the PATH: where `setup.sh` installs it (the layout of the
/// official Rust images), or rustup's default for the user.
pub(super) const FIND_CARGO: &str = r#"if ! command -v cargo >/dev/null 2>&1; then
  if [ -x /usr/local/cargo/bin/cargo ]; then
    export PATH="/usr/local/cargo/bin:$PATH"
    export CARGO_HOME="${CARGO_HOME:-/usr/local/cargo}" RUSTUP_HOME="${RUSTUP_HOME:-/usr/local/rustup}"
  elif [ -x "${HOME:-/root}/.cargo/bin/cargo" ]; then
    export PATH="${HOME:-/root}/.cargo/bin:$PATH"
  fi
fi"#;

/// What a run script sets before grading.
pub(super) const RUN_PREAMBLE: &str = r#"# The grader builds the learner's code in a copy of the kit under the kit's own target/
# folder, with the dependencies setup fetched: no network needed.
unset CARGO_TARGET_DIR
export CARGO_NET_OFFLINE=true
@FIND_CARGO@

# $1 as a JSON string: printable ASCII, tabs and newlines (anything else is dropped).
json_string() {
  local s
  s=$(printf '%s' "$1" | LC_ALL=C tr -cd '\11\12\40-\176')
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\t'/\\t}
  s=${s//$'\n'/\\n}
  printf '"%s"' "$s"
}"#;

/// The run scripts' common part, filled.
pub(super) fn run_preamble() -> String {
    RUN_PREAMBLE.replace("@FIND_CARGO@", FIND_CARGO)
}

const SETUP: &str = r#"#!/usr/bin/env bash
# @TITLE@
@HEADER@#
# Runs once, when the platform builds the autograder (the network is allowed then): installs
# a Rust toolchain with rustup when there is no cargo (minimal profile, Rust @TOOLCHAIN@),
# builds the kit's grader (cargo build --locked -p kit-grader), then grades the pristine stub of
# @WARMED@ once, so that the kit's dependencies are built before the first submission
# arrives and a submission is graded in seconds.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kit="$here/@KIT@"
toolchain="@TOOLCHAIN@"

# The grader and its grading copy live in the kit's own target/ folder.
unset CARGO_TARGET_DIR
@FIND_CARGO@

if ! command -v cargo >/dev/null 2>&1; then
  echo "== no cargo: installing Rust $toolchain with rustup (minimal profile)"
  if ! command -v curl >/dev/null 2>&1 || ! command -v cc >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
      apt-get update
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        ca-certificates curl build-essential
    else
      echo "setup.sh: there is no cargo, and no curl or C compiler (cc) to install Rust with;" >&2
      echo "setup.sh: install Rust $toolchain (https://rustup.rs), then run this again" >&2
      exit 1
    fi
  fi
  export RUSTUP_HOME=/usr/local/rustup CARGO_HOME=/usr/local/cargo
  export PATH="$CARGO_HOME/bin:$PATH"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
    sh -s -- -y --no-modify-path --profile minimal --default-toolchain "$toolchain"
fi
cargo --version

echo "== building the grader"
cd "$kit"
cargo build --locked -p kit-grader

warm=$(mktemp -d "${TMPDIR:-/tmp}/kit-warm.XXXXXX")
trap 'rm -rf "$warm"' EXIT
# Grades a copy of a lesson's pristine stub (a copy: a submission kept inside the kit would
# be left out of the grading copy), and checks that its report came out.
warm_up() {
  local group=$1 stub=$2
  echo "== warming the grading copy: grading the $group stub once"
  cp "$kit/$stub" "$warm/$group.rs"
  "$kit/target/debug/kit-grader" --root "$kit" grade "$warm/$group.rs" --one --lesson "$group"@GRADE_OPTIONS@ \
    --out "$warm/$group" --quiet
  if [ ! -s "$warm/$group/$group.json" ]; then
    echo "setup.sh: grading the $group stub gave no report: the kit does not work here" >&2
    exit 1
  fi
}
@WARM@
echo "== ready"
"#;

/// The setup script of a bundle whose kit is at `kit_dir` (relative to the script's
/// folder), warming `lessons` (the last one is left warm for the first submission).
pub(super) fn setup(
    kit: &Kit,
    header: &Header,
    title: &str,
    kit_dir: &str,
    lessons: &[&str],
) -> Result<String, BundleError> {
    let toolchain = plain_word("rust-version", &kit.toolchain)?;
    let mut warm = String::new();
    for name in lessons {
        let (lesson, exercise) = kit
            .exercises
            .iter()
            .find(|(g, _)| g.name == *name)
            .ok_or_else(|| BundleError::Unsafe {
                what: "lesson",
                value: name.to_string(),
            })?;
        let stub = slash_path(
            &std::path::Path::new("exercises")
                .join(&exercise.name)
                .join(&exercise.stub),
        );
        warm.push_str(&format!(
            "warm_up {} {}\n",
            plain_word("lesson", lesson.name)?,
            plain_word("stub", &stub)?
        ));
    }
    let warmed = match lessons {
        [one] => one.to_string(),
        _ => format!("each lesson ({})", lessons.join(", ")),
    };
    Ok(fill(
        SETUP,
        &[
            ("FIND_CARGO", FIND_CARGO),
            ("TITLE", title),
            ("HEADER", &header.comment("#")),
            ("TOOLCHAIN", toolchain),
            ("KIT", kit_dir),
            ("WARMED", &warmed),
            ("WARM", warm.trim_end()),
            ("GRADE_OPTIONS", header.grade_options()),
        ],
    ))
}
