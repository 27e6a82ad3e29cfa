//! The gradebook: one row per submission and lesson, as `grades.csv` (for a spreadsheet)
//! and `grades.json` (schema `retry-kit/gradebook`, version 1, for programs — and for the
//! next run, which skips a submission whose row was made from the same content).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The gradebook JSON's schema name.
pub const SCHEMA: &str = "retry-kit/gradebook";
/// The gradebook JSON's version.
pub const VERSION: u32 = 1;

/// How a submission's lesson ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowStatus {
    /// Every check passed.
    Passing,
    /// At least one check failed.
    Failing,
    /// No check failed, but at least one still reaches `todo!()`.
    Unfinished,
    /// The learner's file does not compile: no check ran.
    DoesNotCompile,
    /// The file compiles in the kit's answers (a `#[path]` or `include!` of them): no check ran.
    Refused,
    /// The submission holds no file for this lesson.
    MissingFile,
    /// The kit failed (a copy could not be made, cargo could not start, a bug in a check):
    /// the row is not a grade.
    KitError,
}

impl RowStatus {
    /// Its name in the gradebook.
    pub fn label(self) -> &'static str {
        match self {
            RowStatus::Passing => "passing",
            RowStatus::Failing => "failing",
            RowStatus::Unfinished => "unfinished",
            RowStatus::DoesNotCompile => "does-not-compile",
            RowStatus::Refused => "refused",
            RowStatus::MissingFile => "missing-file",
            RowStatus::KitError => "kit-error",
        }
    }
}

/// One submission's result on one lesson.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The submission's name.
    pub submission: String,
    /// The lesson's group.
    pub group: String,
    /// How it ended.
    pub status: RowStatus,
    /// Checks that passed.
    pub passed: usize,
    /// Checks that failed (a wrong result, a panic, a crash, a timeout, a limit).
    pub failed: usize,
    /// Checks that reached `todo!()`.
    pub unfinished: usize,
    /// Points earned (the weights of the passed checks, from `exercises/GROUP/grading.toml`).
    pub score: f64,
    /// Points possible.
    pub max_score: f64,
    /// Whether the file did not compile.
    pub compile_error: bool,
    /// The guidance the submission's log records for the lesson, by kind; `None` when the
    /// submission came without a log.
    pub guidance: Option<BTreeMap<String, usize>>,
    /// Seconds spent grading it.
    pub duration_secs: f64,
    /// One line for the instructor: why there is no grade, or what stood out.
    pub note: String,
    /// The hash of what the row was made from (the kit, the lesson, the submission's file
    /// and log, the limits): an unchanged submission is not graded again.
    pub content_hash: String,
}

/// The whole gradebook, as `grades.json` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gradebook {
    /// [`SCHEMA`].
    pub schema: String,
    /// [`VERSION`].
    pub version: u32,
    /// The kit's version.
    pub kit_version: String,
    /// The rows, by submission then lesson.
    pub rows: Vec<Row>,
}

/// The most characters of a row's note kept in the gradebook.
pub const NOTE_KEPT: usize = 300;

/// `note` cut to [`NOTE_KEPT`] characters, ending in "… (see the report)" when cut.
///
/// ```
/// use grader::grade::gradebook::{cut_note, NOTE_KEPT};
/// assert_eq!(cut_note("short".into()), "short");
/// let long = cut_note("é".repeat(1000));
/// assert!(long.chars().count() <= NOTE_KEPT + 20 && long.ends_with("… (see the report)"));
/// ```
pub fn cut_note(note: String) -> String {
    if note.chars().count() <= NOTE_KEPT {
        return note;
    }
    let kept: String = note.chars().take(NOTE_KEPT).collect();
    format!("{kept}… (see the report)")
}

impl Gradebook {
    /// A gradebook of `rows`, sorted.
    pub fn new(mut rows: Vec<Row>) -> Gradebook {
        rows.sort_by(|a, b| (&a.submission, &a.group).cmp(&(&b.submission, &b.group)));
        // A note is a line of a spreadsheet: the learner's code chooses much of it (a
        // compiler's or a panic's text), and the reports hold the whole of it.
        for row in &mut rows {
            row.note = cut_note(std::mem::take(&mut row.note));
        }
        Gradebook {
            schema: SCHEMA.to_string(),
            version: VERSION,
            kit_version: env!("CARGO_PKG_VERSION").to_string(),
            rows,
        }
    }

    /// The gradebook a previous run wrote in `dir`, if there is a readable one.
    pub fn load(dir: &Path) -> Option<Gradebook> {
        let text = std::fs::read_to_string(dir.join("grades.json")).ok()?;
        let book: Gradebook = serde_json::from_str(&text).ok()?;
        (book.schema == SCHEMA && book.version == VERSION).then_some(book)
    }

    /// The JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// The CSV text (RFC 4180: comma-separated, fields quoted when they need it).
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "submission,group,status,passed,failed,unfinished,score,max_score,compile_error,\
             guidance_help,guidance_reference_runs,guidance_notes,duration_secs,note\r\n",
        );
        for row in &self.rows {
            let guidance = |kind: &str| {
                row.guidance
                    .as_ref()
                    .map(|g| g.get(kind).copied().unwrap_or(0).to_string())
                    .unwrap_or_default()
            };
            let fields = [
                row.submission.clone(),
                row.group.clone(),
                row.status.label().to_string(),
                row.passed.to_string(),
                row.failed.to_string(),
                row.unfinished.to_string(),
                points(row.score),
                points(row.max_score),
                if row.compile_error { "yes" } else { "no" }.to_string(),
                guidance("help"),
                guidance("reference-run"),
                guidance("note"),
                format!("{:.2}", row.duration_secs),
                row.note.clone(),
            ];
            let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
            out.push_str(&line.join(","));
            out.push_str("\r\n");
        }
        out
    }

    /// Writes `grades.json` and `grades.csv` into `dir`, each whole or not at all.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for (name, text) in [
            ("grades.json", self.to_json()),
            ("grades.csv", self.to_csv()),
        ] {
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            std::io::Write::write_all(&mut tmp, text.as_bytes())?;
            tmp.persist(dir.join(name)).map_err(|e| e.error)?;
        }
        Ok(())
    }
}

/// Points as a spreadsheet reads them: `3`, `2.5`.
fn points(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break; a field a spreadsheet
/// would run as a formula (`=`, `+`, `-`, `@` first) gets a leading `'`, since submission
/// names and notes come from learners.
fn csv_field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@']) {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(submission: &str, note: &str) -> Row {
        Row {
            submission: submission.into(),
            group: "build3".into(),
            status: RowStatus::Failing,
            passed: 30,
            failed: 8,
            unfinished: 1,
            score: 34.5,
            max_score: 43.0,
            compile_error: false,
            guidance: Some([("help".to_string(), 2)].into_iter().collect()),
            duration_secs: 1.234,
            note: note.into(),
            content_hash: "ab".into(),
        }
    }

    #[test]
    fn csv_quotes_what_needs_it_and_defuses_formulas() {
        let book = Gradebook::new(vec![
            row("zed", "first failure: \"x\", then y\nmore"),
            row("=cmd()", "ok"),
        ]);
        let csv = book.to_csv();
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert!(lines[0].starts_with("submission,group,status,passed"));
        assert_eq!(
            lines[1], "'=cmd(),build3,failing,30,8,1,34.5,43,no,2,0,0,1.23,ok",
            "sorted by submission; a formula is defused"
        );
        assert!(lines[2].ends_with(",\"first failure: \"\"x\"\", then y\nmore\""));
    }

    #[test]
    fn no_log_leaves_the_guidance_columns_empty() {
        let mut r = row("ana", "");
        r.guidance = None;
        let csv = Gradebook::new(vec![r]).to_csv();
        assert!(csv.contains(",no,,,,1.23,"), "{csv}");
    }

    #[test]
    fn json_round_trips_and_is_versioned() {
        let dir = tempfile::tempdir().unwrap();
        let book = Gradebook::new(vec![row("ana", "")]);
        book.write(dir.path()).unwrap();
        let back = Gradebook::load(dir.path()).unwrap();
        assert_eq!(back, book);
        let value: serde_json::Value = serde_json::from_str(&book.to_json()).unwrap();
        assert_eq!(value["schema"], SCHEMA);
        assert_eq!(value["rows"][0]["status"], "failing");
    }
}
