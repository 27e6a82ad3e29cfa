//! A class's history: each run of `grade` keeps its gradebook under `OUT/runs/RUN/`
//! (`RUN` is the UTC time it started, `2026-12-03T00-10-05Z`), and `grade --diff RUN` lists
//! what changed since then.

use super::gradebook::{Gradebook, Row};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use thiserror::Error;

/// The folder under the output folder that holds the runs.
pub(crate) const RUNS: &str = "runs";

/// The word for the run before this one, in `--diff`.
pub(crate) const PREVIOUS: &str = "previous";

/// Why an earlier run cannot be compared with.
#[derive(Debug, Error, PartialEq, Eq)]
pub(crate) enum HistoryError {
    /// No run of that name was kept.
    #[error("no run {run} in {dir}: {}", if kept.is_empty() { "no run was kept there yet".to_string() } else { format!("the runs kept are {}", kept.join(", ")) })]
    NoSuchRun {
        /// The name asked for.
        run: String,
        /// The runs folder.
        dir: PathBuf,
        /// The runs there are.
        kept: Vec<String>,
    },
    /// Its gradebook is not one this kit reads.
    #[error("the gradebook of run {run} ({path}) cannot be read")]
    Unreadable {
        /// The run.
        run: String,
        /// Its grades.json.
        path: PathBuf,
    },
}

/// The name of a run started at `at`, unique among the runs kept in `out`.
pub(crate) fn run_name(out: &Path, at: SystemTime) -> String {
    let base = humantime::format_rfc3339_seconds(at)
        .to_string()
        .replace(':', "-");
    let mut name = base.clone();
    let mut n = 2;
    while out.join(RUNS).join(&name).exists() {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

/// The runs kept in `out`, oldest first.
pub(crate) fn kept(out: &Path) -> Vec<String> {
    let mut runs: Vec<String> = std::fs::read_dir(out.join(RUNS))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().join("grades.json").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    runs.sort();
    runs
}

/// The run `--diff` names: a kept run, or [`PREVIOUS`] for the latest one kept before this
/// run (checked before grading, so a typo costs nothing).
pub(crate) fn resolve(out: &Path, run: &str) -> Result<String, HistoryError> {
    let kept = kept(out);
    let found = if run == PREVIOUS {
        kept.last().cloned()
    } else {
        kept.iter().find(|k| *k == run).cloned()
    };
    found.ok_or_else(|| HistoryError::NoSuchRun {
        run: run.to_string(),
        dir: out.join(RUNS),
        kept,
    })
}

/// The gradebook run `run` kept in `out`.
pub(crate) fn load(out: &Path, run: &str) -> Result<Gradebook, HistoryError> {
    let dir = out.join(RUNS).join(run);
    Gradebook::load(&dir).ok_or_else(|| HistoryError::Unreadable {
        run: run.to_string(),
        path: dir.join("grades.json"),
    })
}

/// Keeps a copy of the files `names` of `out` as run `run`'s.
pub(crate) fn keep(out: &Path, run: &str, names: &[&str]) -> std::io::Result<PathBuf> {
    let dir = out.join(RUNS).join(run);
    std::fs::create_dir_all(&dir)?;
    for name in names {
        let from = out.join(name);
        if from.is_file() {
            std::fs::copy(&from, dir.join(name))?;
        }
    }
    Ok(dir)
}

/// One row's change between two runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Change {
    /// The submission.
    pub(crate) submission: String,
    /// The lesson.
    pub(crate) lesson: String,
    /// How it was, `None` when it is new.
    pub(crate) before: Option<String>,
    /// How it is, `None` when it is gone.
    pub(crate) after: Option<String>,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lesson = if self.lesson.is_empty() {
            "-"
        } else {
            &self.lesson
        };
        let before = self.before.as_deref().unwrap_or("(no row)");
        let after = self.after.as_deref().unwrap_or("(no row)");
        write!(f, "{} {lesson}: {before} → {after}", self.submission)
    }
}

/// A row in a few words: `failing 30/43`.
fn standing(row: &Row) -> String {
    format!(
        "{} {}/{}",
        row.status.label(),
        super::gradebook::points(row.score),
        super::gradebook::points(row.max_score)
    )
}

/// What changed from `before` to `after`: rows added, gone, or with another status or score.
pub(crate) fn diff(before: &Gradebook, after: &Gradebook) -> Vec<Change> {
    let key = |r: &Row| (r.submission.clone(), r.lesson.clone());
    let old: BTreeMap<_, _> = before.rows.iter().map(|r| (key(r), standing(r))).collect();
    let new: BTreeMap<_, _> = after.rows.iter().map(|r| (key(r), standing(r))).collect();
    let mut keys: Vec<_> = old.keys().chain(new.keys()).cloned().collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let (b, a) = (old.get(&k).cloned(), new.get(&k).cloned());
            let changed = b != a;
            changed.then_some(Change {
                submission: k.0,
                lesson: k.1,
                before: b,
                after: a,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::gradebook::RowStatus;
    use super::*;

    fn row(name: &str, status: RowStatus, score: f64) -> Row {
        Row {
            score,
            max_score: 43.0,
            ..Row::empty(name, "build3", status, String::new())
        }
    }

    #[test]
    fn a_diff_lists_new_gone_and_changed_rows_only() {
        let before = Gradebook::new(vec![
            row("ana", RowStatus::Failing, 30.0),
            row("bo", RowStatus::Passing, 43.0),
            row("cy", RowStatus::Failing, 10.0),
        ]);
        let after = Gradebook::new(vec![
            row("ana", RowStatus::Passing, 43.0),
            row("bo", RowStatus::Passing, 43.0),
            row("dee", RowStatus::Unfinished, 0.0),
        ]);
        let lines: Vec<String> = diff(&before, &after)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            lines,
            [
                "ana build3: failing 30/43 → passing 43/43",
                "cy build3: failing 10/43 → (no row)",
                "dee build3: (no row) → unfinished 0/43",
            ]
        );
    }

    #[test]
    fn runs_are_kept_named_and_found() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        assert!(matches!(
            resolve(out, PREVIOUS),
            Err(HistoryError::NoSuchRun { .. })
        ));
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_796_000_000);
        let first = run_name(out, at);
        assert!(
            !first.contains(':'),
            "a folder name every system takes: {first}"
        );
        Gradebook::new(vec![row("ana", RowStatus::Failing, 30.0)])
            .write(out)
            .unwrap();
        keep(out, &first, &["grades.json", "grades.csv", "absent.csv"]).unwrap();
        let second = run_name(out, at);
        assert_eq!(second, format!("{first}-2"), "two runs in one second");
        assert_eq!(resolve(out, PREVIOUS).unwrap(), first);
        assert_eq!(resolve(out, &first).unwrap(), first);
        let e = resolve(out, "2020-01-01T00-00-00Z")
            .unwrap_err()
            .to_string();
        assert!(e.contains(&first), "{e}");
        assert_eq!(load(out, &first).unwrap().rows.len(), 1);
    }
}
