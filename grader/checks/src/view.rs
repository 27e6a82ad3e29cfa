//! What code did, as people read it: named fields, runs side by side.
//!
//! A check's failure message and a scenario run both show what happened as [`Field`]s
//! (`calls`, `waits`, `events`…). This module depends on nothing else in the crate.

use serde::{Deserialize, Serialize};

/// One named part of a run: `calls`, `waits`, `events`, `breaker`…
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    /// The name, e.g. `waits`.
    pub name: String,
    /// Its value: one line, or one line per item.
    pub lines: Vec<String>,
    /// Shown as a list under its name even when it has one line.
    pub block: bool,
}

impl Field {
    /// A field shown on one line.
    pub(crate) fn line(name: &str, value: impl Into<String>) -> Self {
        Field {
            name: name.into(),
            lines: vec![value.into()],
            block: false,
        }
    }

    /// A field shown as a list, one item per line.
    pub(crate) fn block(name: &str, lines: Vec<String>) -> Self {
        Field {
            name: name.into(),
            lines,
            block: true,
        }
    }
}

/// One run of a scenario, rendered for people. Floats are text, so NaN and infinity survive
/// the trip from the harness process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioRun {
    /// What the run did, field by field.
    pub fields: Vec<Field>,
    /// `returned: …`, `refused: …`, `ended: …`, `panicked: …`, `unfinished: …` or `error: …`.
    pub ending: String,
    /// The function returned normally (a value or a refusal).
    pub finished: bool,
}

impl ScenarioRun {
    /// A run that ended before anything could be recorded.
    pub(crate) fn stopped(ending: String) -> Self {
        ScenarioRun {
            fields: Vec::new(),
            ending,
            finished: false,
        }
    }

    /// Whether the function returned (a value or a refusal), rather than panicking, reaching
    /// `todo!()` or running out of script.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The run as printed by `grader scenario`: one fact per line, lists one item per line.
    pub fn render(&self) -> Vec<String> {
        let mut lines = render_fields(&self.fields);
        lines.push(self.ending.clone());
        lines
    }
}

/// Fields as lines: `name:   value` for one-line fields (values aligned), and `name:` then
/// one indented line per item for lists.
pub(crate) fn render_fields(fields: &[Field]) -> Vec<String> {
    let mut lines = Vec::new();
    // Values of one-line fields start in one column, after the longest name.
    let width = fields
        .iter()
        .filter(|f| !f.block)
        .map(|f| f.name.chars().count() + 2)
        .max()
        .unwrap_or(0)
        .max(9);
    for field in fields {
        match (field.block, field.lines.as_slice()) {
            (false, [one]) => lines.push(format!("{:<width$}{one}", format!("{}:", field.name))),
            (_, []) => lines.extend([format!("{}:", field.name), "  (none)".into()]),
            (_, items) => {
                lines.push(format!("{}:", field.name));
                lines.extend(items.iter().map(|l| format!("  {l}")));
            }
        }
    }
    lines
}

/// Two runs field by field: a field both runs agree on is shown once; a field where they
/// differ is marked `≠` and shows each run's value, one under the other.
pub fn side_by_side(left: (&str, &ScenarioRun), right: (&str, &ScenarioRun)) -> String {
    let (a, b) = (left.1, right.1);
    let width = left.0.len().max(right.0.len()) + 1;
    let mut out = String::new();
    let mut names: Vec<&str> = a.fields.iter().map(|f| f.name.as_str()).collect();
    for f in &b.fields {
        if !names.contains(&f.name.as_str()) {
            names.push(&f.name);
        }
    }
    let lines_of = |run: &ScenarioRun, name: &str| -> (Vec<String>, bool) {
        run.fields.iter().find(|f| f.name == name).map_or(
            (vec!["(none: the run ended before this)".into()], false),
            |f| (f.lines.clone(), f.block),
        )
    };
    let mut fields: Vec<(String, Vec<String>, Vec<String>, bool)> = names
        .iter()
        .map(|name| {
            let (x, block) = lines_of(a, name);
            let (y, _) = lines_of(b, name);
            (name.to_string(), x, y, block)
        })
        .collect();
    fields.push((
        "result".into(),
        vec![a.ending.clone()],
        vec![b.ending.clone()],
        false,
    ));
    for (name, x, y, block) in fields {
        if x == y {
            match x.as_slice() {
                [single] if !block => out.push_str(&format!("  {name}: {single} (same)\n")),
                _ => {
                    out.push_str(&format!("  {name} (same):\n"));
                    x.iter().for_each(|l| out.push_str(&format!("      {l}\n")));
                }
            }
            continue;
        }
        out.push_str(&format!("≠ {name}\n"));
        for (label, lines) in [(left.0, &x), (right.0, &y)] {
            let label = format!("{label}:");
            match lines.as_slice() {
                [one] => out.push_str(&format!("    {label:width$} {one}\n")),
                [] => out.push_str(&format!("    {label:width$} (none)\n")),
                many => {
                    out.push_str(&format!("    {label}\n"));
                    many.iter()
                        .for_each(|l| out.push_str(&format!("      {l}\n")));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod doc_examples {
    /// What the item's documentation once showed as an example.
    #[test]
    fn side_by_side_lines_up_both_runs() {
        use crate::view::{side_by_side, Field, ScenarioRun};
        let run = |calls: u32| ScenarioRun {
            fields: vec![
                Field::line("calls", calls.to_string()),
                Field::line("waits", "[]"),
            ],
            ending: "returned: 1".into(),
            finished: true,
        };
        let text = side_by_side(("yours", &run(2)), ("reference", &run(1)));
        assert!(text.contains("≠ calls\n    yours:     2\n    reference: 1\n"));
        assert!(text.contains("  waits: [] (same)"));
    }
}
