//! Telling a submitted lesson file that is the kit's reference answer, give or take
//! whitespace and comments: a copy (or a symbolic link) of `reference/src/retry.rs` passes
//! every check, and the gradebook says so in the row's note. It is still graded: the note is
//! for the instructor to follow up, not a verdict.
//!
//! The comparison is deliberately simple: both texts lose their comments (`//` to the end of
//! the line, `/* */` nested as Rust nests them, doc comments too) and every whitespace
//! character outside string and character literals, and must then be equal. A renamed
//! variable or a reordered `match` is not a copy by this measure.

/// `source` without comments and without whitespace outside literals: two files that differ
/// only in layout and comments give the same text.
pub(crate) fn normalized(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                // Rust's block comments nest.
                let mut depth = 0usize;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            '"' => i = copy_string(&chars, i, &mut out),
            'r' | 'b' if !continues_word(&out) => match raw_string_end(&chars, i) {
                Some(end) => {
                    out.extend(&chars[i..end]);
                    i = end;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            },
            '\'' => i = copy_char_or_lifetime(&chars, i, &mut out),
            c if c.is_whitespace() => i += 1,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Whether the text so far ends inside a word, so an `r` or `b` next is part of a name
/// (`bar"`… is not a raw string).
fn continues_word(out: &str) -> bool {
    out.chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Copies the string literal starting at `start` (a `"`), escapes and all; the index after
/// it.
fn copy_string(chars: &[char], start: usize, out: &mut String) -> usize {
    out.push('"');
    let mut i = start + 1;
    while i < chars.len() {
        let c = chars[i];
        out.push(c);
        i += 1;
        match c {
            '\\' => {
                if let Some(escaped) = chars.get(i) {
                    out.push(*escaped);
                    i += 1;
                }
            }
            '"' => break,
            _ => {}
        }
    }
    i
}

/// The end of a raw string (`r"…"`, `r#"…"#`, `br#"…"#`) starting at `start`, if one starts
/// there.
fn raw_string_end(chars: &[char], start: usize) -> Option<usize> {
    let mut i = start;
    if chars.get(i) == Some(&'b') {
        i += 1;
    }
    if chars.get(i) != Some(&'r') {
        return None;
    }
    i += 1;
    let mut hashes = 0;
    while chars.get(i) == Some(&'#') {
        hashes += 1;
        i += 1;
    }
    if chars.get(i) != Some(&'"') {
        return None;
    }
    i += 1;
    while i < chars.len() {
        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(chars.len())
}

/// Copies a character literal (`'a'`, `'\''`, `' '`) or a lifetime's quote starting at
/// `start`; the index after what was copied.
fn copy_char_or_lifetime(chars: &[char], start: usize, out: &mut String) -> usize {
    out.push('\'');
    match (chars.get(start + 1), chars.get(start + 2)) {
        (Some('\\'), _) => {
            let mut i = start + 1;
            while i < chars.len() {
                let c = chars[i];
                out.push(c);
                i += 1;
                if c == '\\' {
                    if let Some(escaped) = chars.get(i) {
                        out.push(*escaped);
                        i += 1;
                    }
                } else if c == '\'' {
                    break;
                }
            }
            i
        }
        (Some(c), Some('\'')) => {
            out.push(*c);
            out.push('\'');
            start + 3
        }
        // A lifetime (`'a`): its name follows as ordinary text.
        _ => start + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the item's documentation once showed as an example.
    #[test]
    fn normalized_ignores_comments_and_layout_not_strings() {
        use crate::grade::copied::normalized;
        assert_eq!(
            normalized("fn f() { // why\n    \"a  b\" /* old: 1 */ }"),
            normalized("fn f(){\"a  b\"}")
        );
        assert_ne!(normalized("\"a  b\""), normalized("\"a b\""));
    }

    #[test]
    fn layout_and_comments_do_not_count_but_literals_and_code_do() {
        let reference = "/// Doc.\npub fn f<'a>(x: &'a str) -> usize {\n    // count\n    x.len() /* a /* nested */ comment */ + ' '.len_utf8()\n}\n";
        let reformatted = "pub fn f<'a>(x:&'a str)->usize{x.len()+' '.len_utf8()}";
        assert_eq!(normalized(reference), normalized(reformatted));
        let changed_char = reformatted.replace("' '", "'x'");
        assert_ne!(normalized(reference), normalized(&changed_char));
        assert_ne!(normalized("a + b"), normalized("a - b"));
    }

    #[test]
    fn comment_markers_inside_literals_are_text() {
        let a = r##"let s = "// not a comment"; let r = r#"/* nor " this */"#;"##;
        let b = r##"let s = "// not a comment";let r = r#"/* nor " this */"#;"##;
        assert_eq!(normalized(a), normalized(b));
        assert!(
            normalized(a).contains("\"// not a comment\""),
            "{}",
            normalized(a)
        );
        assert!(
            normalized(a).contains("/* nor \" this */"),
            "{}",
            normalized(a)
        );
        let escaped = r#"let q = "a \" // still text"; let c = '\''; // gone"#;
        assert!(
            normalized(escaped).contains("\"a \\\" // still text\""),
            "{}",
            normalized(escaped)
        );
        assert!(!normalized(escaped).contains("gone"));
    }
}
