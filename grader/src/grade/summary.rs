//! The class at a glance, after `grade`: `summary.md` for a terminal and `summary.html` for
//! a browser, with the same tables. Per lesson: the grade distribution, each check's failure
//! rate, the most common first failures with a message that shows one, and guidance use;
//! then the similarity pairs and the submissions that need the instructor's attention.
//!
//! The HTML page is self-contained: its style is inline, its charts are inline SVG, it has
//! no script, and its Content-Security-Policy forbids loading anything, so it opens offline
//! and a name or message from a learner can neither run nor fetch anything. Every text that
//! a learner chose (names, messages) is escaped for the format it goes into.

use super::exports::Lesson;
#[cfg(test)]
use super::gradebook::Student;
use super::gradebook::{points, Gradebook, Row, RowStatus};
use super::similarity::Pair;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The grade bands of the distribution: a row's score as a share of its lesson's points.
const BANDS: [&str; 6] = ["0%", "1–49%", "50–79%", "80–89%", "90–99%", "100%"];

/// Why a file the similarity could not read needs a look: it is in no pair.
const UNREAD: &str = "its file could not be read as Rust tokens, so it is in no similarity pair: \
                      look at it yourself";

/// The most similarity pairs the summary lists (similarity.csv has them all).
pub(crate) const PAIRS_SHOWN: usize = 15;

/// The most common first failures listed per lesson.
const FIRST_FAILURES_SHOWN: usize = 8;

/// A lesson's figures, computed once for both formats.
struct LessonFigures<'a> {
    lesson: &'a Lesson,
    rows: Vec<&'a Row>,
    /// Rows whose checks ran (passing, failing, unfinished).
    ran: usize,
    by_status: BTreeMap<&'static str, usize>,
    bands: [usize; 6],
    /// Each check, in the lesson's order, with how many rows failed it.
    failures: Vec<(String, usize)>,
    /// First failed check → (rows, one row's first message).
    first: Vec<(String, usize, String)>,
    /// Guidance kind → (rows that used it, uses).
    guidance: BTreeMap<String, (usize, usize)>,
    unverified: usize,
    without_log: usize,
}

fn band(row: &Row) -> usize {
    if row.max_score <= 0.0 {
        return 0;
    }
    let share = row.score / row.max_score;
    match share {
        s if s >= 1.0 - 1e-9 => 5,
        s if s >= 0.9 => 4,
        s if s >= 0.8 => 3,
        s if s >= 0.5 => 2,
        s if s > 0.0 => 1,
        _ => 0,
    }
}

fn figures<'a>(book: &'a Gradebook, lesson: &'a Lesson, checks: &[&str]) -> LessonFigures<'a> {
    let rows: Vec<&Row> = book
        .rows
        .iter()
        .filter(|r| r.lesson == lesson.name)
        .collect();
    let ran_rows: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| {
            matches!(
                r.status,
                RowStatus::Passing | RowStatus::Failing | RowStatus::Unfinished
            )
        })
        .collect();
    let mut by_status = BTreeMap::new();
    let mut bands = [0; 6];
    for row in &rows {
        *by_status.entry(row.status.label()).or_insert(0) += 1;
        if row.status != RowStatus::KitError {
            bands[band(row)] += 1;
        }
    }
    let mut failures: Vec<(String, usize)> = checks
        .iter()
        .map(|c| {
            let n = ran_rows
                .iter()
                .filter(|r| r.failed_checks.iter().any(|f| f == c))
                .count();
            (c.to_string(), n)
        })
        .collect();
    // Most failed first: what to go over again in class. Ties keep the lesson's order.
    failures.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let mut first: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for row in &ran_rows {
        if let Some(check) = row.failed_checks.first() {
            let entry = first
                .entry(check.clone())
                .or_insert_with(|| (0, row.first_message.clone().unwrap_or_default()));
            entry.0 += 1;
        }
    }
    let mut first: Vec<(String, usize, String)> =
        first.into_iter().map(|(c, (n, m))| (c, n, m)).collect();
    first.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    first.truncate(FIRST_FAILURES_SHOWN);
    let mut guidance: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let (mut unverified, mut without_log) = (0, 0);
    for row in &rows {
        if row.guidance_unverified.is_some() {
            unverified += 1;
            continue;
        }
        match &row.guidance {
            Some(kinds) => {
                for (kind, n) in kinds.iter().filter(|(_, n)| **n > 0) {
                    let entry = guidance.entry(kind.clone()).or_insert((0, 0));
                    entry.0 += 1;
                    entry.1 += n;
                }
            }
            None if row.status != RowStatus::Missing => without_log += 1,
            None => {}
        }
    }
    LessonFigures {
        lesson,
        ran: ran_rows.len(),
        rows,
        by_status,
        bands,
        failures,
        first,
        guidance,
        unverified,
        without_log,
    }
}

/// The rows that need a look before grades go out: why, per row.
fn attention(book: &Gradebook) -> Vec<(&Row, String)> {
    let roster = book.rows.iter().any(|r| r.student.is_some());
    book.rows
        .iter()
        .filter_map(|r| {
            let why = match r.status {
                // A student whose folder is named otherwise than the roster says shows up
                // twice: as `missing`, worth 0 in the LMS files, and as a row without an id.
                RowStatus::MissingFile => format!("no lesson file graded: {}", r.note),
                RowStatus::Missing => {
                    "on the roster, handed in nothing: 0 in the LMS files (a folder named \
                     otherwise?)"
                        .to_string()
                }
                _ if roster && r.student.is_none() => {
                    "not on the roster: in no LMS file (a folder named otherwise than the \
                     roster says?)"
                        .to_string()
                }
                RowStatus::KitError => "kit-error: not a grade; regrade it".to_string(),
                RowStatus::Refused => format!("refused: {}", r.note),
                _ if r.timeouts > 0 => format!(
                    "{} check(s) stopped at their time limit (code that never returns?)",
                    r.timeouts
                ),
                _ if r.guidance_unverified.is_some() => format!(
                    "guidance log unverified: {}",
                    r.guidance_unverified.as_deref().unwrap_or_default()
                ),
                _ => return None,
            };
            Some((r, why))
        })
        .collect()
}

fn percent(n: usize, of: usize) -> String {
    if of == 0 {
        "–".to_string()
    } else {
        format!("{:.0}%", 100.0 * n as f64 / of as f64)
    }
}

/// A cell of a Markdown table: one line, no `|` to break the table, no HTML a viewer runs.
/// A learner's text (a name, a message) in a Markdown table cell: a code span, in which no
/// Markdown or HTML is read (an image to fetch, a link, a bold "FAKE"), on one line.
fn code(text: &str) -> String {
    let inner = md(text);
    if inner.is_empty() {
        String::new()
    } else {
        format!("`{inner}`")
    }
}

/// The kit's own text in a Markdown table cell: one line, no `|` to break the table (a `¦` in
/// its place), no HTML.
fn md(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            // Not `\|`: a learner's own backslash before it (`\\|`) would leave the pipe
            // raw to some renderers, and the table's cells would shift.
            '|' => out.push('¦'),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '`' => out.push('\''),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// `text` safe in HTML text and attribute values.
fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' => {}
            c => out.push(c),
        }
    }
    out
}

/// A cell of one of the tables both summaries show, by what it holds: each format
/// renders it as that kind of text is rendered there.
enum Cell {
    /// The kit's own text (a lesson, a kind, a note of the kit's).
    Kit(String),
    /// A learner's text (a name, a reason that quotes their note): a code span in Markdown.
    Learner(String),
    /// A check's name: code in the browser.
    Check(String),
    /// A failure message: its first line as a code span in Markdown, preformatted whole in
    /// the browser.
    Message(String),
    /// A count, as it is.
    Count(usize),
    /// A figure from 0 to 1, two decimals, right-aligned in the browser.
    Figure(f64),
    /// A pair's regions: each kept on one line in the browser.
    Regions(Vec<(usize, usize, usize, usize)>),
}

impl Cell {
    fn markdown(&self) -> String {
        match self {
            Cell::Kit(text) | Cell::Check(text) => md(text),
            Cell::Learner(text) | Cell::Message(text) => code(text),
            Cell::Count(n) => n.to_string(),
            Cell::Figure(x) => format!("{x:.2}"),
            Cell::Regions(regions) => md(&super::similarity::regions_text(regions)),
        }
    }

    fn html(&self) -> String {
        match self {
            Cell::Kit(text) | Cell::Learner(text) => format!("<td>{}</td>", html(text)),
            Cell::Check(text) => format!("<td><code>{}</code></td>", html(text)),
            Cell::Message(text) => format!("<td><pre>{}</pre></td>", html(text)),
            Cell::Count(n) => format!("<td>{n}</td>"),
            Cell::Figure(x) => format!("<td class=\"num\">{x:.2}</td>"),
            Cell::Regions(regions) => format!(
                "<td><code>{}</code></td>",
                regions
                    .iter()
                    .map(|(a, b, c, d)| format!("<span class=\"region\">{a}-{b}~{c}-{d}</span>"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        }
    }
}

/// One of the tables both summaries show: built once, rendered by each format.
struct Table {
    head: &'static [&'static str],
    rows: Vec<Vec<Cell>>,
    /// The row shown when there is none (the browser spans its first cell across).
    empty: Vec<Cell>,
}

impl Table {
    /// Its header, its separator and its rows (or its empty row, whose blank cells are
    /// written `| |`), a line each.
    fn markdown(&self) -> String {
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        let mut out = line(&self.head.iter().map(|h| h.to_string()).collect::<Vec<_>>());
        out.push_str(&format!("|{}\n", "---|".repeat(self.head.len())));
        if self.rows.is_empty() {
            out.push('|');
            for cell in self.empty.iter().map(Cell::markdown) {
                if cell.is_empty() {
                    out.push_str(" |");
                } else {
                    let _ = write!(out, " {cell} |");
                }
            }
            out.push('\n');
        }
        for row in &self.rows {
            out.push_str(&line(&row.iter().map(Cell::markdown).collect::<Vec<_>>()));
        }
        out
    }

    /// `<table>` to `</table>`, a line each.
    fn html(&self) -> String {
        let mut out = String::from("<table>\n<tr>");
        for h in self.head {
            let _ = write!(out, "<th>{h}</th>");
        }
        out.push_str("</tr>\n");
        if self.rows.is_empty() {
            let first = self.empty.first().map(Cell::html).unwrap_or_default();
            let spanned =
                first.replacen("<td>", &format!("<td colspan=\"{}\">", self.head.len()), 1);
            let _ = writeln!(out, "<tr>{spanned}</tr>");
        }
        for row in &self.rows {
            let cells: String = row.iter().map(Cell::html).collect();
            let _ = writeln!(out, "<tr>{cells}</tr>");
        }
        out.push_str("</table>\n");
        out
    }
}

impl LessonFigures<'_> {
    fn first_failures(&self) -> Table {
        Table {
            head: &["first failed check", "rows", "one message"],
            rows: self
                .first
                .iter()
                .map(|(check, n, message)| {
                    vec![
                        Cell::Check(check.clone()),
                        Cell::Count(*n),
                        Cell::Message(message.clone()),
                    ]
                })
                .collect(),
            empty: vec![
                Cell::Kit("(none)".into()),
                Cell::Count(0),
                Cell::Kit(String::new()),
            ],
        }
    }

    fn guidance(&self) -> Table {
        Table {
            head: &["kind", "rows", "uses"],
            rows: self
                .guidance
                .iter()
                .map(|(kind, (rows, uses))| {
                    vec![
                        Cell::Kit(kind.clone()),
                        Cell::Count(*rows),
                        Cell::Count(*uses),
                    ]
                })
                .collect(),
            empty: vec![
                Cell::Kit("(none recorded)".into()),
                Cell::Count(0),
                Cell::Count(0),
            ],
        }
    }
}

/// Everything the summary is made of.
pub(crate) struct Class<'a> {
    /// The gradebook.
    pub(crate) book: &'a Gradebook,
    /// The lessons graded, with each one's checks in its order.
    pub(crate) lessons: Vec<(&'a Lesson, Vec<&'static str>)>,
    /// The similarity pairs, most alike first.
    pub(crate) pairs: &'a [Pair],
    /// The lesson files the similarity could not read as Rust tokens (in no pair).
    pub(crate) unread: &'a [String],
}

impl Class<'_> {
    fn figures(&self) -> Vec<LessonFigures<'_>> {
        self.lessons
            .iter()
            .map(|(lesson, checks)| figures(self.book, lesson, checks))
            .collect()
    }

    /// The first [`PAIRS_SHOWN`] similarity pairs.
    fn pairs(&self) -> Table {
        Table {
            head: &[
                "lesson",
                "left",
                "right",
                "similarity",
                "contained",
                "regions",
            ],
            rows: self
                .pairs
                .iter()
                .take(PAIRS_SHOWN)
                .map(|p| {
                    vec![
                        Cell::Kit(p.lesson.clone()),
                        Cell::Learner(p.left.clone()),
                        Cell::Learner(p.right.clone()),
                        Cell::Figure(p.similarity),
                        Cell::Figure(p.contained),
                        Cell::Regions(p.regions.clone()),
                    ]
                })
                .collect(),
            empty: [
                format!("(none at {:.2} or more)", super::similarity::LISTED_FROM),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]
            .map(Cell::Kit)
            .into(),
        }
    }

    /// The files the similarity could not read, then the rows that need a look.
    fn attention(&self) -> Table {
        let unread = self.unread.iter().map(|name| {
            vec![
                Cell::Learner(name.clone()),
                Cell::Kit(String::new()),
                Cell::Kit(UNREAD.into()),
            ]
        });
        let rows = attention(self.book).into_iter().map(|(row, why)| {
            vec![
                Cell::Learner(row.submission.clone()),
                Cell::Kit(row.lesson.clone()),
                Cell::Learner(why),
            ]
        });
        Table {
            head: &["submission", "lesson", "why"],
            rows: unread.chain(rows).collect(),
            empty: ["(none)", "", ""].map(|t| Cell::Kit(t.into())).into(),
        }
    }

    /// `summary.md`.
    pub(crate) fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# Class summary\n");
        let _ = writeln!(
            out,
            "Run {} · {} row(s) · the full lists are in grades.csv and similarity.csv.\n",
            md(&self.book.run),
            self.book.rows.len()
        );
        for f in self.figures() {
            let _ = writeln!(
                out,
                "## {} — {} ({} points)\n",
                md(&f.lesson.name),
                md(&f.lesson.title),
                points(f.lesson.points)
            );
            let statuses: Vec<String> = f
                .by_status
                .iter()
                .map(|(s, n)| format!("{n} {s}"))
                .collect();
            let _ = writeln!(out, "{} row(s): {}.\n", f.rows.len(), statuses.join(", "));
            let _ = writeln!(out, "### Grade distribution\n\n| grade | rows |\n|---|---|");
            for (label, n) in BANDS.iter().zip(f.bands) {
                let _ = writeln!(out, "| {label} | {n} {} |", "█".repeat(n));
            }
            let _ = writeln!(
                out,
                "\n### Each check's failure rate (of the {} row(s) whose checks ran; most failed first)\n\n| check | failed | rate |\n|---|---|---|",
                f.ran
            );
            for (check, n) in f.failures.iter().filter(|(_, n)| *n > 0) {
                let _ = writeln!(out, "| {} | {n} | {} |", md(check), percent(*n, f.ran));
            }
            let clean = f.failures.iter().filter(|(_, n)| *n == 0).count();
            if clean > 0 {
                let _ = writeln!(out, "| ({clean} other check(s): no failure) | 0 | 0% |");
            }
            let _ = write!(
                out,
                "\n### Most common first failures\n\n{}\n### Guidance\n\n{}",
                f.first_failures().markdown(),
                f.guidance().markdown()
            );
            let _ = writeln!(
                out,
                "\n{} row(s) came without a guidance log; {} with a log that fails `log --check` (unverified).\n",
                f.without_log, f.unverified
            );
        }
        let _ = writeln!(
            out,
            "## Similar submissions\n\nA list to look at, not a verdict: how alike two lesson files are once names, layout, comments, the order of items and the stub's own text are set aside (1.00: the same); `contained` is the share of the smaller file found in the other (a copy padded out with other code). The kit's answer goes by its path (`reference/src/…`). Regions are `left lines~right lines`.\n"
        );
        out.push_str(&self.pairs().markdown());
        if self.pairs.len() > PAIRS_SHOWN {
            let _ = writeln!(
                out,
                "\n{} more in similarity.csv.",
                self.pairs.len() - PAIRS_SHOWN
            );
        }
        let _ = write!(
            out,
            "\n## Needs attention\n\n{}",
            self.attention().markdown()
        );
        out
    }

    /// `summary.html`: the same as [`Class::markdown`], with bar charts, in one file.
    pub(crate) fn html(&self) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
             <title>Class summary · {run}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
             <h1>Class summary</h1>\n<p class=\"meta\">Run {run} · {rows} row(s) · the full lists are in \
             <code>grades.csv</code> and <code>similarity.csv</code>.</p>\n",
            run = html(&self.book.run),
            rows = self.book.rows.len()
        );
        for f in self.figures() {
            let _ = writeln!(
                out,
                "<section class=\"lesson\" id=\"{g}\">\n<h2>{g} — {t} <small>({p} points)</small></h2>",
                g = html(&f.lesson.name),
                t = html(&f.lesson.title),
                p = points(f.lesson.points)
            );
            let statuses: Vec<String> = f
                .by_status
                .iter()
                .map(|(s, n)| format!("<span class=\"status {s}\">{n} {s}</span>"))
                .collect();
            let _ = writeln!(
                out,
                "<p>{} row(s): {}</p>",
                f.rows.len(),
                statuses.join(" ")
            );
            let _ = writeln!(out, "<h3>Grade distribution</h3>");
            let bands: Vec<(String, usize)> =
                BANDS.iter().map(|b| b.to_string()).zip(f.bands).collect();
            out.push_str(&bar_chart(
                "distribution",
                &bands,
                f.rows.len().max(1),
                false,
            ));
            let _ = writeln!(
                out,
                "<h3>Each check's failure rate <small>(of the {} row(s) whose checks ran; most failed first)</small></h3>",
                f.ran
            );
            out.push_str(&bar_chart("failures", &f.failures, f.ran.max(1), true));
            let _ = write!(
                out,
                "<h3>Most common first failures</h3>\n{}<h3>Guidance</h3>\n{}",
                f.first_failures().html(),
                f.guidance().html()
            );
            let _ = writeln!(
                out,
                "<p>{} row(s) came without a guidance log; {} with a log that fails <code>log --check</code> (unverified).</p>\n</section>",
                f.without_log, f.unverified
            );
        }
        let _ = writeln!(
            out,
            "<section id=\"similarity\">\n<h2>Similar submissions</h2>\n<p>A list to look at, not a verdict: how alike two lesson files are once names, layout, comments, the order of items and the stub's own text are set aside (1.00: the same); <em>contained</em> is the share of the smaller file found in the other (a copy padded out with other code). The kit's answer goes by its path (<code>reference/src/…</code>). Regions are <code>left lines~right lines</code>.</p>"
        );
        out.push_str(&self.pairs().html());
        if self.pairs.len() > PAIRS_SHOWN {
            let _ = writeln!(
                out,
                "<p>{} more in similarity.csv.</p>",
                self.pairs.len() - PAIRS_SHOWN
            );
        }
        let _ = writeln!(
            out,
            "</section>\n<section id=\"attention\">\n<h2>Needs attention</h2>\n{}</section>\n</body>\n</html>",
            self.attention().html()
        );
        out
    }
}

/// A horizontal bar chart as inline SVG: one bar per `(label, n)`, its length `n / of`.
fn bar_chart(id: &str, bars: &[(String, usize)], of: usize, rate: bool) -> String {
    const LABEL: usize = 400;
    const WIDTH: usize = 360;
    const ROW: usize = 22;
    let height = ROW * bars.len() + 4;
    let mut svg = format!(
        "<svg class=\"chart\" id=\"{id}\" role=\"img\" width=\"{w}\" height=\"{height}\" viewBox=\"0 0 {w} {height}\">\n",
        w = LABEL + WIDTH + 70
    );
    for (i, (label, n)) in bars.iter().enumerate() {
        let y = i * ROW + 2;
        let length = (WIDTH as f64 * *n as f64 / of as f64).round() as usize;
        let shown = if rate {
            format!("{n} · {}", percent(*n, of))
        } else {
            n.to_string()
        };
        let _ = writeln!(
            svg,
            "<text x=\"{lx}\" y=\"{ty}\" text-anchor=\"end\">{label}</text>\
             <rect class=\"bar\" x=\"{bx}\" y=\"{y}\" width=\"{length}\" height=\"{bh}\"><title>{label}: {shown}</title></rect>\
             <text x=\"{vx}\" y=\"{ty}\">{shown}</text>",
            lx = LABEL - 8,
            ty = y + 15,
            label = html(label),
            bx = LABEL,
            bh = ROW - 6,
            vx = LABEL + length + 6,
        );
    }
    svg.push_str("</svg>\n");
    svg
}

const STYLE: &str = "body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 64em; color: #222; padding: 0 1em; }
h1 { margin-bottom: 0.2em; } .meta { color: #666; }
section { margin: 2em 0; } h2 small, h3 small { font-weight: normal; color: #666; }
table { border-collapse: collapse; margin: 0.5em 0; } th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; }
pre { margin: 0; white-space: pre-wrap; font-size: 13px; max-width: 40em; }
span.region { white-space: nowrap; }
svg.chart text { font: 13px system-ui, sans-serif; fill: #222; }
svg.chart rect.bar { fill: #3b6fb6; }
.status { display: inline-block; margin-right: 0.6em; padding: 0 0.4em; border-radius: 3px; background: #eee; }
.status.passing { background: #d6f0d6; } .status.failing { background: #f6d6d6; }
.status.kit-error, .status.refused { background: #f8e3b5; }
";

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, status: RowStatus, score: f64, failed: &[&str]) -> Row {
        Row {
            score,
            max_score: 10.0,
            failed_checks: failed.iter().map(|s| s.to_string()).collect(),
            first_message: failed.first().map(|c| format!("{c} <b>expected</b> 3")),
            ..Row::empty(name, "build3", status, String::new())
        }
    }

    fn class_of(rows: Vec<Row>) -> (Gradebook, Lesson) {
        let book = Gradebook::new(rows).of_run("2026-12-03T00-00-00Z", &[]);
        let lesson = Lesson {
            name: "build3".into(),
            title: "Retry transient failures".into(),
            points: 10.0,
        };
        (book, lesson)
    }

    #[test]
    fn figures_count_what_the_rows_say() {
        let (book, lesson) = class_of(vec![
            row("a", RowStatus::Passing, 10.0, &[]),
            row("b", RowStatus::Failing, 8.0, &["x::one", "x::two"]),
            row("c", RowStatus::Failing, 5.0, &["x::one"]),
            row("d", RowStatus::DoesNotCompile, 0.0, &[]),
            row("e", RowStatus::KitError, 0.0, &[]),
        ]);
        let f = figures(&book, &lesson, &["x::three", "x::one", "x::two"]);
        assert_eq!(f.ran, 3);
        assert_eq!(f.bands, [1, 0, 1, 1, 0, 1], "the kit error is in no band");
        assert_eq!(
            f.failures,
            vec![
                ("x::one".into(), 2),
                ("x::two".into(), 1),
                ("x::three".into(), 0)
            ]
        );
        assert_eq!(f.first[0].0, "x::one");
        assert_eq!(f.first[0].1, 2);
    }

    #[test]
    fn html_escapes_what_learners_chose_and_loads_nothing() {
        let (book, lesson) = class_of(vec![row(
            "<script>alert(1)</script>",
            RowStatus::Failing,
            0.0,
            &["x::one"],
        )]);
        let class = Class {
            book: &book,
            lessons: vec![(&lesson, vec!["x::one"])],
            pairs: &[],
            unread: &[],
        };
        let page = class.html();
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("<b>"), "{page}");
        assert!(page.contains("&lt;b&gt;expected&lt;/b&gt;"));
        assert!(page.contains("default-src 'none'"));
        assert!(!page.contains("src=\"http") && !page.contains("href=\"http"));
        assert!(page.contains("<svg class=\"chart\" id=\"failures\""));
        let text = class.markdown();
        assert!(!text.contains("<script>"), "{text}");
        assert!(text.contains("| x::one | 1 | 100% |"), "{text}");
        // A learner's message is a code span: no image to fetch, no link, no emphasis.
        assert!(
            text.contains("| x::one | 1 | `x::one &lt;b&gt;expected&lt;/b&gt; 3` |"),
            "{text}"
        );
        // A pipe of a learner's cannot open a cell, backslash or not.
        let (book, lesson) = class_of(vec![row("a\\| 1.00 |", RowStatus::Refused, 0.0, &[])]);
        let class = Class {
            book: &book,
            lessons: vec![(&lesson, vec!["x::one"])],
            pairs: &[],
            unread: &[],
        };
        let piped = class.markdown();
        assert!(!piped.lines().any(|l| l.contains("a\\|")), "{piped}");
        assert!(
            piped.contains("| `a\\¦ 1.00 ¦` | build3 | `refused: ` |"),
            "{piped}"
        );
    }

    #[test]
    fn attention_names_the_rows_a_roster_does_not_match() {
        let student = |id: &str| Student {
            id: id.into(),
            name: id.into(),
            extra: Default::default(),
        };
        let ana = Row {
            student: Some(student("s1")),
            ..row("ana", RowStatus::Passing, 10.0, &[])
        };
        let gone = Row {
            student: Some(student("s2")),
            ..row("s2", RowStatus::Missing, 0.0, &[])
        };
        let (book, _) = class_of(vec![
            ana,
            gone,
            row("Bo_Brown", RowStatus::Passing, 10.0, &[]),
        ]);
        let found: Vec<(&str, String)> = attention(&book)
            .into_iter()
            .map(|(r, why)| (r.submission.as_str(), why))
            .collect();
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].0 == "Bo_Brown" && found[0].1.starts_with("not on the roster"));
        assert!(found[1].0 == "s2" && found[1].1.starts_with("on the roster, handed in nothing"));
    }

    #[test]
    fn attention_names_kit_errors_refusals_and_timeouts() {
        let mut slow = row("slow", RowStatus::Failing, 0.0, &["x::one"]);
        slow.timeouts = 2;
        let (book, _) = class_of(vec![
            row("fine", RowStatus::Passing, 10.0, &[]),
            row("bug", RowStatus::KitError, 0.0, &[]),
            row("took", RowStatus::Refused, 0.0, &[]),
            slow,
        ]);
        let names: Vec<&str> = attention(&book)
            .iter()
            .map(|(r, _)| r.submission.as_str())
            .collect();
        assert_eq!(names, ["bug", "slow", "took"]);
    }
}
