//! The gradebook: one row per submission and lesson, as `grades.csv` (for a spreadsheet)
//! and `grades.json` (schema `retry-kit/gradebook`, version 1, for programs — and for the
//! next run, which skips a submission whose row was made from the same content).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The gradebook JSON's schema name.
pub(crate) const SCHEMA: &str = "retry-kit/gradebook";
/// The gradebook JSON's version.
pub(crate) const VERSION: u32 = 1;

/// How a submission's lesson ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RowStatus {
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
    /// A student on the roster (`--roster`) handed in nothing: no submission of theirs.
    Missing,
    /// The kit failed (a copy could not be made, cargo could not start, a bug in a check):
    /// the row is not a grade.
    KitError,
}

impl RowStatus {
    /// Its name in the gradebook.
    pub(crate) fn label(self) -> &'static str {
        match self {
            RowStatus::Passing => "passing",
            RowStatus::Failing => "failing",
            RowStatus::Unfinished => "unfinished",
            RowStatus::DoesNotCompile => "does-not-compile",
            RowStatus::Refused => "refused",
            RowStatus::MissingFile => "missing-file",
            RowStatus::Missing => "missing",
            RowStatus::KitError => "kit-error",
        }
    }
}

/// One submission's result on one lesson.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Row {
    /// The submission's name.
    pub(crate) submission: String,
    /// The lesson (the `group` column).
    #[serde(rename = "group")]
    pub(crate) lesson: String,
    /// How it ended.
    pub(crate) status: RowStatus,
    /// Checks that passed.
    pub(crate) passed: usize,
    /// Checks that failed (a wrong result, a panic, a crash, a timeout, a limit).
    pub(crate) failed: usize,
    /// Checks that reached `todo!()`.
    pub(crate) unfinished: usize,
    /// Points earned (the weights of the passed checks, from `exercises/LESSON/grading.toml`).
    pub(crate) score: f64,
    /// Points possible.
    pub(crate) max_score: f64,
    /// Whether the file did not compile.
    pub(crate) compile_error: bool,
    /// The guidance the submission's log records for the lesson, by kind; `None` when the
    /// submission came without a log.
    pub(crate) guidance: Option<BTreeMap<String, usize>>,
    /// Seconds spent grading it.
    pub(crate) duration_secs: f64,
    /// One line for the instructor: why there is no grade, or what stood out.
    pub(crate) note: String,
    /// The hash of what the row was made from (the kit, the lesson, the submission's file
    /// and log, the limits): an unchanged submission is not graded again.
    pub(crate) content_hash: String,
    /// Why the guidance counts cannot be trusted: the submitted log fails `log --check` (its
    /// first problem). The CSV's guidance columns then say `unverified`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) guidance_unverified: Option<String>,
    /// The checks that failed, in the lesson's order (a kit bug among them; unfinished
    /// checks are not).
    #[serde(default)]
    pub(crate) failed_checks: Vec<String>,
    /// The first failed check's message, cut to its first lines (for the class summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) first_message: Option<String>,
    /// How many checks were stopped at their time limit.
    #[serde(default)]
    pub(crate) timeouts: usize,
    /// The roster's student this row is for, when the batch had a roster (`--roster`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) student: Option<Student>,
}

/// A student as the roster names them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Student {
    /// The roster's `id` (what an LMS export matches on).
    pub(crate) id: String,
    /// The roster's `name`.
    pub(crate) name: String,
    /// The roster's other columns, by header (passed through to every export).
    #[serde(default)]
    pub(crate) extra: BTreeMap<String, String>,
}

impl Row {
    /// A row for `submission` and `lesson` with nothing graded yet: `status`, `note`, and
    /// zeros (the builder of every row that is not a graded one).
    pub(crate) fn empty(submission: &str, lesson: &str, status: RowStatus, note: String) -> Row {
        Row {
            submission: submission.to_string(),
            lesson: lesson.to_string(),
            status,
            passed: 0,
            failed: 0,
            unfinished: 0,
            score: 0.0,
            max_score: 0.0,
            compile_error: false,
            guidance: None,
            duration_secs: 0.0,
            note,
            content_hash: String::new(),
            guidance_unverified: None,
            failed_checks: Vec::new(),
            first_message: None,
            timeouts: 0,
            student: None,
        }
    }
}

/// The whole gradebook, as `grades.json` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Gradebook {
    /// [`SCHEMA`].
    pub(crate) schema: String,
    /// [`VERSION`].
    pub(crate) version: u32,
    /// The kit's version.
    pub(crate) kit_version: String,
    /// The run that made it: the UTC time it started, `2026-12-03T00-10-05Z`, also the name
    /// of its copy under `OUT/runs/`.
    #[serde(default)]
    pub(crate) run: String,
    /// The roster's columns beyond `id`, `name` and `submission`, in the roster's order
    /// (each row's [`Student::extra`] holds their values); empty without a roster.
    #[serde(default)]
    pub(crate) roster_columns: Vec<String>,
    /// The rows, by submission then lesson.
    pub(crate) rows: Vec<Row>,
}

/// The most characters of a row's note kept in the gradebook.
pub(crate) const NOTE_KEPT: usize = 300;

/// `note` cut to [`NOTE_KEPT`] characters, ending in "… (see the report)" when cut.
pub(crate) fn cut_note(note: String) -> String {
    if note.chars().count() <= NOTE_KEPT {
        return note;
    }
    let kept: String = note.chars().take(NOTE_KEPT).collect();
    format!("{kept}… (see the report)")
}

impl Gradebook {
    /// A gradebook of `rows`, sorted.
    pub(crate) fn new(mut rows: Vec<Row>) -> Gradebook {
        rows.sort_by(|a, b| (&a.submission, &a.lesson).cmp(&(&b.submission, &b.lesson)));
        // A note is a line of a spreadsheet: the learner's code chooses much of it (a
        // compiler's or a panic's text), and the reports hold the whole of it.
        for row in &mut rows {
            row.note = cut_note(std::mem::take(&mut row.note));
        }
        Gradebook {
            schema: SCHEMA.to_string(),
            version: VERSION,
            kit_version: env!("CARGO_PKG_VERSION").to_string(),
            run: String::new(),
            roster_columns: Vec::new(),
            rows,
        }
    }

    /// The same gradebook, naming `run` and the roster's extra `columns`.
    pub(crate) fn of_run(self, run: &str, columns: &[String]) -> Gradebook {
        Gradebook {
            run: run.to_string(),
            roster_columns: columns.to_vec(),
            ..self
        }
    }

    /// Whether any row is a roster's student's (then the CSV leads with `id` and `name`).
    fn has_roster(&self) -> bool {
        self.rows.iter().any(|r| r.student.is_some()) || !self.roster_columns.is_empty()
    }

    /// The gradebook a previous run wrote in `dir`, if there is a readable one.
    pub(crate) fn load(dir: &Path) -> Option<Gradebook> {
        let text = std::fs::read_to_string(dir.join("grades.json")).ok()?;
        let book: Gradebook = serde_json::from_str(&text).ok()?;
        (book.schema == SCHEMA && book.version == VERSION).then_some(book)
    }

    /// The JSON text.
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// The CSV text (RFC 4180: comma-separated, fields quoted when they need it). With a
    /// roster, `id` and `name` lead and the roster's other columns follow `note`; `run`
    /// ends every row.
    pub(crate) fn to_csv(&self) -> String {
        let roster = self.has_roster();
        let mut header: Vec<String> = Vec::new();
        if roster {
            header.extend(["id".to_string(), "name".to_string()]);
        }
        header.extend(
            "submission,group,status,passed,failed,unfinished,score,max_score,compile_error,\
             guidance_help,guidance_reference_runs,guidance_notes,duration_secs,note"
                .split(',')
                .map(str::to_string),
        );
        if roster {
            header.extend(self.roster_columns.iter().cloned());
        }
        header.push("run".to_string());
        let mut out: String = header
            .iter()
            .map(|h| csv_field(h))
            .collect::<Vec<_>>()
            .join(",");
        out.push_str("\r\n");
        for row in &self.rows {
            let guidance = |kind: &str| match (&row.guidance_unverified, &row.guidance) {
                (Some(_), _) => "unverified".to_string(),
                (None, Some(g)) => g.get(kind).copied().unwrap_or(0).to_string(),
                (None, None) => String::new(),
            };
            let mut line: Vec<String> = Vec::new();
            if roster {
                let student = row.student.as_ref();
                line.push(student.map(|s| s.id.clone()).unwrap_or_default());
                line.push(student.map(|s| s.name.clone()).unwrap_or_default());
            }
            let fields = [
                row.submission.clone(),
                row.lesson.clone(),
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
            line.extend(fields);
            if roster {
                for column in &self.roster_columns {
                    let value = row.student.as_ref().and_then(|s| s.extra.get(column));
                    line.push(value.cloned().unwrap_or_default());
                }
            }
            line.push(self.run.clone());
            let line: Vec<String> = line.iter().map(|f| csv_field(f)).collect();
            out.push_str(&line.join(","));
            out.push_str("\r\n");
        }
        out
    }

    /// Writes `grades.json` and `grades.csv` into `dir`, each whole or not at all.
    pub(crate) fn write(&self, dir: &Path) -> std::io::Result<()> {
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
pub(crate) fn points(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break; a field a spreadsheet
/// would run as a formula (`=`, `+`, `-`, `@` first) gets a leading `'`, since submission
/// names and notes come from learners. A leading tab or carriage return gets it too (OWASP's
/// list: some spreadsheets skip them and read the formula after).
pub(crate) fn csv_field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
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

    /// What the item's documentation once showed as an example.
    #[test]
    fn cut_note_keeps_short_notes_and_cuts_long_ones() {
        use crate::grade::gradebook::{cut_note, NOTE_KEPT};
        assert_eq!(cut_note("short".into()), "short");
        let long = cut_note("é".repeat(1000));
        assert!(long.chars().count() <= NOTE_KEPT + 20 && long.ends_with("… (see the report)"));
    }

    fn row(submission: &str, note: &str) -> Row {
        Row {
            passed: 30,
            failed: 8,
            unfinished: 1,
            score: 34.5,
            max_score: 43.0,
            guidance: Some([("help".to_string(), 2)].into_iter().collect()),
            duration_secs: 1.234,
            content_hash: "ab".into(),
            ..Row::empty(submission, "build3", RowStatus::Failing, note.into())
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
            lines[1], "'=cmd(),build3,failing,30,8,1,34.5,43,no,2,0,0,1.23,ok,",
            "sorted by submission; a formula is defused"
        );
        assert!(lines[2].ends_with(",\"first failure: \"\"x\"\", then y\nmore\","));
    }

    #[test]
    fn no_log_leaves_the_guidance_columns_empty() {
        let mut r = row("ana", "");
        r.guidance = None;
        let csv = Gradebook::new(vec![r]).to_csv();
        assert!(csv.contains(",no,,,,1.23,"), "{csv}");
    }

    #[test]
    fn an_unverified_log_and_a_roster_show_in_the_csv() {
        let mut r = row("ana", "guidance log unverified");
        r.guidance_unverified = Some("line 9: record 3 follows record 1".into());
        r.student = Some(Student {
            id: "s-17".into(),
            name: "Ana Lima".into(),
            extra: [("section".to_string(), "B".to_string())].into(),
        });
        let missing = Row {
            student: Some(Student {
                id: "@s-18".into(),
                name: "Bo".into(),
                extra: BTreeMap::new(),
            }),
            ..Row::empty(
                "bo",
                "build3",
                RowStatus::Missing,
                "handed in nothing".into(),
            )
        };
        let book =
            Gradebook::new(vec![r, missing]).of_run("2026-12-03T00-10-05Z", &["section".into()]);
        let csv = book.to_csv();
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert!(
            lines[0].starts_with("id,name,submission,group,"),
            "{}",
            lines[0]
        );
        assert!(lines[0].ends_with(",note,section,run"), "{}", lines[0]);
        assert!(
            lines[1].starts_with("s-17,Ana Lima,ana,build3,failing,")
                && lines[1].contains(",no,unverified,unverified,unverified,1.23,"),
            "{}",
            lines[1]
        );
        assert!(
            lines[1].ends_with(",B,2026-12-03T00-10-05Z"),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].starts_with("'@s-18,Bo,bo,build3,missing,0,"),
            "{}",
            lines[2]
        );
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
