//! Grading a class: every submission in a copy of the kit of its own, a few at a time, with
//! the same isolation and limits as a learner's run, into reports and a gradebook.
//!
//! - `submission`: which submissions there are, and each one's file for a lesson.
//! - `gradebook`: the rows, as `grades.csv` and `grades.json`.
//!
//! The grading copies are warmed from the kit's own build ([`seed`]).
//!
//! A batch never stops for one submission: one that does not compile, loops, crashes or
//! exhausts its limits gets its row like any other, and so does a failure of the kit on one
//! submission (as `kit-error`, never as the learner's grade). Each copy builds into its own
//! target folder, so no submission can be graded with another's build.

pub(crate) mod copied;
pub(crate) mod exports;
pub(crate) mod gradebook;
pub(crate) mod history;
pub(crate) mod roster;
pub mod similarity;
pub(crate) mod submission;
pub(crate) mod summary;

pub(crate) use gradebook::{Gradebook, Row, RowStatus};
pub(crate) use submission::{Submission, SubmissionError};

use submission::{ReadError, Refusal, MAX_LESSON_FILE, MAX_LOG_FILE};

use crate::borrowed;
use crate::cache::content_hash;
use crate::compile::{self, BuildError, BuildPlace, CompileLimits};
use crate::events::{OnFinished, Tee};
use crate::guidance::LOG_FILE;
use crate::kitcopy::{self, Files, Slot};
use crate::reports::{self, ReportFormat, RunReport};
use crate::seed;
use crate::suite::{self, RunSettings, Summary};
use crate::{Lesson, LessonInfo, Outcome, Status};
use grader_checks::limits::Limits;
use libtest_mimic::{Arguments, ColorSetting, FormatSetting};
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use thiserror::Error;

/// How to grade a batch.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Grade only this lesson (otherwise: every lesson a submission holds a file for).
    pub(crate) lesson: Option<&'static Lesson>,
    /// How many submissions are graded at once.
    pub(crate) jobs: usize,
    /// Where the reports and the gradebook go.
    pub(crate) out: PathBuf,
    /// The report formats written for each submission.
    pub(crate) formats: Vec<ReportFormat>,
    /// Grade again even what is unchanged since the last run.
    pub(crate) force: bool,
    /// The batch is one submission: its reports go straight into `out`.
    pub(crate) one: bool,
    /// How long one check may run.
    pub(crate) timeout: Duration,
    /// The limits each check runs under.
    pub(crate) limits: Limits,
    /// The protections of the sandbox that are off for this batch (`--allow-weak-sandbox`),
    /// each with its reason; every row graded says so.
    pub(crate) sandbox_off: Vec<String>,
    /// The bounds each submission's compile runs under.
    pub(crate) compile: CompileLimits,
    /// The class's roster: every student gets a row (`missing` when they handed in
    /// nothing), and the rows carry their ids.
    pub(crate) roster: Option<roster::Roster>,
    /// The run's name (see [`history::run_name`]): the gradebook names it, and a copy of
    /// it is kept under `OUT/runs/` with that name.
    pub(crate) run: String,
    /// The LMS gradebook imports to write beside the gradebook (they need a roster).
    pub(crate) exports: Vec<exports::Lms>,
}

/// What a batch tells its caller while it works.
#[derive(Debug, Clone)]
pub(crate) enum Event {
    /// Another grading run of this kit holds every grading copy: this one waits for one.
    Waiting,
    /// The grading copies are being built for the first time (`slots` of them).
    Preparing {
        /// How many copies.
        slots: usize,
    },
    /// The batch starts: `total` rows to make, `skipped` of them unchanged.
    Started {
        /// Rows in all.
        total: usize,
    },
    /// A row is done.
    Finished {
        /// The row (boxed: it is large beside the other events).
        row: Box<Row>,
        /// Whether it was taken from the last run, unchanged.
        skipped: bool,
    },
}

/// Why a batch could not run at all.
#[derive(Debug, Error)]
pub(crate) enum GradeError {
    /// The submissions could not be listed.
    #[error(transparent)]
    Submissions(#[from] SubmissionError),
    /// A lesson's metadata could not be read.
    #[error(transparent)]
    LessonInfo(#[from] crate::lesson_info::LessonInfoError),
    /// The kit's files or a grading copy could not be read or written.
    #[error("cannot prepare a copy of the kit to grade in: {0}")]
    Copy(std::io::Error),
    /// The kit itself does not build, so no submission could be graded.
    #[error("the kit does not build in a grading copy ({dir}): {reason}")]
    KitBuild {
        /// The copy.
        dir: PathBuf,
        /// What failed.
        reason: String,
    },
    /// The gradebook could not be written.
    #[error("cannot write the gradebook in {dir}: {source}")]
    Gradebook {
        /// The folder.
        dir: PathBuf,
        source: std::io::Error,
    },
}

/// A submission's lesson file as it was graded, for the similarity of the class.
struct LessonFile {
    lesson: &'static str,
    /// The submission's name, as the gradebook has it.
    submission: String,
    text: String,
}

/// One submission's lesson to grade.
#[derive(Debug, Clone)]
struct Job {
    submission: Submission,
    lesson: &'static Lesson,
    exercise: LessonInfo,
    /// The submitted file graded, as the submissions folder names it (`ada/lib.rs`), its
    /// control characters escaped (the learner named it).
    file: String,
    content: Vec<u8>,
    log: Option<Vec<u8>>,
    hash: String,
    /// Why nothing of it is compiled (a symbolic link, a file past its bound): the row is
    /// `refused` with this note.
    refused: Option<String>,
    /// The reference answer the file equals, ignoring whitespace and comments (see
    /// [`copied`]).
    copies: Option<PathBuf>,
    /// The graded file as the learner knows it, within their submission (`src/lib.rs`):
    /// the reports name it so, not where the kit placed it (`practice/src/lib.rs`).
    submitted: String,
    /// The submission's other files that could have been the lesson's and differ from the
    /// one graded (`ada/lib.rs` beside `ada/src/lib.rs`), as the folder names them.
    also: Vec<String>,
}

/// Grades `submissions` with the kit at `kit` and returns the gradebook (also written to
/// `settings.out` after every row, so an interrupted batch keeps what it graded); then
/// writes the class's files beside it (the LMS exports `settings.exports` asks for) and
/// keeps a copy of them all as the run's, under `OUT/runs/RUN/`.
///
/// A submission's name is the learner's choice: its control characters are escaped
/// ([`crate::sanitise`]) before it names anything (a row, a progress line, a report, the
/// folder of its reports), so a name cannot fake another row on a terminal.
pub(crate) fn grade(
    kit: &Path,
    submissions: &[Submission],
    settings: &Settings,
    events: &(dyn Fn(Event) + Sync),
) -> Result<Graded, GradeError> {
    let (book, graded_files) = grade_rows(kit, submissions, settings, events)?;
    let class = |source| GradeError::Gradebook {
        dir: settings.out.clone(),
        source,
    };
    let lessons: Vec<exports::Lesson> = crate::lessons::LESSONS
        .iter()
        .filter(|g| settings.lesson.is_none_or(|only| only.name == g.name))
        .filter(|g| book.rows.iter().any(|r| r.lesson == g.name))
        .map(|g| exports::Lesson {
            name: g.name.to_string(),
            title: g.title.to_string(),
            points: book
                .rows
                .iter()
                .find(|r| r.lesson == g.name && r.max_score > 0.0)
                .map_or(0.0, |r| r.max_score),
        })
        .collect();
    let mut kept = vec!["grades.json".to_string(), "grades.csv".to_string()];
    for lms in &settings.exports {
        let name = format!("{}.csv", lms.name());
        write_whole(
            &settings.out,
            &name,
            &exports::render(*lms, &book, &lessons),
        )
        .map_err(class)?;
        kept.push(name);
    }
    // The class at a glance, for a batch (one submission has no class to compare with).
    let (mut pairs, mut unread) = (Vec::new(), Vec::new());
    if !settings.one {
        let compared = compare_class(kit, &graded_files, &lessons);
        pairs = compared.pairs;
        unread = compared.unread;
        write_whole(&settings.out, "similarity.csv", &similarity::csv(&pairs)).map_err(class)?;
        let summary = summary::Class {
            book: &book,
            lessons: lessons
                .iter()
                .map(|l| {
                    let checks = crate::lessons::lesson(&l.name)
                        .map(|g| g.checks.iter().map(|c| c.name).collect())
                        .unwrap_or_default();
                    (l, checks)
                })
                .collect(),
            pairs: &pairs,
            unread: &unread,
        };
        write_whole(&settings.out, "summary.md", &summary.markdown()).map_err(class)?;
        write_whole(&settings.out, "summary.html", &summary.html()).map_err(class)?;
        kept.extend(["similarity.csv", "summary.md", "summary.html"].map(String::from));
    }
    let kept: Vec<&str> = kept.iter().map(String::as_str).collect();
    history::keep(&settings.out, &settings.run, &kept).map_err(class)?;
    Ok(Graded {
        book,
        pairs,
        unread,
    })
}

/// What [`grade`] made: the gradebook, and the similarity pairs it wrote to
/// `similarity.csv` (most alike first).
#[derive(Debug)]
pub(crate) struct Graded {
    /// The gradebook.
    pub(crate) book: Gradebook,
    /// The pairs of submissions (or of a submission and the reference) worth a look.
    pub(crate) pairs: Vec<similarity::Pair>,
    /// The lesson files the similarity could not read (in no pair), as `NAME (LESSON)`.
    pub(crate) unread: Vec<String>,
}

/// [`class_similarity`] on a thread of its own with a large stack, so that no learner's
/// file can take the gradebook down with it: a failure there (a bug of the kit's, or a
/// file it cannot cope with) leaves the pairs empty and says why in `unread`, and the
/// gradebook and the run are kept as usual.
fn compare_class(
    kit: &Path,
    files: &[LessonFile],
    lessons: &[exports::Lesson],
) -> similarity::Compared {
    let failed = |why: String| similarity::Compared {
        pairs: Vec::new(),
        unread: vec![format!("(similarity not computed: {why})")],
    };
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("similarity".into())
            .stack_size(256 << 20)
            .spawn_scoped(scope, || class_similarity(kit, files, lessons));
        match worker {
            Ok(handle) => handle.join().unwrap_or_else(|panic| {
                let what = grader_checks::panics::panic_message(&*panic);
                failed(format!("a bug in the kit: {what}"))
            }),
            Err(e) => failed(format!("cannot start its thread: {e}")),
        }
    })
}

/// The similarity pairs of each lesson graded: every submission's lesson file, as it was
/// graded (a refused one is not among them), against the others' and the reference answer
/// (named by its path in the kit, which no submission can be named), with the lesson's
/// stub as the base text every submission shares.
fn class_similarity(
    kit: &Path,
    files: &[LessonFile],
    lessons: &[exports::Lesson],
) -> similarity::Compared {
    let mut compared = similarity::Compared::default();
    for lesson in lessons {
        let Ok(exercise) = LessonInfo::load(kit, &lesson.name) else {
            continue;
        };
        let read = |path: PathBuf| std::fs::read_to_string(path).ok();
        let stub = read(exercise.dir(kit).join(&exercise.stub)).unwrap_or_default();
        let answer = exercise
            .answer
            .as_ref()
            .and_then(|a| Some((a.display().to_string(), read(kit.join(a))?)));
        let files: Vec<(String, String)> = files
            .iter()
            .filter(|f| f.lesson == lesson.name)
            .map(|f| (f.submission.clone(), f.text.clone()))
            .collect();
        let found = similarity::pairs(
            &lesson.name,
            &files,
            answer
                .as_ref()
                .map(|(name, text)| (name.as_str(), text.as_str())),
            &stub,
        );
        compared.pairs.extend(found.pairs);
        compared.unread.extend(
            found
                .unread
                .into_iter()
                .map(|name| format!("{name} ({})", lesson.name)),
        );
    }
    similarity::sort(&mut compared.pairs);
    compared
}

/// Writes `text` as `dir/name`, whole or not at all.
fn write_whole(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.persist(dir.join(name)).map(|_| ()).map_err(|e| e.error)
}

/// [`grade`]'s rows: the gradebook, written after every row.
fn grade_rows(
    kit: &Path,
    submissions: &[Submission],
    settings: &Settings,
    events: &(dyn Fn(Event) + Sync),
) -> Result<(Gradebook, Vec<LessonFile>), GradeError> {
    let submissions: Vec<Submission> = submissions
        .iter()
        .map(|s| Submission {
            name: gradebook_name(&s.name),
            path: s.path.clone(),
        })
        .collect();
    let submissions = submissions.as_slice();
    let mut base = kitcopy::fresh_files(kit, kitcopy::Untracked::Left).map_err(GradeError::Copy)?;
    // Submissions or reports kept inside the kit are not part of it.
    for dir in submissions
        .iter()
        .map(|s| s.path.clone())
        .chain([settings.out.clone()])
    {
        if let Some(rel) = std::fs::canonicalize(&dir)
            .ok()
            .zip(std::fs::canonicalize(kit).ok())
            .and_then(|(d, k)| d.strip_prefix(k).ok().map(Path::to_path_buf))
            .filter(|rel| !rel.as_os_str().is_empty())
        {
            base.retain(|path, _| !path.starts_with(&rel));
        }
    }
    let kit_digest = digest(&base);
    let exercises: Vec<(&'static Lesson, LessonInfo)> = crate::lessons::LESSONS
        .iter()
        .map(|g| Ok((*g, LessonInfo::load(kit, g.name)?)))
        .collect::<Result<_, GradeError>>()?;

    // Each lesson's reference answer as the kit has it, for the rows of files that equal it.
    let answers: Answers = exercises
        .iter()
        .filter_map(|(g, e)| {
            let path = e.answer.clone()?;
            let text = String::from_utf8_lossy(base.get(&path)?).into_owned();
            Some((g.name, (path, copied::normalized(&text))))
        })
        .collect();
    // Each lesson's points, for the rows of lessons that could not be graded.
    let points: BTreeMap<&'static str, f64> = exercises
        .iter()
        .map(|(g, e)| {
            let weights = reports::weights::load(&e.dir(kit)).unwrap_or_default();
            let total = g.checks.iter().fold(0.0, |sum, c| sum + weights.of(c.name));
            (g.name, total)
        })
        .collect();
    let mut rows = Vec::new();
    let mut jobs = Vec::new();
    for submission in submissions {
        let batch = Batch {
            exercises: &exercises,
            answers: &answers,
            points: &points,
            settings,
            kit_digest: &kit_digest,
        };
        plan(batch, submission, &mut jobs, &mut rows);
    }
    // What was graded, read once: the similarity compares these very bytes.
    let files: Vec<LessonFile> = jobs
        .iter()
        .filter(|job| job.refused.is_none())
        .map(|job| LessonFile {
            lesson: job.lesson.name,
            submission: job.submission.name.clone(),
            text: String::from_utf8_lossy(&job.content).into_owned(),
        })
        .collect();
    let previous = (!settings.force)
        .then(|| Gradebook::load(&settings.out))
        .flatten();
    // Every check of a graded lesson runs, the one that reads its input too.
    for job in &jobs {
        crate::check_input::want(job.lesson.name);
    }
    let mut pending = VecDeque::new();
    let mut reused = Vec::new();
    for job in jobs {
        let earlier = previous.as_ref().and_then(|book| {
            book.rows.iter().find(|r| {
                r.submission == job.submission.name
                    && r.lesson == job.lesson.name
                    && r.content_hash == job.hash
                    && r.status != RowStatus::KitError
            })
        });
        let reports_kept = settings
            .formats
            .iter()
            .all(|f| report_path(settings, &job.submission.name, job.lesson.name, *f).is_file());
        match earlier {
            // The roster's part is this run's to add.
            Some(row) if reports_kept => reused.push(Row {
                student: None,
                ..row.clone()
            }),
            _ => pending.push_back(job),
        }
    }
    events(Event::Started {
        total: rows.len() + reused.len() + pending.len(),
    });
    // The gradebook of `rows` as this run writes it: the roster's students on them, a row
    // for each student who handed in nothing, and the run's name.
    let book_of = |rows: &[Row]| {
        let rows = match &settings.roster {
            Some(roster) => {
                with_roster(rows.to_vec(), roster, submissions, settings.lesson, &points)
            }
            None => rows.to_vec(),
        };
        let columns = settings
            .roster
            .as_ref()
            .map_or(Vec::new(), |r| r.extra_columns.clone());
        Gradebook::new(rows).of_run(&settings.run, &columns)
    };
    let write_book = |rows: &[Row]| {
        book_of(rows)
            .write(&settings.out)
            .map_err(|source| GradeError::Gradebook {
                dir: settings.out.clone(),
                source,
            })
    };
    for row in &rows {
        events(Event::Finished {
            row: Box::new(row.clone()),
            skipped: false,
        });
    }
    for row in reused {
        events(Event::Finished {
            row: Box::new(row.clone()),
            skipped: true,
        });
        rows.push(row);
    }
    write_book(&rows)?;
    if pending.is_empty() {
        return Ok((book_of(&rows), files));
    }

    let slots = prepare_slots(kit, &base, &exercises, settings, pending.len(), events)?;
    let queue = Mutex::new(pending);
    let (sender, receiver) = mpsc::channel::<Row>();
    std::thread::scope(|scope| -> Result<(), GradeError> {
        for slot in &slots {
            let (queue, sender, base) = (&queue, sender.clone(), &base);
            scope.spawn(move || {
                let next = || queue.lock().ok().and_then(|mut q| q.pop_front());
                while let Some(job) = next() {
                    let started = Instant::now();
                    let row = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        grade_job(slot, base, &job, settings)
                    }))
                    .unwrap_or_else(|panic| {
                        let why = grader_checks::panics::panic_message(&*panic);
                        kit_error(&job, format!("the grader failed on this submission: {why}"))
                    });
                    let row = Row {
                        duration_secs: started.elapsed().as_secs_f64(),
                        note: with_sandbox_note(row.note, &settings.sandbox_off),
                        ..row
                    };
                    if sender.send(row).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        for row in receiver {
            events(Event::Finished {
                row: Box::new(row.clone()),
                skipped: false,
            });
            rows.push(row);
            write_book(&rows)?;
        }
        Ok(())
    })?;
    Ok((book_of(&rows), files))
}

/// A submission's name in the gradebook, every report and every export: its control
/// characters escaped, and a `'` before a name a spreadsheet would run as a formula (`=`,
/// `+`, `-`, `@` first), so that the name is the same in grades.json as in grades.csv.
pub(crate) fn gradebook_name(name: &str) -> String {
    // A name is one line: a line break or a tab in it (kept raw in messages) could start a
    // line of the grader's own on a terminal, or push a cell aside.
    let name = crate::sanitise::escape_string(name.to_string())
        .replace('\n', "\\u{a}")
        .replace('\t', "\\u{9}");
    if name.starts_with(['=', '+', '-', '@']) {
        format!("'{name}")
    } else {
        name
    }
}

/// `rows` with the roster's students on them, and a `missing` row for each student whose
/// submission is not among `submissions` (for `lesson`, or for no lesson in particular).
fn with_roster(
    mut rows: Vec<Row>,
    roster: &roster::Roster,
    submissions: &[Submission],
    lesson: Option<&Lesson>,
    points: &BTreeMap<&'static str, f64>,
) -> Vec<Row> {
    for entry in &roster.students {
        let name = entry.submission.as_deref().map(gradebook_name);
        let theirs: Vec<&mut Row> = rows
            .iter_mut()
            .filter(|r| name.as_deref() == Some(r.submission.as_str()))
            .collect();
        if theirs.is_empty() {
            let handed_in = name
                .as_ref()
                .is_some_and(|n| submissions.iter().any(|s| &s.name == n));
            if handed_in {
                continue;
            }
            let note = match &entry.submission {
                Some(folder) => format!(
                    "no submission: the roster (line {}) names {folder:?}, which the \
                     submissions folder does not hold",
                    entry.line
                ),
                None => format!("no submission: the roster (line {}) names none", entry.line),
            };
            let lesson_name = lesson.map_or("", |g| g.name);
            rows.push(Row {
                max_score: points.get(lesson_name).copied().unwrap_or(0.0),
                student: Some(entry.student.clone()),
                ..Row::empty(
                    &name.unwrap_or_else(|| gradebook_name(&entry.student.id)),
                    lesson_name,
                    RowStatus::Missing,
                    note,
                )
            });
            continue;
        }
        for row in theirs {
            row.student = Some(entry.student.clone());
        }
    }
    rows
}

/// A graded row's note, saying which protections of the sandbox were off when it was
/// graded (none: the note as it is).
fn with_sandbox_note(note: String, off: &[String]) -> String {
    if off.is_empty() {
        return note;
    }
    let weak = format!("graded with a weak sandbox ({})", off.join("; "));
    if note.is_empty() {
        weak
    } else {
        format!("{note}; {weak}")
    }
}

/// Each lesson's reference answer: its path in the kit, and its text as [`copied::normalized`]
/// makes it.
type Answers = BTreeMap<&'static str, (PathBuf, String)>;

/// Adds to `jobs` the lessons `submission` is graded on (a refused one too, so that it gets
/// its reports), and to `rows` a row for each lesson it cannot be (no file for it).
/// What planning a submission's jobs needs to know of the batch.
#[derive(Clone, Copy)]
struct Batch<'a> {
    exercises: &'a [(&'static Lesson, LessonInfo)],
    answers: &'a Answers,
    points: &'a BTreeMap<&'static str, f64>,
    settings: &'a Settings,
    kit_digest: &'a str,
}

fn plan(batch: Batch<'_>, submission: &Submission, jobs: &mut Vec<Job>, rows: &mut Vec<Row>) {
    let Batch {
        exercises,
        answers,
        points,
        settings,
        kit_digest,
    } = batch;
    let named = settings.lesson.is_some();
    // A symbolic link (to another learner's folder, say), or a single file past its bound,
    // is refused before anything else is read.
    let whole = submission.refusal().map(ReadError::Refused).or_else(|| {
        submission
            .is_file()
            .then(|| submission.read(&submission.path, MAX_LESSON_FILE).err())
            .flatten()
    });
    if let Some(ReadError::Refused(refusal)) = whole {
        let why = refused_note(submission, &refusal);
        match exercises
            .iter()
            .find(|(g, _)| settings.lesson.is_some_and(|n| n.name == g.name))
        {
            Some((lesson, exercise)) => jobs.push(refused_job(
                kit_digest,
                submission,
                lesson,
                exercise,
                &submission.path,
                why,
            )),
            None => rows.push(Row {
                status: RowStatus::Refused,
                ..missing(submission, "", why)
            }),
        }
        return;
    }
    let chosen: Vec<&(&'static Lesson, LessonInfo)> = match settings.lesson {
        Some(g) => exercises
            .iter()
            .filter(|(eg, _)| eg.name == g.name)
            .collect(),
        None if submission.is_file() => exercises
            .iter()
            .filter(|(_, e)| submission.defines(&e.function))
            .collect(),
        // A lesson whose file is refused is one the submission is graded on: its row says why.
        None => exercises
            .iter()
            .filter(|(_, e)| !matches!(submission.lesson_file(e, false), Ok(None)))
            .collect(),
    };
    if chosen.is_empty() {
        let expected: Vec<String> = exercises
            .iter()
            .map(|(g, e)| {
                if submission.is_file() {
                    format!("fn {} ({})", e.function, g.name)
                } else {
                    format!(
                        "{} ({})",
                        e.file
                            .file_name()
                            .map_or("?".into(), |n| n.to_string_lossy()),
                        g.name
                    )
                }
            })
            .collect();
        let note = if submission.is_file() {
            format!(
                "cannot tell which lesson this file is for: it defines none of {}; name the \
                 lesson with --lesson",
                expected.join(", ")
            )
        } else {
            // A folder whose only `.rs` file has another name (a platform renamed the
            // upload) is graded with --lesson: say so, naming the file.
            let only = exercises
                .first()
                .and_then(|(_, e)| submission.lesson_file(e, true).ok().flatten());
            let hint = match only {
                Some(file) => {
                    // The lesson whose function the file defines, when one is.
                    let text = submission
                        .read(&file, MAX_LESSON_FILE)
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_default();
                    let lesson = exercises
                        .iter()
                        .find(|(_, e)| text.contains(&format!("fn {}", e.function)))
                        .map_or("LESSON", |(g, _)| g.name);
                    format!(
                        "; it holds one .rs file, {}: name its lesson to grade it (--lesson {lesson})",
                        crate::sanitise::escape_string(
                            shown(submission, &file).display().to_string()
                        ),
                    )
                }
                None => String::new(),
            };
            format!(
                "no lesson file found: expected one of {} at the folder's top, in src/ or in \
                 practice/src/{hint}",
                expected.join(", ")
            )
        };
        rows.push(missing(submission, "", note));
        return;
    }
    // A log that is a link is refused with the lesson: it could be another learner's.
    let log = match submission.guidance_log() {
        Ok(Some(path)) => match submission.read(&path, MAX_LOG_FILE) {
            Ok(log) => Ok(Some(log)),
            Err(ReadError::Refused(refusal)) => Err((path, refusal)),
            Err(ReadError::Io { .. }) => Ok(None),
        },
        Ok(None) => Ok(None),
        Err(refusal) => Err((submission.path.join(LOG_FILE), refusal)),
    };
    for (lesson, exercise) in chosen {
        let found = submission.lesson_file(exercise, named);
        let refused = match (&found, &log) {
            (Err(refusal), _) => Some((submission.path.clone(), refusal.clone())),
            (_, Err((path, refusal))) => Some((path.clone(), refusal.clone())),
            _ => None,
        };
        if let Some((path, refusal)) = refused {
            let why = refused_note(submission, &refusal);
            jobs.push(refused_job(
                kit_digest, submission, lesson, exercise, &path, why,
            ));
            continue;
        }
        let log = log.as_ref().ok().cloned().flatten();
        let Ok(Some(file)) = found else {
            let note = format!(
                "no {} found for {} (at the folder's top, in src/ or in practice/src/)",
                exercise
                    .file
                    .file_name()
                    .map_or("file".into(), |n| n.to_string_lossy()),
                lesson.name
            );
            rows.push(Row {
                max_score: points.get(lesson.name).copied().unwrap_or(0.0),
                ..missing(submission, lesson.name, note)
            });
            continue;
        };
        // Other files that could be the lesson's, when they differ from the one graded.
        let also: Vec<String> = submission
            .lesson_files(exercise)
            .unwrap_or_default()
            .into_iter()
            .filter(|other| *other != file)
            .filter(|other| {
                submission.read(other, MAX_LESSON_FILE).ok()
                    != submission.read(&file, MAX_LESSON_FILE).ok()
            })
            .map(|other| {
                crate::sanitise::escape_string(shown(submission, &other).display().to_string())
            })
            .collect();
        let content = match submission.read(&file, MAX_LESSON_FILE) {
            Ok(content) => content,
            Err(ReadError::Refused(refusal)) => {
                let why = refused_note(submission, &refusal);
                jobs.push(refused_job(
                    kit_digest, submission, lesson, exercise, &file, why,
                ));
                continue;
            }
            Err(e) => {
                rows.push(missing(
                    submission,
                    lesson.name,
                    crate::sanitise::escape_string(e.to_string()),
                ));
                continue;
            }
        };
        let normalized = copied::normalized(&String::from_utf8_lossy(&content));
        let copies = answers
            .get(lesson.name)
            .filter(|(_, answer)| normalized == *answer)
            .map(|(path, _)| path.clone());
        let hash = content_hash(
            format!(
                "{kit_digest}\n{}\n{:?}\n{}\n{:?}\n{}\n{}\n",
                lesson.name,
                settings.timeout,
                settings.limits.memory,
                settings.compile,
                content_hash(&content),
                log.as_deref().map_or("no log".into(), content_hash),
            )
            .as_bytes(),
        );
        jobs.push(Job {
            submission: submission.clone(),
            lesson,
            exercise: exercise.clone(),
            file: crate::sanitise::escape_string(shown(submission, &file).display().to_string()),
            content,
            log,
            hash,
            refused: None,
            copies,
            also,
            submitted: within(submission, &file),
        });
    }
}

/// A job that compiles nothing: its row is `refused` with `why`, and it gets its reports.
fn refused_job(
    kit_digest: &str,
    submission: &Submission,
    lesson: &'static Lesson,
    exercise: &LessonInfo,
    file: &Path,
    why: String,
) -> Job {
    let hash = content_hash(format!("{kit_digest}\n{}\nrefused\n{why}\n", lesson.name).as_bytes());
    Job {
        submission: submission.clone(),
        lesson,
        exercise: exercise.clone(),
        file: crate::sanitise::escape_string(shown(submission, file).display().to_string()),
        content: Vec::new(),
        log: None,
        hash,
        refused: Some(why),
        copies: None,
        also: Vec::new(),
        submitted: within(submission, file),
    }
}

/// `file` as the learner knows it, within their submission (`src/lib.rs`; a single-file
/// submission's own name), its control characters escaped.
fn within(submission: &Submission, file: &Path) -> String {
    let rel = file
        .strip_prefix(&submission.path)
        .ok()
        .filter(|r| !r.as_os_str().is_empty())
        .or_else(|| file.file_name().map(Path::new))
        .unwrap_or(file);
    crate::sanitise::escape_string(rel.display().to_string())
}

/// `report` naming the learner's file as they know it: the compiler's and the checks'
/// messages say where the kit placed it (`practice/src/lib.rs:3:5`), which is not a path
/// of their submission when they handed in `src/lib.rs`.
fn relocate(report: &mut RunReport, placed: &Path, submitted: &str) {
    let placed = placed.display().to_string();
    if placed == submitted || submitted.is_empty() {
        return;
    }
    let swap = |text: &mut String| {
        if text.contains(&placed) {
            *text = text.replace(&placed, submitted);
        }
    };
    if let Some(reports::NotRun::DoesNotCompile(text) | reports::NotRun::Refused(text)) =
        &mut report.not_run
    {
        swap(text);
    }
    for check in &mut report.checks {
        if let Some(message) = &mut check.message {
            swap(message);
        }
        if let Some(location) = &mut check.location {
            swap(location);
        }
    }
    report.learner_file = Some(submitted.to_string());
}

/// `path` as the submissions folder names it (`ada/lib.rs`).
fn shown(submission: &Submission, path: &Path) -> PathBuf {
    submission
        .path
        .parent()
        .map_or(path.to_path_buf(), |folder| {
            path.strip_prefix(folder).unwrap_or(path).to_path_buf()
        })
}

/// The note of a refused row: `refused: ada/lib.rs is a symbolic link; nothing was graded`.
fn refused_note(submission: &Submission, refusal: &Refusal) -> String {
    let refusal = match refusal.clone() {
        Refusal::Link(path) => Refusal::Link(shown(submission, &path)),
        Refusal::NotAFile(path) => Refusal::NotAFile(shown(submission, &path)),
        Refusal::TooLarge { path, limit } => Refusal::TooLarge {
            path: shown(submission, &path),
            limit,
        },
    };
    format!("refused: {refusal}; nothing was graded")
}

/// A row for a lesson a submission has no (readable) file for.
fn missing(submission: &Submission, lesson: &str, note: String) -> Row {
    Row::empty(&submission.name, lesson, RowStatus::MissingFile, note)
}

/// A row for a submission the kit failed on: not a grade.
fn kit_error(job: &Job, note: String) -> Row {
    Row {
        status: RowStatus::KitError,
        note,
        content_hash: job.hash.clone(),
        ..missing(&job.submission, job.lesson.name, String::new())
    }
}

/// A digest of the kit's files that a grade depends on: a row graded by another kit is
/// graded again.
fn digest(files: &Files) -> String {
    let mut text = Vec::new();
    for (path, content) in files.iter().filter(|(path, _)| affects_grades(path)) {
        text.extend_from_slice(path.to_string_lossy().as_bytes());
        text.extend_from_slice(content_hash(content).as_bytes());
    }
    content_hash(&text)
}

/// Whether a file of the kit can change a grade or a report: the manifests, what the harness
/// is built from, the exercises' metadata and points, and the grader's own code — not the
/// documents, tests, benchmarks or CI scripts (a lesson's wording does not change a grade).
fn affects_grades(path: &Path) -> bool {
    const SOURCES: [&str; 7] = [
        "reference",
        "practice",
        "exercises",
        "grader/src",
        "grader/checks/src",
        "grader/runner/src",
        "grader/harness",
    ];
    let manifest = path.file_name().is_some_and(|n| n == "Cargo.toml");
    let document = path.extension().is_some_and(|e| e == "md");
    !document
        && (manifest
            || path == Path::new("Cargo.lock")
            || SOURCES.iter().any(|dir| path.starts_with(dir)))
}

/// Where a submission's report in `format` goes.
pub(crate) fn report_path(
    settings: &Settings,
    submission: &str,
    lesson: &str,
    format: ReportFormat,
) -> PathBuf {
    submission_dir(settings, submission).join(format!("{lesson}.{}", format.file_suffix()))
}

/// The folder of a submission's reports.
fn submission_dir(settings: &Settings, submission: &str) -> PathBuf {
    if settings.one {
        settings.out.clone()
    } else {
        settings.out.join(submission)
    }
}

/// Takes up to `count` grading copies (at most `settings.jobs`; fewer when another grading
/// run holds some) and makes each warm: the first from the kit's build, or from a warm one.
fn prepare_slots(
    kit: &Path,
    base: &Files,
    exercises: &[(&'static Lesson, LessonInfo)],
    settings: &Settings,
    count: usize,
    events: &(dyn Fn(Event) + Sync),
) -> Result<Vec<Slot>, GradeError> {
    let pool = crate::workspace::target_dir(kit).join("kit-grade");
    let count = count.min(settings.jobs).max(1);
    // One slot, waiting for it if another grading run holds them all; then as many more as
    // are free (waiting for a second while holding one could wait for ever: two runs each
    // holding one and waiting for the other's).
    let first = match Slot::try_acquire(&pool, count, base).map_err(GradeError::Copy)? {
        Some(slot) => slot,
        None => {
            events(Event::Waiting);
            Slot::acquire(&pool, count, base).map_err(GradeError::Copy)?
        }
    };
    let mut slots = vec![first];
    while slots.len() < count {
        match Slot::try_acquire(&pool, count, base).map_err(GradeError::Copy)? {
            Some(slot) => slots.push(slot),
            None => break,
        }
    }
    let cold: Vec<&Slot> = slots.iter().filter(|s| !seed::is_warm(s.root())).collect();
    if cold.is_empty() {
        return Ok(slots);
    }
    events(Event::Preparing { slots: cold.len() });
    let warm = match slots.iter().find(|s| seed::is_warm(s.root())) {
        Some(warm) => warm,
        None => {
            let first = cold[0];
            // The kit's own build (the one `cargo run -p grader` just made) warms the first
            // copy; cargo compiles whatever it cannot reuse. The kit's build lock keeps a
            // harness build there from writing while its files are copied.
            let kit_target = crate::workspace::target_dir(kit);
            if seed::is_warm_target(&kit_target) {
                let _lock = compile::lock_builds(&kit_target).map_err(GradeError::Copy)?;
                warm_or_leave_cold(kit, &kit_target.join("debug"), first.root(), base);
            }
            let lesson = settings.lesson.map_or(exercises[0].0.name, |g| g.name);
            let mut messages = Vec::new();
            compile::build_harness_at(
                &BuildPlace::isolated(first.root()),
                lesson,
                false,
                &mut messages,
            )
            .map_err(|e| GradeError::KitBuild {
                dir: first.root().to_path_buf(),
                reason: match e {
                    BuildError::Compile { errors } => errors.join("\n"),
                    other => other.to_string(),
                },
            })?;
            first
        }
    };
    for slot in cold.into_iter().filter(|s| s.root() != warm.root()) {
        let from = warm.root();
        warm_or_leave_cold(from, &from.join("target/debug"), slot.root(), base);
    }
    Ok(slots)
}

/// Builds the kit's own crates in `slot` for the present state of the kit, from the kit's
/// files alone (`base`: the lessons' stubs), when no build there since the kit last changed
/// did ([`compile::recipe_fits`]): a submission's compile may not read their sources
/// (`bounded::confine`), so it must find them built. Unconfined, untimed: the kit's own code.
/// A build that fails here is left to show in the submission's (as the kit's failure).
/// `again`: whatever its recipe says (a submission's build found them out of date all the
/// same).
fn prepare_slot(slot: &Slot, base: &Files, lesson: &str, again: bool) -> std::io::Result<()> {
    let place = BuildPlace::isolated(slot.root());
    if !again && compile::recipe_fits(&place, lesson) {
        return Ok(());
    }
    if again {
        compile::forget_builds_and_recipe(&place, lesson);
    }
    kitcopy::sync(slot.root(), base)?;
    let _ = compile::build_harness_at(&place, lesson, false, &mut std::io::sink());
    Ok(())
}

/// Seeds the cold copy `to` (see [`seed::seed`]); if that fails, the copy is left cold (its
/// first build compiles everything), not half seeded: only slower, never a wrong build.
fn warm_or_leave_cold(from: &Path, from_debug: &Path, to: &Path, files: &Files) {
    if seed::seed(from, from_debug, to, files).is_err() {
        let _ = std::fs::remove_dir_all(to.join("target/debug"));
    }
}

/// Grades one job in `slot` and writes its reports.
fn grade_job(slot: &Slot, base: &Files, job: &Job, settings: &Settings) -> Row {
    let started = SystemTime::now();
    if let Err(e) = prepare_slot(slot, base, job.lesson.name, false) {
        return kit_error(job, format!("cannot prepare its copy of the kit: {e}"));
    }
    let mut files = base.clone();
    // A refused job's copy keeps the stub: nothing of the submission is compiled.
    if job.refused.is_none() {
        files.insert(job.exercise.file.clone(), job.content.clone());
    }
    if let Some(log) = &job.log {
        files.insert(PathBuf::from(LOG_FILE), log.clone());
    }
    if let Err(e) = kitcopy::sync(slot.root(), &files) {
        return kit_error(job, format!("cannot prepare its copy of the kit: {e}"));
    }
    let root = slot.root();
    let mut text = Vec::new();
    // The compiler's messages and the checks name the file where the kit placed it.
    let _ = writeln!(
        text,
        "{} · {} ({}) · kit {}\n{} was graded as {} (its lines keep their numbers)\n",
        job.submission.name,
        job.lesson.name,
        job.lesson.title,
        env!("CARGO_PKG_VERSION"),
        job.file,
        job.exercise.file.display()
    );
    if let Some(answer) = &job.copies {
        let _ = writeln!(
            text,
            "note: this file is identical to the reference answer {} (ignoring whitespace and \
             comments)\n",
            answer.display()
        );
    }
    if !job.also.is_empty() {
        let _ = writeln!(
            text,
            "note: the submission also holds {}, which differs and was not graded\n",
            job.also.join(", ")
        );
    }
    let outcome = match &job.refused {
        Some(why) => {
            let _ = writeln!(text, "{why}");
            Err(Stopped::NotRun {
                status: RowStatus::Refused,
                why: why.clone(),
            })
        }
        None => {
            let header = text.len();
            match run_checks(root, job, settings, &mut text) {
                // The copy's build of the kit's own crates was out of date all the same
                // (something touched them since): built again from the kit's files alone,
                // then the submission once more.
                Err(Stopped::KitNotBuilt(_)) => {
                    text.truncate(header);
                    match prepare_slot(slot, base, job.lesson.name, true)
                        .and_then(|()| kitcopy::sync(root, &files))
                    {
                        Ok(()) => run_checks(root, job, settings, &mut text),
                        Err(e) => Err(Stopped::Kit(format!(
                            "cannot prepare its copy of the kit: {e}"
                        ))),
                    }
                }
                other => other,
            }
        }
    };
    let (summary, not_run) = match outcome {
        Ok(summary) => (Some(summary), None),
        Err(Stopped::NotRun { status, why }) => (None, Some((status, why))),
        Err(Stopped::Kit(why) | Stopped::KitNotBuilt(why)) => return kit_error(job, why),
    };
    let report = RunReport::new(
        root,
        job.lesson,
        &job.exercise,
        &job.submission.name,
        summary.as_ref(),
        not_run.as_ref().map(|(status, why)| match status {
            RowStatus::Refused => reports::NotRun::Refused(why.clone()),
            _ => reports::NotRun::DoesNotCompile(why.clone()),
        }),
        started,
    );
    let mut report = match report {
        Ok(report) => report,
        Err(e) => return kit_error(job, format!("cannot read the lesson's weights: {e}")),
    };
    if job.log.is_none() {
        report.guidance = reports::Guidance::default();
    }
    relocate(&mut report, &job.exercise.file, &job.submitted);
    let max_score = report.points_possible;
    let row = match (&summary, not_run) {
        (Some(summary), _) => graded_row(job, summary, &report, max_score),
        (None, Some((status, why))) => Row {
            status,
            compile_error: status == RowStatus::DoesNotCompile,
            max_score,
            note: first_line(&why),
            content_hash: job.hash.clone(),
            guidance: guidance_counts(job, &report),
            guidance_unverified: unverified(job, &report),
            ..missing(&job.submission, job.lesson.name, String::new())
        },
        (None, None) => kit_error(job, "no result".into()),
    };
    let mut flags = Vec::new();
    if job.copies.is_some() {
        flags.push("identical to the reference answer (ignoring whitespace and comments)".into());
    }
    if let Some(why) = &row.guidance_unverified {
        flags.push(format!("guidance log unverified: {why}"));
    }
    if !job.also.is_empty() {
        flags.push(format!(
            "graded {}; not graded, and different: {}",
            job.file,
            job.also.join(", ")
        ));
    }
    let row = match row.status {
        RowStatus::KitError => row,
        _ => flags.into_iter().fold(row, |row, flag| Row {
            note: match row.note.as_str() {
                "" => flag,
                note => format!("{note}; {flag}"),
            },
            ..row
        }),
    };
    if let Err(e) = write_reports(settings, job, &report, &text) {
        return kit_error(job, format!("cannot write its reports: {e}"));
    }
    row
}

/// Why no check ran.
enum Stopped {
    /// The learner's code: it does not compile, or reaches the kit's answers.
    NotRun { status: RowStatus, why: String },
    /// The kit failed.
    Kit(String),
    /// The copy's build of the kit's own crates was out of date (`BuildError::KitNotBuilt`).
    /// The kit's failure; worth building the copy again and trying once more.
    KitNotBuilt(String),
}

/// Builds the job's harness in the copy at `root` and runs every check, writing what a
/// learner would read to `text`.
fn run_checks(
    root: &Path,
    job: &Job,
    settings: &Settings,
    text: &mut Vec<u8>,
) -> Result<Summary, Stopped> {
    let place = BuildPlace {
        // A submission's build reads nothing outside its copy of the kit and the toolchain.
        limits: CompileLimits {
            confine: true,
            ..settings.compile
        },
        ..BuildPlace::isolated(root)
    };
    // What the copy's last submission left of itself (its compiled crate, its library) is
    // gone before this one compiles: the compile may read the copy's target folder, and one
    // submission must not read another's work (`include_bytes!`).
    compile::forget_learners_builds(&place);
    let built = match compile::build_harness_at(&place, job.lesson.name, false, text) {
        Ok(built) => built,
        Err(BuildError::Compile { errors }) => {
            // Refused a file outside its own: the code reached for what the kit keeps from
            // it (as the dep-info check below finds of a build that read one).
            if let Some(first) = borrowed::refused_read(root, &errors) {
                let why = crate::sanitise::escape_string(format!(
                    "refused: {}; nothing was run",
                    first.what()
                ));
                let _ = writeln!(text, "{why}");
                return Err(Stopped::NotRun {
                    status: RowStatus::Refused,
                    why,
                });
            }
            return Err(Stopped::NotRun {
                status: RowStatus::DoesNotCompile,
                // The compiler quotes the learner's source; the toolchains the kit
                // supports already show most controls as symbols, but not all (C1).
                why: crate::sanitise::escape_string(compile::errors_text(&errors)),
            });
        }
        Err(e @ BuildError::KitNotBuilt { .. }) => return Err(Stopped::KitNotBuilt(e.to_string())),
        Err(other) => return Err(Stopped::Kit(other.to_string())),
    };
    let found = borrowed::inspect(root, built.practice_dep_info.as_deref())
        .map_err(|e| Stopped::Kit(format!("cannot check what was compiled: {e}")))?;
    if let Some(first) = found.first() {
        // The file it names is one the learner's code pointed the compiler at.
        let why =
            crate::sanitise::escape_string(format!("refused: {}; nothing was run", first.what()));
        let _ = writeln!(text, "{why}");
        return Err(Stopped::NotRun {
            status: RowStatus::Refused,
            why,
        });
    }
    let launcher = built.launcher().limits(settings.limits);
    let args = Arguments {
        format: Some(FormatSetting::Pretty),
        color: Some(ColorSetting::Never),
        ..Arguments::default()
    };
    let run_settings = RunSettings {
        unfinished_hint: format!(
            "Write its body in {} (lesson: exercises/{}/{}).",
            job.exercise.file.display(),
            job.lesson.name,
            job.exercise.lesson.display()
        ),
        all_in_full: true,
        ..RunSettings::new(job.submission.name.clone(), settings.timeout)
    };
    // Two reporters of the run's one stream: the text the learner reads, and the summary
    // the row is made of (what the Finished event says).
    let mut printer = crate::printers::Human::pretty(text);
    let mut finished: Option<Summary> = None;
    {
        let mut keep = OnFinished(|_: &Lesson, summary: &Summary| finished = Some(summary.clone()));
        suite::run(
            job.lesson,
            &launcher,
            &(&args).into(),
            &run_settings,
            &mut Tee(vec![&mut printer, &mut keep]),
        )
        .map_err(|e| Stopped::Kit(format!("could not run the checks: {e}")))?;
    }
    finished.ok_or_else(|| Stopped::Kit("the run ended without saying how it ended".into()))
}

/// The row of a submission whose checks ran.
fn graded_row(job: &Job, summary: &Summary, report: &RunReport, max_score: f64) -> Row {
    let (passed, failed, unfinished, bugs) = (
        summary.count(Status::Passed),
        summary.count(Status::Failed),
        summary.count(Status::Unfinished),
        summary.count(Status::KitBug),
    );
    let first_failure = summary
        .runs
        .iter()
        .find(|r| r.outcome.status() == Status::Failed);
    let (status, note) = if bugs > 0 {
        (
            RowStatus::KitError,
            format!("{bugs} check(s) failed inside the kit: not a grade; report it"),
        )
    } else if let Some(run) = first_failure {
        let kind = run
            .outcome
            .failure_kind()
            .map(|k| format!(" ({})", k.label()))
            .unwrap_or_default();
        (
            RowStatus::Failing,
            format!("first failure: {}{kind}", run.name),
        )
    } else if unfinished > 0 {
        // Where the first unfinished check stopped: `todo!()` at practice/src/lib.rs:37:5.
        let stopped = summary.runs.iter().find_map(|r| match &r.outcome {
            Outcome::Unfinished {
                location: Some(at), ..
            } => Some(format!("reached todo!() at {at}")),
            _ => None,
        });
        (RowStatus::Unfinished, stopped.unwrap_or_default())
    } else {
        (RowStatus::Passing, String::new())
    };
    let failed_checks = summary
        .runs
        .iter()
        .filter(|r| matches!(r.outcome.status(), Status::Failed | Status::KitBug))
        .map(|r| r.name.to_string())
        .collect();
    let first_message = first_failure
        .and_then(|run| run.outcome.message())
        .map(|m| crate::sanitise::escape_string(first_lines(m, 4)));
    let timeouts = summary
        .runs
        .iter()
        .filter(|r| r.outcome.failure_kind() == Some(grader_checks::FailureKind::Timeout))
        .count();
    Row {
        passed,
        failed: failed + bugs,
        unfinished,
        score: report.score(),
        max_score,
        guidance: guidance_counts(job, report),
        content_hash: job.hash.clone(),
        guidance_unverified: unverified(job, report),
        failed_checks,
        first_message,
        timeouts,
        ..Row::empty(&job.submission.name, job.lesson.name, status, note)
    }
}

/// Why a submitted log's counts cannot be trusted, when `log --check` finds a problem.
fn unverified(job: &Job, report: &RunReport) -> Option<String> {
    job.log.as_ref().and(report.guidance.unverified.clone())
}

/// The first `n` lines of `text`, with `…` when there were more.
fn first_lines(text: &str, n: usize) -> String {
    let mut lines = text.lines();
    let kept: Vec<&str> = lines.by_ref().take(n).collect();
    let mut out = kept.join("\n");
    if lines.next().is_some() {
        out.push_str("\n…");
    }
    out
}

/// The guidance counts of a submission that came with a log.
fn guidance_counts(job: &Job, report: &RunReport) -> Option<BTreeMap<String, usize>> {
    (job.log.is_some() && report.guidance.known).then(|| report.guidance.by_kind.clone())
}

/// The first line of `text`.
fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// Writes the job's reports in every format asked, and the text a learner would have read.
fn write_reports(
    settings: &Settings,
    job: &Job,
    report: &RunReport,
    text: &[u8],
) -> std::io::Result<()> {
    let dir = submission_dir(settings, &job.submission.name);
    std::fs::create_dir_all(&dir)?;
    for format in &settings.formats {
        let path = report_path(settings, &job.submission.name, job.lesson.name, *format);
        std::fs::write(path, format.render(report))?;
    }
    // The checks' part is escaped already; the compiler's messages quote the learner's
    // source, and rustc leaves C1 controls raw (the text has no colour to keep).
    let text = crate::sanitise::escape_string(String::from_utf8_lossy(text).into_owned());
    std::fs::write(dir.join(format!("{}.txt", job.lesson.name)), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_can_change_a_grade_is_in_the_kits_digest() {
        for path in [
            "Cargo.toml",
            "Cargo.lock",
            "grader/Cargo.toml",
            "grader/checks/src/lessons/build3/checks.rs",
            "grader/runner/src/build3/recording.rs",
            "grader/src/reports/junit.rs",
            "exercises/build3/grading.toml",
            "reference/src/retry.rs",
        ] {
            assert!(affects_grades(Path::new(path)), "{path}");
        }
        for path in [
            "README.md",
            "exercises/build3/lesson.md",
            "grader/tests/grade.rs",
            "grader/benches/speed.sh",
            ".ci/run",
            "docs/instructors.md",
        ] {
            assert!(!affects_grades(Path::new(path)), "{path}");
        }
    }
}
