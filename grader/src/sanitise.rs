//! Learner-controlled text made safe to show: control characters and the Unicode controls
//! that reorder a line are written as escapes (`\u{1b}`), so nothing a learner's code
//! prints, panics with or names a folder can drive a terminal (clear it, set its title,
//! move the cursor over the real summary line) or a platform's page.
//!
//! The kit applies it where such text enters its records, once: what a check's process
//! printed and reported, when the grader receives it ([`crate::Launcher`]), and a
//! submission's name and paths, when `grade` reads them. Everything downstream (the
//! terminal, the feedback text, every report format, the gradebook) then holds only
//! escaped text, and the kit's own colouring, added later, is untouched.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` is shown escaped: every C0 control but newline and tab, DEL, the C1
/// controls, and the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
/// U+2066–U+2069), which can make a line read differently from what it holds.
pub fn needs_escape(c: char) -> bool {
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
///
/// ```
/// use grader::sanitise::escape_controls;
/// assert_eq!(escape_controls("\u{1b}[2Jok\n\ttab"), "\\u{1b}[2Jok\n\ttab");
/// assert!(matches!(escape_controls("plain"), std::borrow::Cow::Borrowed(_)));
/// ```
pub fn escape_controls(text: &str) -> Cow<'_, str> {
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

/// [`escape_controls`] of an owned string, which is returned as it is when it needs none.
pub fn escape_string(text: String) -> String {
    match escape_controls(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(escaped) => escaped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn escaping_twice_is_escaping_once() {
        let once = escape_string("\u{1b}[31m\u{0}\u{202e}\u{9b}".to_string());
        assert_eq!(escape_controls(&once), once);
        assert!(!once.chars().any(needs_escape));
    }
}
