//! `dev new NAME`: a new lesson's whole slice, from the templates in `grader/src/scaffold/`:
//! the exercise folder (info.toml, lesson, help levels, points, self-review, stub, worked
//! trace), the practice file, the answer, the kit-types module, the runner's module and the
//! checks' module of the lesson with one example check, its scenario format and a test with
//! a correct and a wrong implementation. The example lesson is deliberately trivial (double
//! a number): it runs as it is, and an author replaces it piece by piece, with `dev check`
//! saying what is still wrong.

use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a lesson could not be scaffolded.
#[derive(Debug, Error)]
pub(crate) enum ScaffoldError {
    /// The name cannot be a lesson's.
    #[error("{0}")]
    Name(String),
    /// A file the lesson would need is there already.
    #[error("{} exists already: a lesson called {name:?} has begun", .path.display())]
    Exists {
        /// The lesson.
        name: String,
        /// The file.
        path: PathBuf,
    },
    /// A file could not be written.
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What a new lesson is called.
#[derive(Debug, Clone)]
pub(crate) struct NewLesson {
    /// Its name: lower-case letters and digits.
    pub(crate) name: String,
    /// Its title.
    pub(crate) title: String,
    /// The function the learner writes.
    pub(crate) function: String,
}

const TEMPLATES: &[(&str, &str)] = &[
    (
        "exercises/{{name}}/info.toml",
        include_str!("scaffold/info.toml.tmpl"),
    ),
    (
        "exercises/{{name}}/lesson.md",
        include_str!("scaffold/lesson.md.tmpl"),
    ),
    (
        "exercises/{{name}}/help.toml",
        include_str!("scaffold/help.toml.tmpl"),
    ),
    (
        "exercises/{{name}}/grading.toml",
        include_str!("scaffold/grading.toml.tmpl"),
    ),
    (
        "exercises/{{name}}/self-review.md",
        include_str!("scaffold/self-review.md.tmpl"),
    ),
    (
        "exercises/{{name}}/stub.rs",
        include_str!("scaffold/stub.rs.tmpl"),
    ),
    (
        "exercises/{{name}}/scenarios/worked-trace.toml",
        include_str!("scaffold/worked-trace.toml.tmpl"),
    ),
    (
        "practice/src/{{name}}.rs",
        include_str!("scaffold/stub.rs.tmpl"),
    ),
    (
        "reference/src/{{name}}.rs",
        include_str!("scaffold/answer.rs.tmpl"),
    ),
    (
        "reference/src/types/{{name}}.rs",
        include_str!("scaffold/types.rs.tmpl"),
    ),
    (
        "grader/runner/src/{{name}}.rs",
        include_str!("scaffold/runner.rs.tmpl"),
    ),
    (
        "grader/checks/src/lessons/{{name}}/mod.rs",
        include_str!("scaffold/lesson_mod.rs.tmpl"),
    ),
    (
        "grader/checks/src/lessons/{{name}}/checks.rs",
        include_str!("scaffold/lesson_checks.rs.tmpl"),
    ),
    (
        "grader/checks/src/lessons/{{name}}/scenario.rs",
        include_str!("scaffold/lesson_scenario.rs.tmpl"),
    ),
    (
        "grader/checks/src/lessons/{{name}}/situations.rs",
        include_str!("scaffold/lesson_situations.rs.tmpl"),
    ),
    (
        "grader/checks/src/lessons/{{name}}/trials.rs",
        include_str!("scaffold/lesson_trials.rs.tmpl"),
    ),
];

impl NewLesson {
    fn fill(&self, template: &str) -> String {
        let mut chars = self.name.chars();
        let camel = chars
            .next()
            .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
            .unwrap_or_default();
        template
            .replace("{{name}}", &self.name)
            .replace("{{Name}}", &camel)
            .replace("{{title}}", &self.title)
            .replace("{{function}}", &self.function)
    }

    /// Every file of the slice: path relative to the kit, and content.
    pub(crate) fn files(&self) -> Vec<(PathBuf, String)> {
        TEMPLATES
            .iter()
            .map(|(path, text)| (PathBuf::from(self.fill(path)), self.fill(text)))
            .collect()
    }

    /// The lesson's line of `exercises/lessons.toml`.
    pub(crate) fn list_line(&self) -> String {
        format!(
            "    {{ name = \"{}\", graded = \"kit_types::{}::{}Fn\", arguments = 1 }},\n",
            self.name,
            self.name,
            self.fill("{{Name}}")
        )
    }
}

/// Whether `name` can be a lesson's: lower-case letters and digits, starting with a letter,
/// and no Rust keyword or name the kit's crates use already.
pub(crate) fn check_name(name: &str) -> Result<(), ScaffoldError> {
    if !crate::wiring::is_plain_name(name) {
        return Err(ScaffoldError::Name(format!(
            "{name:?} cannot be a lesson's name: use lower-case letters and digits, starting with a letter"
        )));
    }
    const TAKEN: &[&str] = &[
        "as", "fn", "mod", "use", "type", "self", "super", "crate", "match", "loop", "move", "ref",
        "impl", "trait", "where", "static", "const", "async", "await", "dyn", "box", "errors",
        "events", "gateway", "graded", "http", "policy", "retry", "fetch", "cases", "library",
        "limits", "panics", "remote", "runner", "sandbox", "secs", "wire", "lessons", "declared",
        "list", "all", "help", "note", "log", "reset", "scenario", "trace", "review", "watch",
        "grade", "bundle", "dev",
    ];
    if TAKEN.contains(&name) {
        return Err(ScaffoldError::Name(format!(
            "{name:?} is a name the kit uses already (a keyword, a module or a command): choose another"
        )));
    }
    Ok(())
}

/// Writes the slice of `lesson` into the kit at `root` and appends its line to the list;
/// refuses when any of its files exists. Returns the files written.
pub(crate) fn write(root: &Path, lesson: &NewLesson) -> Result<Vec<PathBuf>, ScaffoldError> {
    check_name(&lesson.name)?;
    let files = lesson.files();
    if let Some((path, _)) = files.iter().find(|(p, _)| root.join(p).exists()) {
        return Err(ScaffoldError::Exists {
            name: lesson.name.clone(),
            path: path.clone(),
        });
    }
    let write = |path: &Path, text: &str| {
        let full = root.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ScaffoldError::Write {
                path: path.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&full, text).map_err(|source| ScaffoldError::Write {
            path: path.to_path_buf(),
            source,
        })
    };
    let list = PathBuf::from(crate::wiring::LESSONS_FILE);
    let current =
        std::fs::read_to_string(root.join(&list)).map_err(|source| ScaffoldError::Write {
            path: list.clone(),
            source,
        })?;
    // The list ends with `]`: the new line goes before it (last in the course).
    let Some(end) = current.rfind(']') else {
        return Err(ScaffoldError::Name(format!(
            "{} has no list to add to",
            list.display()
        )));
    };
    let mut written = Vec::new();
    for (path, text) in &files {
        // Laid out as `cargo fmt` lays it out (as written, where rustfmt is missing).
        let text = match path.extension().is_some_and(|e| e == "rs") {
            true => crate::wiring::rustfmt(text).unwrap_or_else(|_| text.clone()),
            false => text.clone(),
        };
        write(path, &text)?;
        written.push(path.clone());
    }
    let line_start = current[..end].rfind('\n').map_or(0, |i| i + 1);
    let updated = format!(
        "{}{}{}",
        &current[..line_start],
        lesson.list_line(),
        &current[line_start..]
    );
    write(&list, &updated)?;
    written.push(list);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_is_filled() {
        let lesson = NewLesson {
            name: "parse9".into(),
            title: "Parse it".into(),
            function: "parse_it".into(),
        };
        for (path, text) in lesson.files() {
            assert!(
                !text.contains("{{") && !path.to_string_lossy().contains("{{"),
                "{path:?}"
            );
        }
        assert!(lesson.list_line().contains("kit_types::parse9::Parse9Fn"));
        assert!(check_name("Parse").is_err() && check_name("retry").is_err());
    }
}
