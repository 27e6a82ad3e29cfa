//! A failure message, laid out the same way for every lesson: a one-line summary, then the
//! input, what the learner's code did, what the rule expects, and where they first part.
//!
//! ```text
//! request was called 4 times; the rule expects 3.
//!
//! input:
//!   policy:   method "GET", max_attempts 3, base_delay 0.25, max_delay 2.0
//!   request:  call 1 → transient server_error
//!             every later call → the same
//! your code did:
//!   calls:    4
//!   …
//! the rule expects:
//!   calls:    3
//!   …
//! first difference: calls — 4, expected 3.
//! why: 4 calls under max_attempts = 3: the first call is attempt 1, so 3 calls in all.
//! ```
//!
//! The first line stands alone: the grader's one-line list of further failures shows it.
//! This module depends only on [`crate::view`].

use crate::view::{render_fields, Field};

/// One failure, in the shared layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Feedback {
    /// One line: what differs first.
    pub(crate) summary: String,
    /// What the check gave the code: settings and scripts, every field.
    pub(crate) input: Vec<Field>,
    /// What the learner's code did.
    pub(crate) did: Vec<Field>,
    /// What the rule expects, in the same fields.
    pub(crate) expected: Vec<Field>,
    /// The first field where they part, and how.
    pub(crate) difference: Option<String>,
    /// The rule behind it, or the likely cause when the check can tell.
    pub(crate) why: String,
}

impl Feedback {
    /// A failure with a summary and a reason; add the sections with the builder methods.
    pub(crate) fn new(summary: impl Into<String>, why: impl Into<String>) -> Self {
        Feedback {
            summary: summary.into(),
            input: Vec::new(),
            did: Vec::new(),
            expected: Vec::new(),
            difference: None,
            why: why.into(),
        }
    }

    /// Sets the input section.
    pub(crate) fn input(mut self, fields: Vec<Field>) -> Self {
        self.input = fields;
        self
    }

    /// Sets what the code did.
    pub(crate) fn did(mut self, fields: Vec<Field>) -> Self {
        self.did = fields;
        self
    }

    /// Sets what the rule expects.
    pub(crate) fn expected(mut self, fields: Vec<Field>) -> Self {
        self.expected = fields;
        self
    }

    /// Fills `difference` from the first field where `did` and `expected` disagree.
    pub(crate) fn first_difference(mut self) -> Self {
        self.difference = first_difference(&self.did, &self.expected);
        self
    }

    /// The message, as the grader prints it.
    pub(crate) fn render(&self) -> String {
        let mut out = vec![self.summary.clone()];
        for (title, fields) in [
            ("input:", &self.input),
            ("your code did:", &self.did),
            ("the rule expects:", &self.expected),
        ] {
            if fields.is_empty() {
                continue;
            }
            out.push(String::new());
            out.push(title.to_string());
            out.extend(render_fields(fields).into_iter().map(|l| format!("  {l}")));
        }
        out.push(String::new());
        if let Some(d) = &self.difference {
            out.push(format!("first difference: {d}"));
        }
        out.push(format!("why: {}", self.why));
        out.join("\n")
    }
}

thread_local! {
    /// The input of the learner's run that panicked last on this thread, noted by the check
    /// that ran it ([`note_panicked_input`]), for the panic's failure message.
    static PANICKED_INPUT: std::cell::RefCell<Option<Vec<Field>>> =
        const { std::cell::RefCell::new(None) };
}

/// Notes `fields` as the input of a run of the learner's code that just panicked: a panic
/// that escapes the check shows it ([`panicked_input`]). Called only when a run panicked, so
/// that the runs that did not cost nothing.
pub(crate) fn note_panicked_input(fields: Vec<Field>) {
    PANICKED_INPUT.with(|noted| *noted.borrow_mut() = Some(fields));
}

/// The input [`note_panicked_input`] noted last on this thread, rendered as a failure's
/// `input:` section (empty when none was noted); taking it forgets it.
pub(crate) fn panicked_input() -> String {
    let Some(fields) = PANICKED_INPUT.with(|noted| noted.borrow_mut().take()) else {
        return String::new();
    };
    let mut out = vec![String::new(), String::new(), "input:".to_string()];
    out.extend(render_fields(&fields).into_iter().map(|l| format!("  {l}")));
    out.join("\n")
}

impl From<Feedback> for String {
    fn from(f: Feedback) -> String {
        f.render()
    }
}

/// `name — yours, expected theirs.` for the first field that differs, comparing fields of
/// the same name.
pub(crate) fn first_difference(did: &[Field], expected: &[Field]) -> Option<String> {
    for want in expected {
        let Some(got) = did.iter().find(|f| f.name == want.name) else {
            continue;
        };
        if got.lines == want.lines {
            continue;
        }
        let line = |f: &Field| match f.lines.as_slice() {
            [one] => one.clone(),
            [] => "(none)".to_string(),
            many => format!("[{}]", many.join("; ")),
        };
        // For lists, name the first item that differs.
        if got.lines.len() > 1 || want.lines.len() > 1 {
            let at = got
                .lines
                .iter()
                .zip(&want.lines)
                .position(|(a, b)| a != b)
                .unwrap_or(got.lines.len().min(want.lines.len()));
            let item = |f: &Field| f.lines.get(at).cloned().unwrap_or_else(|| "(none)".into());
            return Some(format!(
                "{} item {} — {}, expected {}.",
                want.name,
                at + 1,
                item(got),
                item(want)
            ));
        }
        return Some(format!(
            "{} — {}, expected {}.",
            want.name,
            line(got),
            line(want)
        ));
    }
    None
}

/// The verdict of a check made of several cases: every case must pass; the first failing
/// one is shown in full, and the others are counted (one mistake often fails many cases).
pub(crate) fn every_case(
    results: impl IntoIterator<Item = Result<(), String>>,
) -> Result<(), String> {
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    match failures.split_first() {
        None => Ok(()),
        Some((first, [])) => Err(first.clone()),
        Some((first, rest)) => Err(format!(
            "{first}\n\n({} of this check fail too; fix this one first.)",
            plural(rest.len() as u64, "more case")
        )),
    }
}

/// The line after which an exhaustive check's message holds the differing case as a ready
/// scenario file; the grader saves what follows it.
pub(crate) const CASE_MARKER: &str = "----- the case as a scenario file -----";

/// The case number of `text` when it is exactly the file an exhaustive check saves: its
/// first line reads `# Case N{check}` and `saved(N)`, the file the check writes for case N,
/// is `text` byte for byte. (Each lesson's `saved_case` hook.)
pub(crate) fn saved_case_number(
    text: &str,
    check: &str,
    saved: impl FnOnce(usize) -> Option<String>,
) -> Option<usize> {
    let first = text.lines().next()?.strip_prefix("# Case ")?;
    let number: usize = first.split_once(check)?.0.parse().ok()?;
    (saved(number)? == text).then_some(number)
}

/// The scenario file in a failure message, if it has one.
pub fn case_file(message: &str) -> Option<&str> {
    let at = message.find(CASE_MARKER)?;
    Some(message[at + CASE_MARKER.len()..].trim_start_matches('\n'))
}

pub use kit_runner::secs::{fmt_secs, same_secs, same_waits};

/// `n thing` or `n things`.
pub(crate) fn plural(n: u64, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// The command a saved case's file names for replaying it: beside the reference in the
/// whole kit, alone in a copy without the answers.
pub(crate) const REPLAY_COMMAND: &str = if crate::ANSWERS {
    "cargo run -p grader -- scenario FILE --compare"
} else {
    "cargo run -p grader -- scenario FILE"
};

/// What a failure of an exhaustive check says about replaying the case it saved: beside the
/// reference (`--compare`) in the whole kit; the learner's side only in a copy without the
/// answers, where the message's run of the reference is the one there is.
pub(crate) const REPLAY: &str = if crate::ANSWERS {
    "Replay the case with `cargo run -p grader -- scenario FILE --compare`: the grader saves \
     it for you (see the end of the run). `--compare` runs the reference beside your code; for \
     this file as saved that shows only what this message shows, so it is not recorded \
     (changed, or any other file, it is recorded as guidance)."
} else {
    "Replay your side of the case with `cargo run -p grader -- scenario FILE`: the grader \
     saves it for you (see the end of the run). The reference's run is the one shown here: \
     this copy of the kit holds no answers to run it again."
};

#[cfg(test)]
mod doc_examples {
    /// What the item's documentation once showed as an example.
    #[test]
    fn first_difference_names_the_first_field() {
        use crate::feedback::first_difference;
        use crate::view::Field;
        let did = [Field::line("calls", "4"), Field::line("waits", "[]")];
        let want = [Field::line("calls", "3"), Field::line("waits", "[]")];
        assert_eq!(
            first_difference(&did, &want).unwrap(),
            "calls — 4, expected 3."
        );
    }

    /// What the item's documentation once showed as an example.
    #[test]
    fn every_case_gives_the_first_failure() {
        use crate::feedback::every_case;
        assert_eq!(every_case([Ok(()), Ok(())]), Ok(()));
        let e = every_case([Ok(()), Err("first".to_string()), Err("second".to_string())]);
        assert_eq!(
            e,
            Err("first\n\n(1 more case of this check fail too; fix this one first.)".into())
        );
    }

    /// What the item's documentation once showed as an example.
    #[test]
    fn saved_case_number_reads_only_the_exact_file() {
        use crate::feedback::saved_case_number;
        let saved = |n: usize| Some(format!("# Case {n} of the check: replay it\n[x]\n"));
        assert_eq!(
            saved_case_number(
                "# Case 7 of the check: replay it\n[x]\n",
                " of the check:",
                saved
            ),
            Some(7)
        );
        assert_eq!(
            saved_case_number(
                "# Case 7 of the check: replay it\n[y]\n",
                " of the check:",
                saved
            ),
            None
        );
    }

    /// What the item's documentation once showed as an example.
    #[test]
    fn case_file_is_cut_from_the_message() {
        use crate::feedback::{case_file, CASE_MARKER};
        let message = format!("they differ\n\n{CASE_MARKER}\n[[outcome]]\ndata = 1\n");
        assert_eq!(case_file(&message), Some("[[outcome]]\ndata = 1\n"));
        assert_eq!(case_file("no case"), None);
    }

    /// What the item's documentation once showed as an example.
    #[test]
    fn plural_counts() {
        assert_eq!(crate::feedback::plural(1, "call"), "1 call");
        assert_eq!(crate::feedback::plural(3, "call"), "3 calls");
    }
}
