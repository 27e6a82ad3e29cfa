//! Learner-controlled text made safe to show: control characters and the Unicode controls
//! that reorder a line are written as escapes (`\u{1b}`), so nothing a learner's code
//! prints, panics with or names a folder can drive a terminal (clear it, set its title,
//! move the cursor over the real summary line) or a platform's page.
//!
//! The kit applies it where such text enters its records, once: what a check's process
//! printed and reported, when the grader receives it ([`crate::Launcher`]), and a
//! submission's name and paths, when `grade` reads them. Everything downstream (the
//! terminal, the feedback text, every report format, the gradebook) then holds only
//! escaped text, and the kit's own colouring, added later, is untouched. The compiler's
//! messages quote the learner's source, and rustc shows C0 controls as symbols but C1
//! controls raw: they are escaped where they become a report's text, and on their way to
//! the terminal by an [`EscapingWriter`], which keeps cargo's colour.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` is shown escaped: every C0 control but newline and tab, DEL, the C1
/// controls, and the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
/// U+2066–U+2069), which can make a line read differently from what it holds.
pub(crate) fn needs_escape(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}'
        | '\u{b}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// `text` with every character of [`needs_escape`] written as Rust writes it in a string
/// literal's escape, `\u{1b}`; borrowed when there is none. The result holds no such
/// character, so escaping it again changes nothing.
pub(crate) fn escape_controls(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(needs_escape) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if needs_escape(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`escape_controls`], except for colour: an SGR sequence (`ESC [ 1;31 m`) is kept as it
/// is. For the compiler's messages on a terminal, which cargo colours and which quote the
/// learner's source; any other escape sequence in them is escaped.
pub(crate) fn escape_keeping_colour(text: &str) -> Cow<'_, str> {
    if !text.contains(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let colour = rest
            .strip_prefix("\u{1b}[")
            .map(|after| {
                after.len()
                    - after
                        .trim_start_matches(|c: char| c.is_ascii_digit() || c == ';')
                        .len()
            })
            .filter(|&params| rest[2 + params..].starts_with('m'))
            .map(|params| 3 + params);
        match colour {
            Some(len) => {
                out.push_str(&rest[..len]);
                rest = &rest[len..];
            }
            None => {
                out.push_str(&escape_controls(&rest[..c.len_utf8()]));
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    Cow::Owned(out)
}

/// A writer that passes its text on with [`escape_keeping_colour`] applied: for the
/// compiler's messages on their way to the terminal. A character split between two writes
/// is held until it is whole; bytes that are not UTF-8 are passed on as U+FFFD.
pub(crate) struct EscapingWriter<W: std::io::Write> {
    inner: W,
    /// The start of a character whose end has not been written yet.
    pending: Vec<u8>,
}

impl<W: std::io::Write> EscapingWriter<W> {
    /// A writer escaping what it passes on to `inner`.
    pub(crate) fn new(inner: W) -> Self {
        EscapingWriter {
            inner,
            pending: Vec::new(),
        }
    }
}

impl<W: std::io::Write> std::io::Write for EscapingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let whole = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            // Only an incomplete last character waits; an invalid one goes on, replaced.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let text = String::from_utf8_lossy(&self.pending[..whole]).into_owned();
        self.pending.drain(..whole);
        self.inner
            .write_all(escape_keeping_colour(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// [`escape_controls`] of an owned string, which is returned as it is when it needs none.
pub(crate) fn escape_string(text: String) -> String {
    match escape_controls(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(escaped) => escaped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the item's documentation once showed as an example.
    #[test]
    fn escape_controls_shows_escapes_and_borrows_plain_text() {
        use crate::sanitise::escape_controls;
        assert_eq!(escape_controls("\u{1b}[2Jok\n\ttab"), "\\u{1b}[2Jok\n\ttab");
        assert!(matches!(
            escape_controls("plain"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    /// What the item's documentation once showed as an example.
    #[test]
    fn escape_keeping_colour_keeps_sgr_only() {
        use crate::sanitise::escape_keeping_colour;
        assert_eq!(
            escape_keeping_colour("\u{1b}[1;31merror\u{1b}[0m \u{9b}2J"),
            "\u{1b}[1;31merror\u{1b}[0m \\u{9b}2J"
        );
    }

    #[test]
    fn terminal_controls_are_escaped_and_newline_and_tab_kept() {
        assert_eq!(
            escape_controls("\u{1b}[2J\u{1b}]0;pwned\u{7}\r\n\tx"),
            "\\u{1b}[2J\\u{1b}]0;pwned\\u{7}\\u{d}\n\tx"
        );
        assert_eq!(
            escape_controls("a\u{0}b"),
            "a\\u{0}b",
            "NUL never stays raw"
        );
        assert_eq!(
            escape_controls("\u{7f}\u{80}\u{9b}\u{9f}"),
            "\\u{7f}\\u{80}\\u{9b}\\u{9f}"
        );
    }

    #[test]
    fn every_control_but_newline_and_tab_is_escaped() {
        for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            let escaped = escape_controls(&c.to_string()).into_owned();
            if c == '\n' || c == '\t' {
                assert_eq!(escaped, c.to_string());
            } else {
                assert_eq!(escaped, format!("\\u{{{:x}}}", u32::from(c)));
            }
        }
    }

    #[test]
    fn bidi_overrides_and_isolates_are_escaped() {
        for c in ('\u{202a}'..='\u{202e}').chain('\u{2066}'..='\u{2069}') {
            assert!(!escape_controls(&format!("a{c}b")).contains(c), "{c:?}");
        }
        assert_eq!(escape_controls("x\u{202e}y"), "x\\u{202e}y");
    }

    #[test]
    fn ordinary_text_is_borrowed_unchanged() {
        for text in [
            "",
            "plain",
            "ünïcödé — 日本語 👩‍🔬 שלום",
            "\\u{1b} already escaped",
        ] {
            assert!(matches!(escape_controls(text), Cow::Borrowed(t) if t == text));
        }
        // The neighbours of the escaped ranges stay as they are.
        let kept = "\u{a0}\u{2029}\u{202f}\u{2065}\u{206a}\u{fffd}";
        assert_eq!(escape_controls(kept), kept);
    }

    #[test]
    fn colour_is_kept_and_every_other_sequence_escaped() {
        let sgr = "\u{1b}[0m\u{1b}[1m\u{1b}[38;5;12m";
        assert!(matches!(escape_keeping_colour("plain"), Cow::Borrowed(_)));
        assert_eq!(escape_keeping_colour(sgr), sgr);
        assert_eq!(
            escape_keeping_colour("\u{1b}[31mred\u{1b}[2J\u{1b}]0;t\u{7}\u{1b}[1;2\r\u{1b}"),
            "\u{1b}[31mred\\u{1b}[2J\\u{1b}]0;t\\u{7}\\u{1b}[1;2\\u{d}\\u{1b}"
        );
        assert_eq!(
            escape_keeping_colour("é\u{9b}2J\u{202e}"),
            "é\\u{9b}2J\\u{202e}"
        );
    }

    #[test]
    fn the_writer_escapes_across_writes_and_keeps_split_characters() {
        use std::io::Write as _;
        let mut out = Vec::new();
        {
            let mut w = EscapingWriter::new(&mut out);
            let text = "\u{1b}[31merror\u{1b}[0m: é \u{9b}2J".as_bytes();
            // Split inside `é` (two bytes) and inside the C1 control.
            let cut = text.iter().position(|b| *b == 0xc3).unwrap() + 1;
            let cut2 = text.iter().position(|b| *b == 0xc2).unwrap() + 1;
            w.write_all(&text[..cut]).unwrap();
            w.write_all(&text[cut..cut2]).unwrap();
            w.write_all(&text[cut2..]).unwrap();
            w.write_all(b"\xff\n").unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\u{1b}[31merror\u{1b}[0m: é \\u{9b}2J\u{fffd}\n"
        );
    }

    #[test]
    fn escaping_twice_is_escaping_once() {
        let once = escape_string("\u{1b}[31m\u{0}\u{202e}\u{9b}".to_string());
        assert_eq!(escape_controls(&once), once);
        assert!(!once.chars().any(needs_escape));
    }
}
