//! `review LESSON`: the checklist of a lesson's last steps, not a grade.
//!
//! It runs the learner's own scenario files (the folder `[review]` of the lesson's
//! `info.toml` names) on their code, the way `scenario FILE` does and through the same
//! sandboxed runner; says which of the lesson's situations each file covers and which none
//! covers; says which self-review questions have no answer yet; and ends with one line: what
//! is missing, or that the checklist is complete, and the next command. It exits 0 either
//! way. It shows nothing of the reference, so it records no guidance.

use super::output::say;
use super::scenario::{build_learner, load, run_on_learner};
use super::{kit_root, load_exercise, resolve_lesson, CommandError, CommandResult};
use crate::lesson_info::{Review, SituationInfo};
use crate::sanitise::escape_controls;
use crate::{Lesson, LessonInfo};
use clap::Args;
use colored::Colorize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `review`'s arguments.
#[derive(Args)]
pub(crate) struct ReviewArgs {
    /// The lesson whose checklist to show, e.g. build3.
    #[arg(value_name = "LESSON")]
    lesson: String,
    /// Seconds your code may run on one scenario file before it is stopped as "did not
    /// finish".
    #[arg(long, value_name = "SECS", default_value_t = 3.0, value_parser = super::run::parse_timeout)]
    timeout: f64,
}

/// What one of the learner's files came to.
struct FileResult {
    /// Its path, relative to the kit, as shown.
    shown: String,
    /// The ids of the situations it covers (none when it could not be read).
    covers: Vec<&'static str>,
    /// It could not be used: it does not parse, or it is another lesson's.
    broken: bool,
}

/// What the checklist found missing, in the order the last line says it.
#[derive(Default)]
struct Missing {
    /// The scenario folder has no file.
    no_files: bool,
    /// Files that could not be used.
    broken: usize,
    /// The learner's code did not build, so no file ran.
    not_built: bool,
    /// The numbers (1-based, in the lesson's order) of the situations no file covers.
    situations: Vec<usize>,
    /// The self-review file is not handed out yet.
    review_not_yet: bool,
    /// The self-review questions with no answer.
    unanswered: Vec<u32>,
}

/// Shows the checklist of `args.lesson`; exit status 0 whatever it finds missing.
pub(crate) fn review(root: Option<PathBuf>, args: ReviewArgs) -> CommandResult {
    let lesson = resolve_lesson(&args.lesson).map_err(|f| match f.hint {
        Some(_) => f,
        None => f.hint("`cargo run -p grader -- list` shows every lesson"),
    })?;
    let root = kit_root(root)?;
    let exercise = load_exercise(&root, lesson)?;
    let restore = || {
        format!(
            "restore the lesson's folder from git: `git checkout -- exercises/{}`",
            lesson.name
        )
    };
    let review = Review::load(&root, lesson.name)
        .map_err(|e| CommandError::new(e.to_string()).hint(restore()))?
        .ok_or_else(|| {
            CommandError::new(format!(
                "KIT BUG: exercises/{}/info.toml has no [review] table",
                lesson.name
            ))
            .hint(restore())
        })?;
    say!(
        "{} — {}: a checklist of the lesson's last steps, not a grade.\n",
        format!("review {}", lesson.name).bold(),
        lesson.title
    );
    let mut missing = Missing::default();
    let files = scenarios(&root, lesson, &review, args.timeout, &mut missing);
    say!();
    situations(lesson, &review, &files, &mut missing);
    say!();
    self_review(&root, lesson, &exercise, &mut missing);
    say!();
    say!("{}", last_line(lesson, &review, &missing));
    Ok(ExitCode::SUCCESS)
}

/// Runs each scenario file of the learner's folder, in name order, and shows how it ended
/// and what it covers.
fn scenarios(
    root: &Path,
    lesson: &'static Lesson,
    review: &Review,
    timeout: f64,
    missing: &mut Missing,
) -> Vec<FileResult> {
    let folder = review.scenarios.display();
    let dir = root.join(&review.scenarios);
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "toml"))
            .collect(),
        Err(_) => Vec::new(),
    };
    paths.sort();
    say!("{} ({folder}/)", "Your scenarios".bold());
    if paths.is_empty() {
        let state = if dir.is_dir() {
            format!("{folder}/ has no .toml file yet")
        } else {
            format!("there is no folder {folder}/ yet")
        };
        say!(
            "  {state}: put your scenario files there, one situation or more each (the \
             examples are in exercises/{}/scenarios/).",
            lesson.name
        );
        missing.no_files = true;
        return Vec::new();
    }
    say!(
        "  Each runs on your code as `cargo run -p grader -- scenario FILE` runs it (that \
         command shows every step)."
    );
    // One build for every file; a file that does not parse runs nothing.
    let mut built = None;
    let mut results = Vec::new();
    for path in paths {
        let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        let shown = escape_controls(&relative.display().to_string()).into_owned();
        let mut result = FileResult {
            shown: shown.clone(),
            covers: Vec::new(),
            broken: true,
        };
        let loaded = match load(&path) {
            Ok(loaded) => loaded,
            Err(mut e) => {
                e.path = relative;
                say!("  {} {}", "✗".red(), escape_controls(&e.to_string()));
                let unnamed = std::fs::read_to_string(&path).is_ok_and(|text| {
                    matches!(
                        grader_checks::scenario::exercise_key(&path, &text),
                        Ok(None)
                    )
                });
                if unnamed && lesson.name != grader_checks::lessons::build3::LESSON.name {
                    say!(
                        "      it has no `exercise = \"{}\"` line, so it reads as a build3 \
                         scenario: add that line at its top; it did not run",
                        lesson.name
                    );
                } else {
                    say!(
                        "      fix that line (a {} scenario has {}); it did not run",
                        lesson.name,
                        lesson.scenario_shape
                    );
                }
                missing.broken += 1;
                results.push(result);
                continue;
            }
        };
        if loaded.lesson.name != lesson.name {
            say!(
                "  {} {shown}: {}; it did not run",
                "✗".red(),
                misplaced(root, lesson, loaded.lesson, loaded.names_exercise)
            );
            missing.broken += 1;
            results.push(result);
            continue;
        }
        result.broken = false;
        result.covers = loaded.situations;
        let built = built.get_or_insert_with(|| build_learner(root, lesson));
        let ended = match built {
            Ok(built) => match run_on_learner(built, lesson, &path, timeout) {
                Ok((run, _)) => run.ending,
                Err(message) => message.lines().next().unwrap_or_default().to_string(),
            },
            Err(failure) => {
                missing.not_built = true;
                format!("not run: {}", failure.message)
            }
        };
        say!("  {shown}: {}", brief(&escape_controls(&ended)));
        let covers = match covered_words(review, &result.covers) {
            words if words.is_empty() => "covers none of the lesson's situations".to_string(),
            words => format!("covers {}", words.join("; ")),
        };
        say!("      {covers}");
        results.push(result);
    }
    results
}

/// Why a file of `lesson`'s folder is another lesson's (`theirs`), and what to do.
fn misplaced(root: &Path, lesson: &Lesson, theirs: &Lesson, names_exercise: bool) -> String {
    let folder = Review::load(root, theirs.name)
        .ok()
        .flatten()
        .map_or(format!("exercises/{}/", theirs.name), |r| {
            format!("{}/", r.scenarios.display())
        });
    if names_exercise {
        format!(
            "it is a {} scenario (`exercise = \"{}\"`): move it to {folder}",
            theirs.name, theirs.name
        )
    } else {
        format!(
            "it has no `exercise = \"{}\"` line, so it reads as a {} scenario: add that line \
             at its top, or move it to {folder}",
            lesson.name, theirs.name
        )
    }
}

/// The most of a run's ending shown on its file's line; `scenario FILE` shows it all.
const BRIEF_CHARS: usize = 160;

/// `text` cut to [`BRIEF_CHARS`] characters, with `…` where it was cut.
fn brief(text: &str) -> String {
    match text.char_indices().nth(BRIEF_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// `N. words` of each situation in `ids`, N its place in the lesson's list.
fn covered_words(review: &Review, ids: &[&str]) -> Vec<String> {
    review
        .situations
        .iter()
        .enumerate()
        .filter(|(_, s)| ids.contains(&s.id.as_str()))
        .map(|(i, s)| format!("{}. {}", i + 1, s.words))
        .collect()
}

/// Each situation the lesson asks for, ticked with the files that cover it.
fn situations(lesson: &Lesson, review: &Review, files: &[FileResult], missing: &mut Missing) {
    say!(
        "{} (exercises/{}/lesson.md, \"Show it works on new inputs\")",
        "Situations the lesson asks for".bold(),
        lesson.name
    );
    let known = (lesson.situations)();
    for (i, SituationInfo { id, words }) in review.situations.iter().enumerate() {
        let by: Vec<&str> = files
            .iter()
            .filter(|f| f.covers.contains(&id.as_str()))
            .map(|f| file_name(&f.shown))
            .collect();
        let n = i + 1;
        if !known.contains(&id.as_str()) {
            say!("  [?] {n}. {words} — KIT BUG: the grader cannot recognise {id:?}");
        } else if by.is_empty() {
            say!("  {} {n}. {words} — no file yet", "[ ]".yellow());
        } else {
            say!("  {} {n}. {words} — {}", "[x]".green(), by.join(", "));
        }
        if by.is_empty() {
            missing.situations.push(n);
        }
    }
}

/// The last part of a path, for a list of files.
fn file_name(shown: &str) -> &str {
    shown.rsplit(['/', '\\']).next().unwrap_or(shown)
}

/// Whether each self-review question has an answer, or when the file appears.
fn self_review(root: &Path, lesson: &Lesson, exercise: &LessonInfo, missing: &mut Missing) {
    let file = exercise.review_file(root);
    let shown = file
        .strip_prefix(root)
        .unwrap_or(&file)
        .display()
        .to_string();
    say!("{} ({shown})", "Self-review".bold());
    let Some(questions) = &exercise.self_review else {
        say!("  this lesson has no self-review questions.");
        return;
    };
    if !file.exists() {
        say!(
            "  not handed out yet: it appears the first time every check of {} passes \
             (`cargo run -p grader -- {}`), with the questions to answer under each.",
            lesson.name,
            lesson.name
        );
        missing.review_not_yet = true;
        return;
    }
    let asked = std::fs::read_to_string(exercise.dir(root).join(questions))
        .map(|text| crate::self_review::questions(&text));
    let asked = match asked {
        Ok(asked) => asked,
        Err(e) => {
            say!(
                "  KIT BUG: cannot read exercises/{}/{}: {e}",
                lesson.name,
                questions.display()
            );
            return;
        }
    };
    let answers = match std::fs::read_to_string(&file) {
        Ok(answers) => answers,
        Err(e) => {
            say!("  cannot read {shown}: {e}");
            missing.unanswered = asked.iter().map(|q| q.number).collect();
            return;
        }
    };
    let unanswered = crate::self_review::unanswered(&asked, &answers);
    if unanswered.is_empty() {
        say!(
            "  {} every question ({}) has an answer.",
            "[x]".green(),
            asked.len()
        );
    } else {
        say!(
            "  {} no answer yet to question{} {} of {}: write yours under each (the question \
             alone is not an answer).",
            "[ ]".yellow(),
            if unanswered.len() == 1 { "" } else { "s" },
            numbers(&unanswered),
            asked.len()
        );
    }
    missing.unanswered = unanswered;
}

/// `1, 2 and 4`.
fn numbers<T: std::fmt::Display>(items: &[T]) -> String {
    let shown: Vec<String> = items.iter().map(ToString::to_string).collect();
    match shown.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// The checklist's last line: what is missing and the next command, or that it is complete
/// and the next lesson.
fn last_line(lesson: &Lesson, review: &Review, missing: &Missing) -> String {
    let folder = review.scenarios.display();
    let again = format!("`cargo run -p grader -- review {}`", lesson.name);
    let mut items = Vec::new();
    if missing.broken > 0 {
        items.push(format!(
            "{} scenario file{} to fix",
            missing.broken,
            if missing.broken == 1 { "" } else { "s" }
        ));
    }
    if missing.not_built {
        items.push("code that compiles, for your files to run on".to_string());
    }
    if !missing.situations.is_empty() {
        let one = missing.situations.len() == 1;
        items.push(format!(
            "a file for situation{} {}",
            if one { "" } else { "s" },
            numbers(&missing.situations)
        ));
    }
    if missing.review_not_yet {
        items.push("the self-review (every check passing first)".to_string());
    } else if !missing.unanswered.is_empty() {
        items.push(format!(
            "answers to self-review question{} {}",
            if missing.unanswered.len() == 1 {
                ""
            } else {
                "s"
            },
            numbers(&missing.unanswered)
        ));
    }
    if items.is_empty() {
        let next = crate::lessons::LESSONS
            .iter()
            .position(|g| g.name == lesson.name)
            .and_then(|i| crate::lessons::LESSONS.get(i + 1));
        let next = match next {
            Some(next) => format!("the next lesson, `cargo run -p grader -- {}`", next.name),
            None => "`cargo run -p grader -- all` reruns every lesson you started".to_string(),
        };
        return format!(
            "{} Next: {next}.",
            format!("The checklist of {} is complete.", lesson.name).green()
        );
    }
    let next = if missing.not_built {
        format!(
            "`cargo run -p grader -- {}` names the line to fix",
            lesson.name
        )
    } else if missing.no_files || missing.broken > 0 || !missing.situations.is_empty() {
        format!("write or fix the files in {folder}/, then {again}")
    } else if missing.review_not_yet {
        format!("`cargo run -p grader -- {}`", lesson.name)
    } else {
        format!("answer in practice/review/{}.md, then {again}", lesson.name)
    };
    format!(
        "{} {}. Next: {next}.",
        "Missing:".yellow().bold(),
        items.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_ending_is_cut_and_a_short_one_kept() {
        assert_eq!(brief("returned: 1"), "returned: 1");
        let long = "é".repeat(BRIEF_CHARS + 5);
        let cut = brief(&long);
        assert_eq!(cut.chars().count(), BRIEF_CHARS + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn numbers_read_as_a_list() {
        assert_eq!(numbers(&[5]), "5");
        assert_eq!(numbers(&[2, 4]), "2 and 4");
        assert_eq!(numbers(&[1, 2, 3]), "1, 2 and 3");
    }
}
