//! A class's roster (`grade --roster FILE.csv`): who should have handed something in, with
//! the id an LMS export matches on.
//!
//! A CSV file (RFC 4180; a UTF-8 byte-order mark and `;` separators, as spreadsheets write
//! them, are accepted) whose header row has the columns `id`, `name` and `submission` (any
//! case, any order): `submission` is the name of the student's folder (or `.rs` file) in
//! the submissions folder, empty for a student who handed in nothing. Other columns are
//! kept, and passed through to the gradebook and the exports.

use super::gradebook::Student;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The roster's columns that must be there.
pub(crate) const REQUIRED: [&str; 3] = ["id", "name", "submission"];

/// A roster, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Roster {
    /// The columns beyond the required ones, in the file's order.
    pub(crate) extra_columns: Vec<String>,
    /// Its students, in the file's order.
    pub(crate) students: Vec<Entry>,
}

/// One student of a roster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The student: id, name and the other columns.
    pub(crate) student: Student,
    /// Their submission's name in the submissions folder, `None` when the cell is empty.
    pub(crate) submission: Option<String>,
    /// The line of the file it was read from.
    pub(crate) line: usize,
}

/// Why a roster cannot be used.
#[derive(Debug, Error, PartialEq, Eq)]
pub(crate) enum RosterError {
    /// The file could not be read.
    #[error("cannot read the roster {path}: {why}")]
    Read {
        /// The file.
        path: PathBuf,
        why: String,
    },
    /// The file is not CSV as a roster needs it.
    #[error("{path}:{line}: {what}")]
    Bad {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What is wrong there.
        what: String,
    },
}

/// The most bytes of a roster read: a class of thousands fits many times over.
const MAX_ROSTER: u64 = 8 * 1024 * 1024;

/// Reads the roster at `path`.
pub(crate) fn load(path: &Path) -> Result<Roster, RosterError> {
    let read = |why: String| RosterError::Read {
        path: path.to_path_buf(),
        why,
    };
    let bytes =
        super::submission::read_no_follow(path, MAX_ROSTER).map_err(|e| read(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        read("it is not UTF-8 text: save it from the spreadsheet as \"CSV UTF-8\"".into())
    })?;
    parse(&text).map_err(|(line, what)| RosterError::Bad {
        path: path.to_path_buf(),
        line,
        what,
    })
}

/// Parses a roster's text; an error is its line and what is wrong.
pub(crate) fn parse(text: &str) -> Result<Roster, AtLine> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first_line = text.lines().next().unwrap_or("");
    let separator = if !first_line.contains(',') && first_line.contains(';') {
        ';'
    } else {
        ','
    };
    let records = records(text, separator)?;
    let Some((header_line, header)) = records.first() else {
        return Err((
            1,
            "the roster is empty: it needs a header row id,name,submission".into(),
        ));
    };
    let names: Vec<String> = header.iter().map(|h| h.trim().to_lowercase()).collect();
    let mut seen = BTreeSet::new();
    for name in &names {
        if name.is_empty() {
            return Err((
                *header_line,
                "a column of the header row has no name".into(),
            ));
        }
        if !seen.insert(name.clone()) {
            return Err((*header_line, format!("the column {name:?} is named twice")));
        }
    }
    let at = |column: &str| names.iter().position(|n| n == column);
    let mut required = [0; 3];
    for (slot, column) in required.iter_mut().zip(REQUIRED) {
        *slot = at(column).ok_or_else(|| {
            (
                *header_line,
                format!(
                    "the header row has no {column:?} column: it needs id, name and submission \
                     (found {})",
                    header.join(", ")
                ),
            )
        })?;
    }
    let extra: Vec<(usize, String)> = header
        .iter()
        .enumerate()
        .filter(|(i, _)| !required.contains(i))
        .map(|(i, h)| (i, h.trim().to_string()))
        .collect();
    let mut ids = BTreeMap::new();
    let mut submissions = BTreeMap::new();
    let mut students = Vec::new();
    for (line, record) in &records[1..] {
        if record.iter().all(|cell| cell.trim().is_empty()) {
            continue;
        }
        if record.len() != header.len() {
            return Err((
                *line,
                format!(
                    "{} cells where the header has {}: a cell with a comma in it needs quotes",
                    record.len(),
                    header.len()
                ),
            ));
        }
        let cell = |i: usize| record[i].trim().to_string();
        let id = cell(required[0]);
        if id.is_empty() {
            return Err((*line, "the id is empty: every student needs one".into()));
        }
        if let Some(first) = ids.insert(id.clone(), *line) {
            return Err((*line, format!("the id {id:?} is on line {first} too")));
        }
        let submission = Some(cell(required[2])).filter(|s| !s.is_empty());
        if let Some(name) = &submission {
            if let Some(first) = submissions.insert(name.clone(), *line) {
                return Err((
                    *line,
                    format!("the submission {name:?} is on line {first} too: whose is it?"),
                ));
            }
        }
        students.push(Entry {
            student: Student {
                id,
                name: cell(required[1]),
                extra: extra.iter().map(|(i, h)| (h.clone(), cell(*i))).collect(),
            },
            submission,
            line: *line,
        });
    }
    Ok(Roster {
        extra_columns: extra.into_iter().map(|(_, h)| h).collect(),
        students,
    })
}

/// A CSV record: the line it starts on, and its fields.
type Record = (usize, Vec<String>);

/// What is wrong, and on which line.
type AtLine = (usize, String);

/// The records of a CSV text, each with the line it starts on: fields split at
/// `separator`, quoted fields (`"a, b"`, `"say ""hi"""`) may hold separators and line
/// breaks.
fn records(text: &str, separator: char) -> Result<Vec<Record>, AtLine> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let (mut line, mut start) = (1, 1);
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => {
                quoted = false;
                if chars
                    .peek()
                    .is_some_and(|&n| n != separator && n != '\n' && n != '\r')
                {
                    return Err((
                        line,
                        "text after a closing quote: write \"\" for a quote inside quotes".into(),
                    ));
                }
            }
            (true, c) => {
                if c == '\n' {
                    line += 1;
                }
                field.push(c);
            }
            (false, '"') if field.is_empty() => quoted = true,
            (false, c) if c == separator => record.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, '\n' | '\r') => {
                record.push(std::mem::take(&mut field));
                records.push((start, std::mem::take(&mut record)));
                line += 1;
                start = line;
            }
            (false, c) => field.push(c),
        }
    }
    if quoted {
        return Err((start, "a quote is opened and never closed".into()));
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push((start, record));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spreadsheets_roster_is_read_with_its_extra_columns() {
        let text = "\u{feff}ID,Name,Section,Submission\r\n\
                    s-1,\"Lima, Ana\",B,ana\r\n\
                    s-2,Bo \"the\" Li,A,\r\n\
                    \r\n\
                    s-3,\"Cy\nMultiline\",A,cy\r\n";
        let roster = parse(text).unwrap();
        assert_eq!(roster.extra_columns, ["Section"]);
        let ids: Vec<&str> = roster
            .students
            .iter()
            .map(|e| e.student.id.as_str())
            .collect();
        assert_eq!(ids, ["s-1", "s-2", "s-3"]);
        assert_eq!(roster.students[0].student.name, "Lima, Ana");
        assert_eq!(roster.students[0].student.extra["Section"], "B");
        assert_eq!(roster.students[0].submission.as_deref(), Some("ana"));
        assert_eq!(roster.students[1].submission, None, "handed in nothing");
        assert_eq!(roster.students[2].line, 5);
    }

    #[test]
    fn semicolons_are_read_as_european_spreadsheets_write_them() {
        let roster = parse("id;name;submission\n1;Ana;ana\n").unwrap();
        assert_eq!(roster.students[0].submission.as_deref(), Some("ana"));
    }

    #[test]
    fn a_bad_roster_says_which_line_and_what_to_do() {
        for (text, line, said) in [
            ("", 1, "empty"),
            ("id,name\n1,Ana\n", 1, "no \"submission\" column"),
            ("id,name,submission,id\n", 1, "named twice"),
            ("id,name,submission\n1,Ana,ana\n2,Bo\n", 3, "needs quotes"),
            (
                "id,name,submission\n1,Ana,ana\n1,Bo,bo\n",
                3,
                "on line 2 too",
            ),
            (
                "id,name,submission\n1,Ana,ana\n2,Bo,ana\n",
                3,
                "whose is it",
            ),
            ("id,name,submission\n,Ana,ana\n", 2, "id is empty"),
            ("id,name,submission\n1,\"Ana,ana\n", 2, "never closed"),
            ("id,name,submission\n1,\"Ana\"x,ana\n", 2, "closing quote"),
        ] {
            let (at, what) = parse(text).unwrap_err();
            assert_eq!(at, line, "{text:?}: {what}");
            assert!(what.contains(said), "{text:?}: {what}");
        }
    }

    #[test]
    fn a_file_that_is_not_text_is_refused_with_a_hint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("roster.csv");
        std::fs::write(&path, b"id,name,submission\n\xff\xfe\n").unwrap();
        let e = load(&path).unwrap_err().to_string();
        assert!(e.contains("CSV UTF-8"), "{e}");
        let e = load(&dir.path().join("none.csv")).unwrap_err().to_string();
        assert!(e.contains("cannot read the roster"), "{e}");
    }
}
