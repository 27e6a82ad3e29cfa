//! `GUIDANCE_LOG.md`: the local, append-only record of guidance used.
//!
//! The course counts help as guidance, not independent evidence, so every use is written
//! down *before* the guidance is shown; if it cannot be written, nothing is shown.
//!
//! The file is Markdown a person can read, with one table row per record that a program can
//! parse back:
//!
//! ```text
//! | seq | time (UTC) | group | kind | detail |
//! |---|---|---|---|---|
//! | 1 | 2026-11-30T16:49:15Z | build3 | help | level 1: refresher |
//! ```
//!
//! Appending opens the file (creating it when it is missing, never truncating it), takes an
//! exclusive lock on it (to number records without gaps or repeats across processes),
//! checks that the locked file is still the one at the path, reads the last number, and
//! writes the new rows (the header too, when the file is empty) with a single `write` in
//! append mode. Nothing here ever truncates, rewrites or reorders the file.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use thiserror::Error;

/// The log's file name, at the kit's root.
pub const LOG_FILE: &str = "GUIDANCE_LOG.md";

const TABLE_HEADER: &str = "| seq | time (UTC) | group | kind | detail |";
const TABLE_RULE: &str = "|---|---|---|---|---|";

/// The text a new log starts with.
pub const HEADER: &str = "# Guidance log\n\
\n\
A local, append-only record of the guidance used while working through the kit: help\n\
opened, runs against the reference, notes of outside help. The grader adds one row per use;\n\
nothing in the kit removes or rewrites a row, `reset` included. Do not edit the rows:\n\
`cargo run -p grader -- log --check` reports gaps and lines it cannot read.\n\
\n\
| seq | time (UTC) | group | kind | detail |\n\
|---|---|---|---|---|\n";

/// What kind of guidance a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Course help shown by `grader help`.
    Help,
    /// The checks run against the reference implementation.
    ReferenceRun,
    /// Help the learner got elsewhere and noted with `grader note`.
    Note,
    /// The log was missing and was started again.
    LogRecreated,
    /// Every check of the learner's own code passed for the first time: not guidance, the
    /// line between guidance used on the way to a pass and guidance used after it.
    FirstPass,
}

impl Kind {
    /// Every kind, in the order summaries list them.
    pub(crate) const ALL: [Kind; 5] = [
        Kind::Help,
        Kind::ReferenceRun,
        Kind::Note,
        Kind::LogRecreated,
        Kind::FirstPass,
    ];

    /// The name used in the log.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Help => "help",
            Kind::ReferenceRun => "reference-run",
            Kind::Note => "note",
            Kind::LogRecreated => "log-recreated",
            Kind::FirstPass => "first-pass",
        }
    }

    /// Parses a name written by [`Kind::as_str`].
    pub(crate) fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// A phrase for summaries, e.g. "2 help records".
    pub(crate) fn counted(self, n: usize) -> String {
        let s = if n == 1 { "" } else { "s" };
        match self {
            Kind::Help => format!("{n} help record{s}"),
            Kind::ReferenceRun => format!("{n} reference run{s}"),
            Kind::Note => format!("{n} note{s}"),
            Kind::LogRecreated => format!("{n} log recreation{s}"),
            Kind::FirstPass => format!("{n} first pass{}", if n == 1 { "" } else { "es" }),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// 1, 2, 3, … with no gaps.
    pub seq: u64,
    /// RFC 3339 UTC time, to the second.
    pub(crate) time: String,
    /// The lesson (the table's `group` column), or `-` for the log itself.
    pub lesson: String,
    /// What kind of guidance.
    pub kind: Kind,
    /// What was shown or noted, on one line.
    pub detail: String,
}

impl Record {
    /// The record as a table row (with its newline).
    pub(crate) fn to_row(&self) -> String {
        format!(
            "| {} | {} | {} | {} | {} |\n",
            self.seq,
            self.time,
            escape(&self.lesson),
            self.kind,
            escape(&self.detail)
        )
    }

    /// Parses a row written by [`Record::to_row`].
    pub(crate) fn parse_row(line: &str) -> Option<Record> {
        let inner = line.strip_prefix("| ")?.strip_suffix(" |")?;
        let cells = split_cells(inner);
        let [seq, time, lesson, kind, detail] = <[String; 5]>::try_from(cells).ok()?;
        let seq: u64 = seq.parse().ok().filter(|n| *n > 0)?;
        humantime::parse_rfc3339(&time).ok()?;
        Some(Record {
            seq,
            time,
            lesson,
            kind: Kind::parse(&kind)?,
            detail,
        })
    }
}

fn escape(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    one_line.replace('\\', "\\\\").replace('|', "\\|")
}

fn split_cells(inner: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => cell.extend(chars.next()),
            '|' => cells.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    cells.push(cell);
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

/// Why the log could not be used.
#[derive(Debug, Error)]
pub enum GuidanceError {
    /// The record could not be written (read-only file, a folder in its place, a full disk…).
    #[error("cannot record guidance in {path}: {source}")]
    Write {
        /// The log.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The log could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The log.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
}

/// A line of the log that is not a valid record, or a break in the numbering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line number in the file.
    pub(crate) line: usize,
    /// What is wrong.
    pub(crate) what: String,
}

/// What `log --check` found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Contents {
    /// Every record that parsed, in file order.
    pub records: Vec<Record>,
    /// Every problem, in file order.
    pub problems: Vec<Problem>,
}

impl Contents {
    /// How many records of `kind` there are for `lesson`.
    pub fn count(&self, lesson: &str, kind: Kind) -> usize {
        self.records
            .iter()
            .filter(|r| r.lesson == lesson && r.kind == kind)
            .count()
    }

    /// "2 help records, 1 reference run" for `lesson`, or `None` when it has none.
    ///
    /// Only the guidance recorded before the lesson's first pass ([`Kind::FirstPass`]) counts:
    /// what a pass was reached with. [`Contents::after_first_pass`] says the rest.
    pub(crate) fn summary(&self, lesson: &str) -> Option<String> {
        let first_pass = self.first_pass(lesson).unwrap_or(self.records.len());
        summarise(&self.records[..first_pass], lesson)
    }

    /// The guidance recorded for `lesson` after its first pass ("1 help record"), or `None`
    /// when there is none (or no pass yet).
    pub(crate) fn after_first_pass(&self, lesson: &str) -> Option<String> {
        let first_pass = self.first_pass(lesson)?;
        summarise(&self.records[first_pass + 1..], lesson)
    }

    /// Whether `lesson` has passed every check of the learner's own code once.
    pub(crate) fn has_passed(&self, lesson: &str) -> bool {
        self.first_pass(lesson).is_some()
    }

    /// The index, in [`Contents::records`], of `lesson`'s first-pass row.
    fn first_pass(&self, lesson: &str) -> Option<usize> {
        self.records
            .iter()
            .position(|r| r.lesson == lesson && r.kind == Kind::FirstPass)
    }
}

/// "2 help records, 1 reference run" for the guidance of `lesson` among `records`.
fn summarise(records: &[Record], lesson: &str) -> Option<String> {
    let parts: Vec<String> = [Kind::Help, Kind::ReferenceRun, Kind::Note]
        .into_iter()
        .map(|k| {
            let n = records
                .iter()
                .filter(|r| r.lesson == lesson && r.kind == k)
                .count();
            (k, n)
        })
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| k.counted(n))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The guidance log of one kit.
#[derive(Debug, Clone)]
pub struct GuidanceLog {
    path: PathBuf,
}

impl GuidanceLog {
    /// The log at the root of the kit in `root`.
    pub fn in_kit(root: &Path) -> Self {
        GuidanceLog {
            path: root.join(LOG_FILE),
        }
    }

    /// The log's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Records `lesson`'s first pass of every check ([`Kind::FirstPass`]) unless the log has
    /// one already. Returns whether it wrote one.
    pub(crate) fn mark_first_pass(&self, lesson: &str) -> Result<bool, GuidanceError> {
        if self.read()?.has_passed(lesson) {
            return Ok(false);
        }
        self.append(
            lesson,
            Kind::FirstPass,
            "every check of the learner's own code passed: guidance after this row came after \
             the pass",
        )?;
        Ok(true)
    }

    /// Appends one record and returns it. When the log is missing (or empty) it is started
    /// with its header, and that is recorded first.
    ///
    /// Creating the file, writing its header and appending the row all happen under one
    /// exclusive lock on one open file, so two writers at once on a missing log cannot
    /// write over each other.
    pub fn append(&self, lesson: &str, kind: Kind, detail: &str) -> Result<Record, GuidanceError> {
        let write_err = |source| GuidanceError::Write {
            path: self.path.clone(),
            source,
        };
        let mut file = self.open_locked().map_err(write_err)?;
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(write_err)?;
        let now = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        let mut rows = String::new();
        let mut last = 0;
        if text.is_empty() {
            // Whoever finds the file empty under the lock starts it; every other writer
            // finds the header already there.
            rows.push_str(HEADER);
            last += 1;
            let note = Record {
                seq: last,
                time: now.clone(),
                lesson: "-".into(),
                kind: Kind::LogRecreated,
                detail: "the log was missing; started again with its header".into(),
            };
            rows.push_str(&note.to_row());
        } else {
            last = parse(&text)
                .records
                .iter()
                .map(|r| r.seq)
                .max()
                .unwrap_or(0);
        }
        let record = Record {
            seq: last + 1,
            time: now,
            lesson: lesson.to_string(),
            kind,
            detail: detail.to_string(),
        };
        rows.push_str(&record.to_row());
        // One write in append mode: the header and the rows land together at the end.
        file.write_all(rows.as_bytes()).map_err(write_err)?;
        file.flush().map_err(write_err)?;
        Ok(record)
    }

    /// Opens the log for reading and appending, creating it empty when it is missing (never
    /// truncating it), and takes its exclusive lock.
    ///
    /// The file locked must still be the one at the log's path: another process may have
    /// removed or replaced it between the open and the lock, and a row appended to a file
    /// no longer at the path would be lost. Then it opens the path again.
    fn open_locked(&self) -> io::Result<File> {
        const TRIES: usize = 100;
        for _ in 0..TRIES {
            let file = OpenOptions::new()
                .read(true)
                .append(true)
                .create(true)
                .open(&self.path)?;
            file.lock()?;
            let locked = file.metadata()?;
            match std::fs::metadata(&self.path) {
                Ok(at_path) if same_file(&locked, &at_path) => return Ok(file),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other(format!(
            "the file was replaced or removed each of {TRIES} times it was opened"
        )))
    }

    /// Reads and checks the log. A missing log reads as empty.
    pub(crate) fn read(&self) -> Result<Contents, GuidanceError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => Ok(parse(&text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Contents::default()),
            Err(source) => Err(GuidanceError::Read {
                path: self.path.clone(),
                source,
            }),
        }
    }
}

/// Parses a whole log: the rows after the table's header, and every problem with them.
pub fn parse(text: &str) -> Contents {
    let mut contents = Contents::default();
    let mut in_table = false;
    let mut expected = 1;
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if !in_table {
            in_table = line.trim() == TABLE_HEADER;
            continue;
        }
        if line.trim() == TABLE_RULE {
            continue;
        }
        match Record::parse_row(line.trim_end()) {
            Some(record) => {
                if record.seq != expected {
                    let what = if record.seq > expected {
                        format!(
                            "record {} follows record {}: {} missing (deleted?)",
                            record.seq,
                            expected - 1,
                            if record.seq - expected == 1 {
                                format!("record {expected} is")
                            } else {
                                format!("records {expected}..{} are", record.seq - 1)
                            }
                        )
                    } else {
                        format!(
                            "record {} comes after record {}: out of order or repeated",
                            record.seq,
                            expected - 1
                        )
                    };
                    contents.problems.push(Problem {
                        line: line_no,
                        what,
                    });
                }
                expected = record.seq.max(expected - 1) + 1;
                contents.records.push(record);
            }
            None => contents.problems.push(Problem {
                line: line_no,
                what: format!("not a record (edited?): {:?}", truncate(line, 80)),
            }),
        }
    }
    if !in_table && !text.trim().is_empty() {
        contents.problems.push(Problem {
            line: 1,
            what: format!("no table header {TABLE_HEADER:?}: the header was edited"),
        });
    }
    contents
}

/// Whether two metadata describe the same file (device and inode).
#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

/// Elsewhere std has no stable file identity; a file of another type or length at the path
/// is still caught.
#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.file_type() == b.file_type() && a.len() == b.len()
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the item's documentation once showed as an example.
    #[test]
    fn a_row_is_parsed_with_its_escaped_bar() {
        use crate::guidance::{Kind, Record};
        let r = Record::parse_row(r"| 3 | 2026-11-30T16:49:15Z | build3 | note | read a \| b |")
            .unwrap();
        assert_eq!(
            (r.seq, r.kind, r.detail.as_str()),
            (3, Kind::Note, "read a | b")
        );
    }

    fn log_in(dir: &Path) -> GuidanceLog {
        let log = GuidanceLog::in_kit(dir);
        std::fs::write(log.path(), HEADER).unwrap();
        log
    }

    #[test]
    fn rows_round_trip_with_awkward_text() {
        let record = Record {
            seq: 12,
            time: "2026-11-30T16:49:15Z".into(),
            lesson: "build3".into(),
            kind: Kind::Note,
            detail: "read reference/src/retry.rs | lines 1\\2\nand a tab\there".into(),
        };
        let row = record.to_row();
        assert_eq!(row.matches('\n').count(), 1, "one line per record");
        let back = Record::parse_row(row.trim_end()).unwrap();
        assert_eq!(
            back.detail,
            "read reference/src/retry.rs | lines 1\\2 and a tab here"
        );
        assert_eq!((back.seq, back.kind), (12, Kind::Note));
    }

    #[test]
    fn appends_number_records_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let log = log_in(dir.path());
        for i in 1..=3 {
            assert_eq!(log.append("build3", Kind::Help, "level 1").unwrap().seq, i);
        }
        let contents = log.read().unwrap();
        assert_eq!(contents.records.len(), 3);
        assert!(contents.problems.is_empty(), "{:?}", contents.problems);
        assert_eq!(
            contents.summary("build3").as_deref(),
            Some("3 help records")
        );
        assert_eq!(contents.summary("stage8"), None);
    }

    #[test]
    fn missing_log_is_recreated_and_that_is_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let log = GuidanceLog::in_kit(dir.path());
        let record = log.append("build3", Kind::Note, "x").unwrap();
        assert_eq!(record.seq, 2);
        let contents = log.read().unwrap();
        assert_eq!(contents.records[0].kind, Kind::LogRecreated);
        assert!(std::fs::read_to_string(log.path())
            .unwrap()
            .starts_with(HEADER));
    }

    #[test]
    fn deleted_and_edited_lines_are_problems() {
        let dir = tempfile::tempdir().unwrap();
        let log = log_in(dir.path());
        for _ in 0..4 {
            log.append("build3", Kind::Help, "level 2").unwrap();
        }
        let text = std::fs::read_to_string(log.path()).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        let second = lines.iter().position(|l| l.starts_with("| 2 |")).unwrap();
        lines.remove(second);
        let contents = parse(&lines.join("\n"));
        assert_eq!(contents.problems.len(), 1, "{:?}", contents.problems);
        assert!(contents.problems[0].what.contains("record 2 is missing"));

        let edited = text.replace("| 3 |", "| three |");
        let contents = parse(&edited);
        assert!(contents
            .problems
            .iter()
            .any(|p| p.what.starts_with("not a record")));
    }

    #[test]
    fn a_folder_in_place_of_the_log_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(LOG_FILE)).unwrap();
        let err = GuidanceLog::in_kit(dir.path())
            .append("build3", Kind::Help, "x")
            .unwrap_err();
        assert!(err.to_string().contains(LOG_FILE), "{err}");
    }

    /// A log renamed away while a writer waits for its lock: the row goes to the log now at
    /// the path, not to the file that was moved.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_log_replaced_while_waiting_for_the_lock_gets_the_row() {
        use std::time::{Duration, Instant};
        let dir = tempfile::tempdir().unwrap();
        let log = log_in(dir.path());
        let holder = File::open(log.path()).unwrap();
        holder.lock().unwrap();
        // How many of this process's open files are the log at its path.
        let opened = |path: &Path| {
            std::fs::read_dir("/proc/self/fd")
                .unwrap()
                .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
                .filter(|target| target == path)
                .count()
        };
        let (done, finished) = std::sync::mpsc::channel();
        let writer = log.clone();
        std::thread::spawn(move || {
            let _ = done.send(writer.append("build3", Kind::Note, "after the move"));
        });
        // Wait until the writer has the file open (and so waits for its lock).
        let path = log.path().canonicalize().unwrap();
        let started = Instant::now();
        while opened(&path) < 2 {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the writer never opened the log"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let moved = dir.path().join("moved-away.md");
        std::fs::rename(log.path(), &moved).unwrap();
        std::fs::write(log.path(), HEADER).unwrap();
        drop(holder);
        let record = finished
            .recv_timeout(Duration::from_secs(30))
            .expect("the writer finished within 30 s")
            .unwrap();
        assert_eq!(record.seq, 1);
        assert_eq!(
            std::fs::read_to_string(&moved).unwrap(),
            HEADER,
            "untouched"
        );
        let contents = log.read().unwrap();
        assert!(contents.problems.is_empty(), "{:?}", contents.problems);
        assert_eq!(contents.records, vec![record]);
    }

    /// The race that lost records: writers at once on a missing log, one of them creating
    /// it. Each round releases every writer together, so they meet inside `append`.
    #[test]
    fn writers_at_once_on_a_missing_log_lose_nothing() {
        const WRITERS: usize = 6;
        const ROUNDS: usize = 150;
        let (done, finished) = std::sync::mpsc::channel();
        // On its own thread, so that a writer stuck on the lock fails the test in bounded
        // time instead of hanging it.
        std::thread::spawn(move || {
            let outcome = std::panic::catch_unwind(|| {
                for round in 0..ROUNDS {
                    let dir = tempfile::tempdir().unwrap();
                    let log = GuidanceLog::in_kit(dir.path());
                    let start = std::sync::Barrier::new(WRITERS);
                    std::thread::scope(|s| {
                        for writer in 0..WRITERS {
                            let (log, start) = (&log, &start);
                            s.spawn(move || {
                                start.wait();
                                log.append("build3", Kind::Note, &format!("writer {writer}"))
                                    .unwrap();
                            });
                        }
                    });
                    let text = std::fs::read_to_string(log.path()).unwrap();
                    assert!(text.starts_with(HEADER), "round {round}: {text}");
                    let contents = parse(&text);
                    assert!(contents.problems.is_empty(), "round {round}: {text}");
                    let seqs: Vec<u64> = contents.records.iter().map(|r| r.seq).collect();
                    assert_eq!(
                        seqs,
                        (1..=WRITERS as u64 + 1).collect::<Vec<_>>(),
                        "round {round}: {text}"
                    );
                    assert_eq!(contents.count("-", Kind::LogRecreated), 1, "{text}");
                    for writer in 0..WRITERS {
                        let note = format!("writer {writer}");
                        let n = contents.records.iter().filter(|r| r.detail == note).count();
                        assert_eq!(n, 1, "round {round}, {note}: {text}");
                    }
                }
            });
            let _ = done.send(outcome);
        });
        match finished.recv_timeout(std::time::Duration::from_secs(120)) {
            Ok(Ok(())) => {}
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => panic!("the writers did not finish within 120 s (stuck on the lock?)"),
        }
    }
}
