//! JUnit XML, as CI servers read it (Jenkins' format, as `quick-junit` and nextest write
//! it).
//!
//! - One `<testsuites name="retry-kit">` holding one `<testsuite>` for the lesson, whose
//!   `<properties>` record the kit's version, the lesson, whose code ran, the learner's file
//!   and the guidance.
//! - One `<testcase name="CHECK" classname="LESSON.MODULE">` per check, in the lesson's order.
//!   A failed check holds `<failure type="KIND">` (`mismatch`, `panic`, `crash`, `timeout`,
//!   `limit`, `leak`); an unfinished check `<failure type="unfinished">` (it is not a pass);
//!   a kit bug `<error type="kit_bug">`. The `message` attribute is the message's first line,
//!   the element's text the whole message. What the code printed is the `<system-out>`.
//! - When the learner's file did not compile, one testcase `compile` holds an
//!   `<error type="compile_error">` with the compiler's output; when it was refused, one
//!   testcase `refused` holds an `<error type="refused">` saying why.
//! - `failures` counts failed and unfinished checks, `errors` kit bugs (and a compile
//!   error); `tests` counts every testcase.
//!
//! Learner text is made safe for XML 1.0: ANSI escape sequences and characters XML 1.0
//! forbids are removed; `&`, `<`, `>`, `"` and `'` are escaped (no CDATA, so `]]>` comes out
//! as `]]&gt;`); attribute values keep newlines and tabs as character references; each text
//! is cut to [`TEXT_LIMIT`] bytes with a notice.

use super::json::{cut_bytes, kind_name, module_of, non_negative};
use super::{CheckReport, NotRun, RunReport};
use grader_checks::Status;
use std::fmt::Write;

/// The most bytes of one text (an element's content or an attribute), before escaping.
pub(crate) const TEXT_LIMIT: usize = 64 * 1024;

/// What ends a text that was cut.
const TEXT_NOTICE: &str = "\n[Truncated: this text was longer than 64 KiB.]";

/// The most bytes of a `message` attribute (the message's first line).
const MESSAGE_ATTR_LIMIT: usize = 1024;

/// What ends a `message` attribute that was cut.
const MESSAGE_ATTR_NOTICE: &str = " [truncated]";

/// Whether XML 1.0 allows `c` in a document (`Char` in §2.2).
fn xml_char(c: char) -> bool {
    matches!(c,
        '\u{9}' | '\u{A}' | '\u{D}'
        | '\u{20}'..='\u{D7FF}'
        | '\u{E000}'..='\u{FFFD}'
        | '\u{10000}'..='\u{10FFFF}')
}

/// `text` without ANSI escape sequences (`ESC [ … final`, `ESC ] … BEL/ST`, `ESC x`) and
/// without the characters XML 1.0 forbids.
fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1B}' {
            match chars.peek().copied() {
                // CSI: parameters and intermediates, then one final byte in @..~.
                Some('[') => {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7E}').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ESC \.
                Some(']') => {
                    chars.next();
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1B}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                // Any other two-character escape (`ESC c`, `ESC 7`, …).
                Some(c) if ('\u{30}'..='\u{7E}').contains(&c) => {
                    chars.next();
                }
                // A lone ESC: dropped, what follows is kept.
                _ => {}
            }
        } else if xml_char(c) {
            out.push(c);
        }
    }
    out
}

/// Escapes `text` (already clean) for an element's content. `\r` becomes a character
/// reference, so a parser's line-end normalization keeps it.
fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes `text` (already clean) for an attribute value in double quotes: as
/// [`escape_text`], with newlines and tabs as character references (a parser would turn
/// raw ones into spaces).
fn escape_attr(text: &str) -> String {
    escape_text(text)
        .replace('\n', "&#10;")
        .replace('\t', "&#9;")
}

/// Learner or kit text, safe as an element's content.
fn text(s: &str) -> String {
    escape_text(&cut_bytes(&clean(s), TEXT_LIMIT, TEXT_NOTICE))
}

/// Any text, safe as an attribute value.
fn attr(s: &str) -> String {
    escape_attr(&cut_bytes(&clean(s), TEXT_LIMIT, TEXT_NOTICE))
}

/// A message's first line, short, safe as an attribute value.
fn message_attr(s: &str) -> String {
    let first = clean(s);
    let first = first.lines().next().unwrap_or("").trim_end();
    escape_attr(&cut_bytes(first, MESSAGE_ATTR_LIMIT, MESSAGE_ATTR_NOTICE))
}

fn secs(x: f64) -> String {
    format!("{:.3}", non_negative(x))
}

/// The status element of a check that did not pass: element, `type`, `message`, text.
struct Verdict {
    element: &'static str,
    kind: &'static str,
    message: String,
    body: String,
}

fn verdict(check: &CheckReport) -> Option<Verdict> {
    let message = check.message.as_deref().unwrap_or("").trim_end();
    match check.status {
        Status::Passed => None,
        Status::Failed => {
            let kind = check.kind.map_or("failure", kind_name);
            Some(Verdict {
                element: "failure",
                kind,
                message: if message.is_empty() {
                    match check.kind {
                        Some(k) => format!("failed: {}", k.label()),
                        None => "failed".to_string(),
                    }
                } else {
                    message.to_string()
                },
                body: message.to_string(),
            })
        }
        Status::Unfinished => {
            let mut body = message.to_string();
            if let Some(at) = &check.location {
                if !body.is_empty() {
                    body.push('\n');
                }
                let _ = write!(body, "at {at}");
            }
            let what = if message.is_empty() {
                "the function still reaches todo!() or unimplemented!()"
            } else {
                message
            };
            Some(Verdict {
                element: "failure",
                kind: "unfinished",
                message: format!("unfinished: {what}"),
                body,
            })
        }
        Status::KitBug => Some(Verdict {
            element: "error",
            kind: "kit_bug",
            message: if message.is_empty() {
                "kit bug: the kit failed while running this check".to_string()
            } else {
                format!("kit bug: {message}")
            },
            body: message.to_string(),
        }),
    }
}

/// Writes one `<testcase>`, indented by 8 spaces.
fn testcase(
    out: &mut String,
    name: &str,
    classname: &str,
    time: f64,
    verdict: Option<Verdict>,
    system_out: &str,
) {
    let _ = write!(
        out,
        "        <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
        attr(name),
        attr(classname),
        secs(time)
    );
    let system_out = text(system_out);
    if verdict.is_none() && system_out.is_empty() {
        out.push_str("/>\n");
        return;
    }
    out.push_str(">\n");
    if let Some(v) = verdict {
        let _ = write!(
            out,
            "            <{} message=\"{}\" type=\"{}\"",
            v.element,
            message_attr(&v.message),
            attr(v.kind)
        );
        let body = text(&v.body);
        if body.is_empty() {
            out.push_str("/>\n");
        } else {
            let _ = writeln!(out, ">{body}</{}>", v.element);
        }
    }
    if !system_out.is_empty() {
        let _ = writeln!(out, "            <system-out>{system_out}</system-out>");
    }
    out.push_str("        </testcase>\n");
}

/// `report` as JUnit XML, ending with a newline.
pub(crate) fn render(report: &RunReport) -> String {
    let (tests, failures, errors) = match report.not_run {
        Some(_) => (1, 0, 1),
        None => (
            report.checks.len(),
            report.count(Status::Failed) + report.count(Status::Unfinished),
            report.count(Status::KitBug),
        ),
    };
    let time = secs(report.duration_secs);
    let lesson = attr(&report.lesson);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"retry-kit\" tests=\"{tests}\" failures=\"{failures}\" \
         errors=\"{errors}\" time=\"{time}\">"
    );
    let _ = write!(
        out,
        "    <testsuite name=\"{lesson}\" tests=\"{tests}\" failures=\"{failures}\" \
         errors=\"{errors}\" skipped=\"0\" time=\"{time}\""
    );
    if !report.started.is_empty() {
        let _ = write!(out, " timestamp=\"{}\"", attr(&report.started));
    }
    out.push_str(">\n");

    out.push_str("        <properties>\n");
    let sentence = report.guidance.sentence();
    let properties = [
        ("kit_version", Some(report.kit_version.as_str())),
        ("title", Some(report.title.as_str())),
        ("against", Some(report.against.as_str())),
        ("learner_file", report.learner_file.as_deref()),
        ("learner_file_hash", report.learner_file_hash.as_deref()),
        ("guidance", Some(sentence.as_str())),
    ];
    for (name, value) in properties {
        if let Some(value) = value {
            let _ = writeln!(
                out,
                "            <property name=\"{name}\" value=\"{}\"/>",
                attr(value)
            );
        }
    }
    out.push_str("        </properties>\n");

    match &report.not_run {
        Some(not_run) => {
            let (name, kind, message) = match not_run {
                NotRun::DoesNotCompile(_) => (
                    "compile",
                    "compile_error",
                    "the learner's code did not compile, so no check ran",
                ),
                NotRun::Refused(_) => (
                    "refused",
                    "refused",
                    "the learner's submission was refused, so no check ran",
                ),
            };
            let verdict = Verdict {
                element: "error",
                kind,
                message: message.to_string(),
                body: not_run.text().trim_end().to_string(),
            };
            testcase(
                &mut out,
                name,
                &report.lesson,
                report.duration_secs,
                Some(verdict),
                "",
            );
        }
        None => {
            for check in &report.checks {
                let module = module_of(&check.name);
                let classname = if module.is_empty() {
                    report.lesson.clone()
                } else {
                    format!("{}.{}", report.lesson, module.replace("::", "."))
                };
                testcase(
                    &mut out,
                    &check.name,
                    &classname,
                    check.duration_secs,
                    verdict(check),
                    &check.output,
                );
            }
        }
    }
    out.push_str("    </testsuite>\n</testsuites>\n");
    out
}
