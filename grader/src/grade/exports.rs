//! The gradebook as an LMS imports it (`grade --roster FILE --report canvas|moodle`): one
//! row per roster student, one column per lesson graded, matched on the roster's ids.
//!
//! - **Canvas** (*Grades → Import*): the columns of Canvas's own gradebook export —
//!   `Student`, `ID`, `SIS User ID`, `SIS Login ID`, `Section` — then one column per
//!   lesson, headed with its title (Canvas makes a new assignment of a column it does not
//!   know), and a `Points Possible` row under the header, as Canvas's export has it. The
//!   roster's `id` is the `SIS User ID`; the roster's columns `canvas_id`, `sis_login_id`
//!   and `section`, when it has them, fill the others (Canvas matches a row on any of the
//!   three ids).
//! - **Moodle** (*Grades → Import → CSV file*): `ID number`, `Full name`, `Email address`,
//!   then per lesson its points and a `Feedback` column; on import, map `ID number` to the
//!   user field "ID number" and each lesson's column to its grade item. The roster's `email`
//!   column, when there is one, fills `Email address`.
//!
//! A student who handed in nothing, or whose file did not compile or was refused, scores 0;
//! a kit error is not a grade, so its cell is left empty (an LMS leaves an empty cell's
//! grade as it was) and its feedback says so.

use super::gradebook::{csv_field, Gradebook, Row, RowStatus};

/// A lesson graded: its name and title, and its points possible.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lesson {
    /// Its name, e.g. `build3`.
    pub(crate) name: String,
    /// Its title, the column's heading.
    pub(crate) title: String,
    /// Points possible.
    pub(crate) points: f64,
}

/// The LMS formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lms {
    /// Canvas's gradebook import.
    Canvas,
    /// Moodle's CSV grade import.
    Moodle,
}

impl Lms {
    /// Its name on the command line and its file's: `canvas.csv`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Lms::Canvas => "canvas",
            Lms::Moodle => "moodle",
        }
    }
}

/// The CSV `lms` imports, for `book`'s roster students and `lessons`.
pub(crate) fn render(lms: Lms, book: &Gradebook, lessons: &[Lesson]) -> String {
    let mut lines: Vec<Vec<String>> = Vec::new();
    let mut students: Vec<&super::gradebook::Student> = Vec::new();
    for row in &book.rows {
        if let Some(student) = &row.student {
            if !students.iter().any(|s| s.id == student.id) {
                students.push(student);
            }
        }
    }
    let extra =
        |s: &super::gradebook::Student, key: &str| s.extra.get(key).cloned().unwrap_or_default();
    let row_of = |id: &str, lesson: &str| -> Option<&Row> {
        book.rows.iter().find(|r| {
            r.student.as_ref().is_some_and(|s| s.id == id)
                && (r.lesson == lesson || r.lesson.is_empty())
        })
    };
    match lms {
        Lms::Canvas => {
            let mut header: Vec<String> =
                ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
                    .map(str::to_string)
                    .to_vec();
            header.extend(lessons.iter().map(|l| l.title.clone()));
            lines.push(header);
            let mut possible = vec![
                "    Points Possible".to_string(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ];
            possible.extend(lessons.iter().map(|l| points(l.points)));
            lines.push(possible);
            for s in &students {
                let mut line = vec![
                    s.name.clone(),
                    extra(s, "canvas_id"),
                    s.id.clone(),
                    extra(s, "sis_login_id"),
                    extra(s, "section"),
                ];
                line.extend(lessons.iter().map(|l| score(row_of(&s.id, &l.name))));
                lines.push(line);
            }
        }
        Lms::Moodle => {
            let mut header: Vec<String> = ["ID number", "Full name", "Email address"]
                .map(str::to_string)
                .to_vec();
            for l in lessons {
                header.push(l.title.clone());
                header.push(format!("Feedback: {}", l.title));
            }
            lines.push(header);
            for s in &students {
                let mut line = vec![s.id.clone(), s.name.clone(), extra(s, "email")];
                for l in lessons {
                    let row = row_of(&s.id, &l.name);
                    line.push(score(row));
                    line.push(feedback(row, l));
                }
                lines.push(line);
            }
        }
    }
    let mut out = String::new();
    for line in lines {
        let cells: Vec<String> = line.iter().map(|c| csv_field(c)).collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
}

/// A row's points as the LMS reads them; empty for a kit error (not a grade).
fn score(row: Option<&Row>) -> String {
    match row {
        None => "0".to_string(),
        Some(r) if r.status == RowStatus::KitError => String::new(),
        Some(r) => points(r.score),
    }
}

/// One line a student reads in Moodle.
fn feedback(row: Option<&Row>, lesson: &Lesson) -> String {
    match row {
        None => "no submission".to_string(),
        Some(r) => match r.status {
            RowStatus::KitError => {
                "not graded: the grader failed; your instructor will grade it again".into()
            }
            RowStatus::Missing => "no submission".into(),
            RowStatus::MissingFile => format!("no file for {} in the submission", lesson.name),
            _ => format!(
                "{}: {} of {} points",
                r.status.label(),
                points(r.score),
                points(lesson.points)
            ),
        },
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

#[cfg(test)]
mod tests {
    use super::super::gradebook::Student;
    use super::*;

    fn student(id: &str, name: &str) -> Option<Student> {
        Some(Student {
            id: id.into(),
            name: name.into(),
            extra: [
                ("section".to_string(), "B".to_string()),
                ("email".to_string(), format!("{id}@uni.example")),
            ]
            .into(),
        })
    }

    fn book() -> Gradebook {
        let graded = Row {
            score: 40.5,
            max_score: 43.0,
            student: student("s-1", "Lima, Ana"),
            ..Row::empty("ana", "build3", RowStatus::Failing, String::new())
        };
        let missing = Row {
            max_score: 43.0,
            student: student("s-2", "Bo"),
            ..Row::empty(
                "bo",
                "build3",
                RowStatus::Missing,
                "handed in nothing".into(),
            )
        };
        let broken = Row {
            student: student("=s-3", "Cy"),
            ..Row::empty("cy", "build3", RowStatus::KitError, "kit".into())
        };
        let stranger = Row::empty("dee", "build3", RowStatus::Passing, String::new());
        Gradebook::new(vec![graded, missing, broken, stranger])
    }

    fn lessons() -> Vec<Lesson> {
        vec![Lesson {
            name: "build3".into(),
            title: "Retry transient failures".into(),
            points: 43.0,
        }]
    }

    #[test]
    fn canvas_has_its_export_columns_a_points_row_and_one_row_per_student() {
        let csv = render(Lms::Canvas, &book(), &lessons());
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(
            lines[0],
            "Student,ID,SIS User ID,SIS Login ID,Section,Retry transient failures"
        );
        assert_eq!(lines[1], "    Points Possible,,,,,43");
        assert_eq!(lines[2], "\"Lima, Ana\",,s-1,,B,40.5");
        assert_eq!(lines[3], "Bo,,s-2,,B,0", "handed in nothing: 0");
        assert_eq!(lines[4], "Cy,,'=s-3,,B,", "a kit error is no grade: empty");
        assert_eq!(
            lines.len(),
            6,
            "no row for a submission not on the roster: {csv}"
        );
    }

    #[test]
    fn moodle_has_an_id_number_a_grade_and_feedback_per_lesson() {
        let csv = render(Lms::Moodle, &book(), &lessons());
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(
            lines[0],
            "ID number,Full name,Email address,Retry transient failures,\
             Feedback: Retry transient failures"
        );
        assert_eq!(
            lines[1],
            "s-1,\"Lima, Ana\",s-1@uni.example,40.5,failing: 40.5 of 43 points"
        );
        assert_eq!(lines[2], "s-2,Bo,s-2@uni.example,0,no submission");
        assert!(lines[3].starts_with("'=s-3,Cy,"), "{}", lines[3]);
        assert!(lines[3]
            .ends_with(",,not graded: the grader failed; your instructor will grade it again"));
    }
}
