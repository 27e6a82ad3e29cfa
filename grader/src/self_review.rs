//! Whether a learner's self-review file answers its questions: for `review`, a checklist.
//!
//! The questions are the numbered items of the lesson's `self-review.md` (`1. Pick one…`,
//! continued on the lines below it). The learner's copy is answered at question N when, under
//! N's item and before the next question's, there is text besides the question itself: the
//! question's words, as far as the learner left them unchanged, are not an answer, and
//! neither is punctuation alone (`-`, `>`). Nothing here judges what an answer says.

/// One numbered question of a self-review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Question {
    /// Its number, as written.
    pub(crate) number: u32,
    /// Its words, in order.
    pub(crate) words: Vec<String>,
}

/// How many of a question's first words find its item in the learner's copy.
const HEADER_WORDS: usize = 3;

/// `N. rest` at the start of a list item (up to three spaces before it): N and the rest.
fn item(line: &str) -> Option<(u32, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let (number, rest) = line.trim_start().split_once(". ")?;
    let number = number.parse().ok()?;
    Some((number, rest))
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split_whitespace().map(str::to_string)
}

/// The numbered questions of a self-review's text, in order: each item and the lines that
/// continue it, up to a blank line or the next item.
pub(crate) fn questions(text: &str) -> Vec<Question> {
    let mut found: Vec<Question> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if let Some((number, rest)) = item(line) {
            found.push(Question {
                number,
                words: words(rest).collect(),
            });
            open = true;
        } else if line.trim().is_empty() {
            open = false;
        } else if open {
            if let Some(q) = found.last_mut() {
                q.words.extend(words(line));
            }
        }
    }
    found
}

/// Where question `q`'s item starts in `lines`, searching from `from`: a line `N. ` followed
/// by the question's first words.
fn header(lines: &[&str], from: usize, q: &Question) -> Option<usize> {
    let first = &q.words[..q.words.len().min(HEADER_WORDS)];
    (from..lines.len()).find(|&i| {
        item(lines[i]).is_some_and(|(n, rest)| {
            n == q.number && words(rest).take(first.len()).eq(first.iter().cloned())
        })
    })
}

/// The numbers of the `questions` that `answers` (the learner's copy) leaves unanswered, in
/// order: those whose item is gone, and those with nothing under them but the question.
pub(crate) fn unanswered(questions: &[Question], answers: &str) -> Vec<u32> {
    let lines: Vec<&str> = answers.lines().collect();
    let mut starts: Vec<Option<usize>> = Vec::with_capacity(questions.len());
    let mut from = 0;
    for q in questions {
        let at = header(&lines, from, q);
        if let Some(at) = at {
            from = at + 1;
        }
        starts.push(at);
    }
    let mut missing = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        let Some(start) = starts[i] else {
            missing.push(q.number);
            continue;
        };
        let end = starts[i + 1..]
            .iter()
            .flatten()
            .next()
            .copied()
            .unwrap_or(lines.len());
        let mut block: Vec<String> = lines[start..end].iter().flat_map(|l| words(l)).collect();
        // The item's own "N." and the question's words, as far as they are unchanged.
        block.remove(0);
        let same = block
            .iter()
            .zip(&q.words)
            .take_while(|(a, b)| a == b)
            .count();
        let answered = block[same..]
            .iter()
            .any(|w| w.chars().any(char::is_alphanumeric));
        if !answered {
            missing.push(q.number);
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUESTIONS: &str = "# Self-review · x\n\nAnswer in your own words.\n\n\
        1. Pick one of your scenarios. Name its input\n   and the result.\n\n\
        2. Name a case your function refuses.\n\n\
        3. Why is stopping better?\n";

    #[test]
    fn the_questions_are_the_numbered_items_with_their_lines() {
        let qs = questions(QUESTIONS);
        assert_eq!(qs.iter().map(|q| q.number).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(
            qs[0].words.join(" "),
            "Pick one of your scenarios. Name its input and the result."
        );
    }

    #[test]
    fn the_copy_as_handed_out_answers_nothing() {
        let qs = questions(QUESTIONS);
        assert_eq!(unanswered(&qs, QUESTIONS), [1, 2, 3]);
    }

    #[test]
    fn an_answer_is_text_under_the_question_besides_the_question() {
        let qs = questions(QUESTIONS);
        let some = QUESTIONS.replace(
            "the result.\n",
            "the result.\n\n   My scenario second.toml: a timeout, then data.\n   1. a list in the answer\n",
        );
        assert_eq!(unanswered(&qs, &some), [2, 3]);
        // On the question's own line, after it.
        let inline = QUESTIONS.replace("refuses.", "refuses. A POST: it is refused first.");
        assert_eq!(unanswered(&qs, &inline), [1, 3]);
        // Punctuation alone is not an answer.
        let dash = QUESTIONS.replace("better?\n", "better?\n\n   - >\n");
        assert_eq!(unanswered(&qs, &dash), [1, 2, 3]);
        let all =
            some.replace("refuses.", "refuses. A POST.") + "\nBecause waiting 2 s wastes them.\n";
        assert!(unanswered(&qs, &all).is_empty());
    }

    #[test]
    fn a_question_taken_out_of_the_copy_is_unanswered() {
        let qs = questions(QUESTIONS);
        let gone = QUESTIONS.replace("2. Name a case your function refuses.\n", "");
        let answered = gone.replace("better?\n", "better?\nIt leaves time.\n");
        assert_eq!(unanswered(&qs, &answered), [1, 2]);
    }
}
