//! Similarity between a class's lesson files, and between each of them and the reference
//! answer: a list for an instructor to look at, never a verdict.
//!
//! The method is MOSS's and Dolos's, on Rust tokens:
//!
//! 1. A file is read as Rust tokens by `proc-macro2`, as rustc reads it (a shebang line and
//!    a byte-order mark skipped). Comments and layout are gone; doc comments, which it keeps
//!    as `#[doc]` attributes, are dropped too, and so are brackets, `;`, `,` and `mut`, which
//!    change no meaning a copier cares about and cost nothing to add. Every identifier that
//!    is not a keyword becomes one token, `id`, and every literal one of `str`, `num` or
//!    `chr`: renaming variables or changing messages changes nothing.
//! 2. The file is cut into its items (and the items of its `impl`, `mod` and `trait`
//!    blocks), so that reordering items changes nothing either; items whose own attributes
//!    say `#[cfg(test)]` are left out.
//! 3. Each item's runs of `K` tokens are hashed, and winnowing keeps the smallest hash of
//!    every `WINDOW` consecutive ones: any shared run of `K + WINDOW - 1` tokens is
//!    found, and a file has a few fingerprints per line rather than one per token.
//! 4. Fingerprints that the lesson's stub has are left out everywhere (MOSS's base file):
//!    every submission shares the stub's text, which says nothing about copying.
//! 5. Two files' similarity is the share of their fingerprints they have in common (Dice's
//!    coefficient: twice the shared, over both files' counts); `contained` is the share of
//!    the smaller file the other holds (a copy padded out with other code). The regions
//!    are the lines those shared fingerprints cover, paired between the two files.
//!
//! Nothing here recurses as deep as a learner's brackets nest, and nothing is quadratic in
//! a file's length: a learner's file is hostile input. A file that `proc-macro2` cannot
//! read (an unclosed delimiter, say) has no fingerprints and is in no pair;
//! `Compared::unread` names it, for the instructor to look at.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// The tokens in one hashed run (MOSS's and Dolos's noise threshold is of this order).
pub(crate) const K: usize = 12;

/// The runs winnowing looks at together: a shared run of `K + WINDOW - 1` tokens is always
/// found.
pub(crate) const WINDOW: usize = 8;

/// The least similarity a pair is listed with: below it, two solutions of a small function
/// share what any two do.
pub(crate) const LISTED_FROM: f64 = 0.30;

/// The least share of one file's fingerprints found in the other that lists a pair whatever
/// its similarity: a copy padded out with other code shares little of the padded file, but
/// holds nearly all of the original.
pub(crate) const CONTAINED_FROM: f64 = 0.80;

/// The fewest fingerprints a file needs for its share found in another to count: a file of
/// a few lines beyond the stub is found in every answer.
pub(crate) const CONTAINED_NEEDS: usize = 20;

/// The most places in the other file a fingerprint's lines are looked for when pairing
/// regions: a file of one line repeated thousands of times must not make that quadratic.
const PLACES_LOOKED_AT: usize = 8;

/// One token as compared, with the line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Token {
    kind: String,
    line: usize,
}

/// A file's fingerprints: each kept hash with the lines its run of tokens spans.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fingerprints {
    /// (hash, first line, last line), in the file's order of items.
    marks: Vec<(u64, usize, usize)>,
    /// The distinct hashes of `marks` (kept: every pair a file is in compares them).
    set: BTreeSet<u64>,
}

impl Fingerprints {
    /// How many distinct fingerprints there are.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.set.len()
    }

    /// `source`'s fingerprints, or `None` when it cannot be read as Rust tokens.
    pub(crate) fn of(source: &str) -> Option<Fingerprints> {
        let stream = TokenStream::from_str(&as_rustc_reads(source)).ok()?;
        let mut marks = Vec::new();
        for item in items(stream) {
            marks.extend(winnow(&item));
        }
        let set = marks.iter().map(|(h, _, _)| *h).collect();
        Some(Fingerprints { marks, set })
    }

    /// These fingerprints without any whose hash `base` has.
    fn without(mut self, base: &BTreeSet<u64>) -> Fingerprints {
        self.marks.retain(|(h, _, _)| !base.contains(h));
        self.set.retain(|h| !base.contains(h));
        self
    }

    /// Whether there are none (a file that is all stub, or too short to say anything).
    pub(crate) fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }
}

/// `source` as rustc lexes it: without a byte-order mark, and without a first line that is
/// a shebang (`#!` not followed by `[`), which rustc skips and `proc-macro2` does not. The
/// shebang's line stays, empty, so that line numbers hold.
fn as_rustc_reads(source: &str) -> std::borrow::Cow<'_, str> {
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    match source.strip_prefix("#!") {
        Some(rest) if !rest.trim_start().starts_with('[') => {
            let rest = rest.find('\n').map_or("", |at| &rest[at..]);
            std::borrow::Cow::Owned(rest.to_string())
        }
        _ => std::borrow::Cow::Borrowed(source),
    }
}

/// One pair of files worth a look.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pair {
    /// The lesson.
    pub(crate) lesson: String,
    /// One submission's name.
    pub(crate) left: String,
    /// The other's, or the reference answer's name (its path in the kit,
    /// `reference/src/retry.rs`, which no submission can be named: a name holds no `/`).
    pub(crate) right: String,
    /// From 0 (nothing shared beyond the stub) to 1 (the same, up to names and layout).
    pub(crate) similarity: f64,
    /// The share of the smaller file's fingerprints (the one with fewer) that the other
    /// holds: 1 when one file is within the other, padding or not. 0 when the smaller file
    /// has fewer than [`CONTAINED_NEEDS`].
    pub(crate) contained: f64,
    /// The shared regions: (left's first line, last line, right's first line, last line).
    pub(crate) regions: Vec<(usize, usize, usize, usize)>,
}

impl Pair {
    /// What orders the pairs, most alike first: the larger of the similarity and the share
    /// contained.
    pub(crate) fn score(&self) -> f64 {
        self.similarity.max(self.contained)
    }

    /// The regions as `12-30~40-58 41-50~5-14` (left's lines, then right's).
    pub(crate) fn regions_text(&self) -> String {
        regions_text(&self.regions)
    }
}

/// Regions as `12-30~40-58 41-50~5-14` (left's lines, then right's).
pub(crate) fn regions_text(regions: &[(usize, usize, usize, usize)]) -> String {
    regions
        .iter()
        .map(|(a, b, c, d)| format!("{a}-{b}~{c}-{d}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What [`pairs`] compared.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Compared {
    /// The pairs worth a look, most alike first.
    pub(crate) pairs: Vec<Pair>,
    /// The files that could not be read as Rust tokens (in no pair: worth a look of their
    /// own, since rustc may read what `proc-macro2` cannot).
    pub(crate) unread: Vec<String>,
}

/// The pairs among `files` (a submission's name and its lesson file's text), and of each
/// file with `reference` (its name and text), that are at least [`LISTED_FROM`] alike or
/// one within the other ([`CONTAINED_FROM`]), most alike first. Text that `stub` has is no
/// evidence of anything and is left out.
pub(crate) fn pairs(
    lesson: &str,
    files: &[(String, String)],
    reference: Option<(&str, &str)>,
    stub: &str,
) -> Compared {
    let mut unread = Vec::new();
    let base = Fingerprints::of(stub).map(|f| f.set).unwrap_or_default();
    let printed: Vec<(&str, Fingerprints)> = files
        .iter()
        .filter_map(|(name, text)| match Fingerprints::of(text) {
            Some(f) => Some((name.as_str(), f.without(&base))),
            None => {
                unread.push(name.clone());
                None
            }
        })
        .filter(|(_, f)| !f.is_empty())
        .collect();
    let answer = reference.and_then(|(name, text)| {
        let f = Fingerprints::of(text)?.without(&base);
        (!f.is_empty()).then_some((name, f))
    });
    let mut found = Vec::new();
    for (i, (left, a)) in printed.iter().enumerate() {
        for (right, b) in &printed[i + 1..] {
            found.extend(compare(lesson, left, a, right, b));
        }
        if let Some((name, answer)) = &answer {
            found.extend(compare(lesson, left, a, name, answer));
        }
    }
    sort(&mut found);
    Compared {
        pairs: found,
        unread,
    }
}

/// Most alike first (by [`Pair::score`]), then by lesson and names.
pub(crate) fn sort(pairs: &mut [Pair]) {
    pairs.sort_by(|x, y| {
        y.score()
            .total_cmp(&x.score())
            .then_with(|| (&x.lesson, &x.left, &x.right).cmp(&(&y.lesson, &y.left, &y.right)))
    });
}

/// How alike `left` and `right` are once `stub`'s text is left out, however little: `None`
/// when either cannot be read as Rust or holds nothing beyond the stub. (For comparing the
/// kit's measure with another tool's over every pair; [`pairs`] lists the ones worth a look.)
#[cfg(test)]
fn similarity(left: &str, right: &str, stub: &str) -> Option<f64> {
    let (a, b) = both(left, right, stub)?;
    Some(figures(&a, &b).0)
}

/// What orders the kit's pairs (`Pair::score`) for `left` and `right`: the larger of
/// their similarity and the share of the smaller one the other holds, with `stub`'s text
/// left out. `None` as for `similarity`.
pub fn score(left: &str, right: &str, stub: &str) -> Option<f64> {
    let (a, b) = both(left, right, stub)?;
    let (similarity, contained) = figures(&a, &b);
    Some(similarity.max(contained))
}

/// `left`'s and `right`'s fingerprints without `stub`'s, when both have some.
fn both(left: &str, right: &str, stub: &str) -> Option<(Fingerprints, Fingerprints)> {
    let base = Fingerprints::of(stub).map(|f| f.set).unwrap_or_default();
    let a = Fingerprints::of(left)?.without(&base);
    let b = Fingerprints::of(right)?.without(&base);
    (!a.is_empty() && !b.is_empty()).then_some((a, b))
}

/// `a`'s and `b`'s similarity (Dice's: twice the fingerprints they share, over both
/// counts) and the share of the smaller one the other holds (0 below [`CONTAINED_NEEDS`]
/// fingerprints), from one count of what they share.
fn figures(a: &Fingerprints, b: &Fingerprints) -> (f64, f64) {
    let shared = a.set.intersection(&b.set).count() as f64;
    let similarity = 2.0 * shared / (a.set.len() + b.set.len()) as f64;
    let smaller = a.set.len().min(b.set.len());
    let contained = if smaller < CONTAINED_NEEDS {
        0.0
    } else {
        shared / smaller as f64
    };
    (similarity, contained)
}

/// `a` and `b` as a pair, when they are at least [`LISTED_FROM`] alike or one holds at least
/// [`CONTAINED_FROM`] of the other.
fn compare(
    lesson: &str,
    left: &str,
    a: &Fingerprints,
    right: &str,
    b: &Fingerprints,
) -> Option<Pair> {
    let (similarity, contained) = figures(a, b);
    if similarity < LISTED_FROM && contained < CONTAINED_FROM {
        return None;
    }
    let shared: BTreeSet<u64> = a.set.intersection(&b.set).copied().collect();
    Some(Pair {
        lesson: lesson.to_string(),
        left: left.to_string(),
        right: right.to_string(),
        similarity,
        contained,
        regions: regions(a, b, &shared),
    })
}

/// The lines `shared` covers, paired: consecutive shared fingerprints of `a` whose partners
/// in `b` are also consecutive and in the same order make one region.
fn regions(
    a: &Fingerprints,
    b: &Fingerprints,
    shared: &BTreeSet<u64>,
) -> Vec<(usize, usize, usize, usize)> {
    // Where each hash is in `b` (a run of tokens can be there more than once).
    let mut in_b: HashMap<u64, Vec<(usize, usize)>> = HashMap::new();
    for (h, first, last) in &b.marks {
        in_b.entry(*h).or_default().push((*first, *last));
    }
    let mut out: Vec<(usize, usize, usize, usize)> = Vec::new();
    for (h, first, last) in a.marks.iter().filter(|(h, _, _)| shared.contains(h)) {
        let Some(places) = in_b.get(h) else {
            continue;
        };
        // The place that continues the region under way furthest on, if one does; else
        // the first.
        let goes_on = |(b_first, _): &&(usize, usize)| {
            out.last()
                .is_some_and(|region: &(usize, usize, usize, usize)| {
                    (region.2..=region.3 + 1).contains(b_first)
                })
        };
        let &(b_first, b_last) = places
            .iter()
            .take(PLACES_LOOKED_AT)
            .filter(goes_on)
            .max_by_key(|(b_first, _)| *b_first)
            .unwrap_or(&places[0]);
        // The same region goes on while both sides go on where they were: the next lines
        // of `a` matching the next lines of `b`.
        match out.last_mut() {
            Some(region)
                if *first <= region.1 + 1 && (region.2..=region.3 + 1).contains(&b_first) =>
            {
                region.1 = region.1.max(*last);
                region.2 = region.2.min(b_first);
                region.3 = region.3.max(b_last);
            }
            _ => out.push((*first, *last, b_first, b_last)),
        }
    }
    out
}

/// The items of `stream` as token lists: a top-level item ends at a `;` or at a `{ }` block
/// that no `;` follows, and the items of an `impl`, `mod` or `trait` block are items of their
/// own.
fn items(stream: TokenStream) -> Vec<Vec<Token>> {
    items_within(stream, 0)
}

/// How deep `impl`, `mod` and `trait` blocks are cut into items: deeper ones are items
/// whole (a learner's file may nest modules thousands deep; the grader's stack must hold).
const ITEM_DEPTH: usize = 4;

fn items_within(stream: TokenStream, depth: usize) -> Vec<Vec<Token>> {
    let trees: Vec<TokenTree> = without_docs(stream);
    let mut out = Vec::new();
    let mut current: Vec<Token> = Vec::new();
    let mut container = false;
    // The item under way is `#[cfg(test)]`: it is left out when it ends.
    let mut test_only = false;
    let mut i = 0;
    while i < trees.len() {
        let tree = &trees[i];
        let next_is_semicolon =
            matches!(trees.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == ';');
        let ends = match tree {
            TokenTree::Group(g) => g.delimiter() == Delimiter::Brace && !next_is_semicolon,
            TokenTree::Punct(p) => p.as_char() == ';',
            _ => false,
        };
        // Only an item's own attributes leave it out: a `#[cfg(test)]` inside an item (on a
        // generic parameter, say) says nothing of the item.
        if current.is_empty() && !test_only && attributes_hold_cfg_test(&trees[i..]) {
            test_only = true;
        }
        if test_only {
            if ends {
                test_only = false;
                current.clear();
                container = false;
            }
            i += 1;
            continue;
        }
        match tree {
            TokenTree::Ident(ident)
                if matches!(ident.to_string().as_str(), "impl" | "mod" | "trait") =>
            {
                container = true;
                push(tree, &mut current);
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace && !next_is_semicolon => {
                if container && depth < ITEM_DEPTH {
                    // The block's own braces stay with its header; its items are items.
                    current.push(Token {
                        kind: "{".into(),
                        line: line_of(tree),
                    });
                    out.push(std::mem::take(&mut current));
                    out.extend(items_within(g.stream(), depth + 1));
                    out.push(vec![Token {
                        kind: "}".into(),
                        line: line_of(tree),
                    }]);
                } else {
                    push(tree, &mut current);
                    out.push(std::mem::take(&mut current));
                }
                container = false;
            }
            TokenTree::Punct(p) if p.as_char() == ';' => {
                push(tree, &mut current);
                out.push(std::mem::take(&mut current));
                container = false;
            }
            _ => push(tree, &mut current),
        }
        i += 1;
    }
    if !current.is_empty() {
        out.push(current);
    }
    out.retain(|item| !item.is_empty());
    out
}

/// Whether the attributes that `trees` starts with (`#[…]` after `#[…]`) hold `#[cfg(test)]`:
/// a learner's or the reference's own tests are not the lesson's answer.
fn attributes_hold_cfg_test(trees: &[TokenTree]) -> bool {
    let mut at = 0;
    while let (Some(TokenTree::Punct(p)), Some(TokenTree::Group(g))) =
        (trees.get(at), trees.get(at + 1))
    {
        if p.as_char() != '#' || g.delimiter() != Delimiter::Bracket {
            return false;
        }
        if is_cfg_test(g) {
            return true;
        }
        at += 2;
    }
    false
}

/// Whether an attribute's bracket group is `cfg(test)`, read token by token (never through
/// `to_string`, which recurses as deep as the group nests: a learner's attribute may nest
/// thousands deep).
fn is_cfg_test(attribute: &proc_macro2::Group) -> bool {
    let inner: Vec<TokenTree> = attribute.stream().into_iter().take(3).collect();
    let [TokenTree::Ident(cfg), TokenTree::Group(args)] = &inner[..] else {
        return false;
    };
    if cfg != "cfg" || args.delimiter() != Delimiter::Parenthesis {
        return false;
    }
    let args: Vec<TokenTree> = args.stream().into_iter().take(2).collect();
    matches!(&args[..], [TokenTree::Ident(test)] if test == "test")
}

/// `stream`'s trees without doc comments (`#[doc = "…"]` and `#![doc = "…"]`, which is how
/// `proc-macro2` keeps `///` and `//!`).
fn without_docs(stream: TokenStream) -> Vec<TokenTree> {
    let trees: Vec<TokenTree> = stream.into_iter().collect();
    let is_doc = |tree: Option<&TokenTree>| match tree {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket => matches!(
            g.stream().into_iter().next(),
            Some(TokenTree::Ident(i)) if i == "doc"
        ),
        _ => false,
    };
    let mut out = Vec::with_capacity(trees.len());
    let mut i = 0;
    while i < trees.len() {
        if let TokenTree::Punct(p) = &trees[i] {
            if p.as_char() == '#' {
                let bang =
                    matches!(trees.get(i + 1), Some(TokenTree::Punct(q)) if q.as_char() == '!');
                let at = if bang { i + 2 } else { i + 1 };
                if is_doc(trees.get(at)) {
                    i = at + 1;
                    continue;
                }
            }
        }
        out.push(trees[i].clone());
        i += 1;
    }
    out
}

/// Appends `tree`'s tokens, as compared, to `out`. Groups are walked with a stack of
/// their own, not by recursion: a learner's file may nest brackets thousands deep, and the
/// grader's stack must not be what that reaches.
fn push(tree: &TokenTree, out: &mut Vec<Token>) {
    // Each frame: a group's remaining trees.
    let mut stack: Vec<std::vec::IntoIter<TokenTree>> = vec![vec![tree.clone()].into_iter()];
    while let Some(trees) = stack.last_mut() {
        let Some(tree) = trees.next() else {
            stack.pop();
            continue;
        };
        let line = line_of(&tree);
        let kind = match &tree {
            // `mut` is left out: every working answer adds it to parameters the stub leaves
            // without, so it would be shared by every pair (and a copier adds or drops it
            // for free).
            TokenTree::Ident(ident) if ident == "mut" => continue,
            TokenTree::Ident(ident) => {
                let text = ident.to_string();
                if is_keyword(text.trim_start_matches("r#")) {
                    text
                } else {
                    "id".to_string()
                }
            }
            TokenTree::Literal(literal) => {
                let text = literal.to_string();
                match text.chars().next() {
                    Some('"' | 'r') => "str",
                    Some('b') if text[1..].starts_with(['"', 'r']) => "str",
                    Some('\'') => "chr",
                    Some('b') => "chr",
                    _ => "num",
                }
                .to_string()
            }
            // A `;` or `,` is left out: empty statements and trailing commas are padding a
            // copier adds for free. Whether a punct is joint to the next is layout (`|w|*w`
            // against `|w| *w`), so it is not kept either.
            TokenTree::Punct(p) if matches!(p.as_char(), ';' | ',') => continue,
            TokenTree::Punct(p) => p.as_char().to_string(),
            // Brackets are left out too: extra parentheses, or braces around a match arm,
            // change no meaning and are free to add. The tokens inside are kept.
            TokenTree::Group(g) => {
                stack.push(without_docs(g.stream()).into_iter());
                continue;
            }
        };
        out.push(Token { kind, line });
    }
}

fn line_of(tree: &TokenTree) -> usize {
    tree.span().start().line
}

/// Rust's keywords (strict and reserved): they keep their own text as tokens.
fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "as" | "async"
            | "await"
            | "break"
            | "const"
            | "continue"
            | "crate"
            | "dyn"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "fn"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "pub"
            | "ref"
            | "return"
            | "self"
            | "Self"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "type"
            | "unsafe"
            | "use"
            | "where"
            | "while"
    )
}

/// The fingerprints winnowing keeps of one item's tokens.
fn winnow(tokens: &[Token]) -> Vec<(u64, usize, usize)> {
    if tokens.len() < K {
        return Vec::new();
    }
    let grams: Vec<(u64, usize, usize)> = tokens
        .windows(K)
        .map(|run| {
            let hash = run.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, t| {
                t.kind
                    .bytes()
                    .chain(std::iter::once(0))
                    .fold(h, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
            });
            let (first, last) = run.iter().fold((usize::MAX, 0), |(lo, hi), t| {
                (lo.min(t.line), hi.max(t.line))
            });
            (hash, first, last)
        })
        .collect();
    let mut kept = Vec::new();
    let mut last_kept: Option<usize> = None;
    let width = WINDOW.min(grams.len());
    for start in 0..=grams.len() - width {
        // The rightmost smallest hash of the window (Schleimer, Wilkerson and Aiken).
        let mut at = start;
        for j in start..start + width {
            if grams[j].0 <= grams[at].0 {
                at = j;
            }
        }
        if last_kept != Some(at) {
            kept.push(grams[at]);
            last_kept = Some(at);
        }
    }
    kept
}

/// The pairs as `similarity.csv`: a header, then one line a pair, most alike first.
pub(crate) fn csv(pairs: &[Pair]) -> String {
    let mut out = String::from("group,left,right,similarity,contained,regions\n");
    for pair in pairs {
        let _ = writeln!(
            out,
            "{},{},{},{:.2},{:.2},{}",
            super::gradebook::csv_field(&pair.lesson),
            super::gradebook::csv_field(&pair.left),
            super::gradebook::csv_field(&pair.right),
            pair.similarity,
            pair.contained,
            super::gradebook::csv_field(&pair.regions_text()),
        );
    }
    out
}

/// Groups of submissions, per lesson, linked by pairs alike at `at_least` or more (by
/// [`Pair::score`]): the connected sets, for a summary to name once each. Two members of a
/// set need not be alike themselves: a file that holds two classmates' answers links them.
pub(crate) fn clusters(pairs: &[Pair], at_least: f64) -> BTreeMap<String, Vec<BTreeSet<String>>> {
    // Union-find over each lesson's names: linear in the pairs, however large a set grows.
    let mut parent: BTreeMap<(String, String), (String, String)> = BTreeMap::new();
    fn root(
        parent: &mut BTreeMap<(String, String), (String, String)>,
        key: &(String, String),
    ) -> (String, String) {
        let mut at = key.clone();
        while let Some(up) = parent.get(&at).filter(|up| **up != at) {
            at = up.clone();
        }
        // Every node on the way points at the root from now on.
        let mut on = key.clone();
        while let Some(up) = parent.get(&on).cloned().filter(|up| *up != on) {
            parent.insert(on, at.clone());
            on = up;
        }
        at
    }
    for pair in pairs.iter().filter(|p| p.score() >= at_least) {
        let left = (pair.lesson.clone(), pair.left.clone());
        let right = (pair.lesson.clone(), pair.right.clone());
        parent.entry(left.clone()).or_insert_with(|| left.clone());
        parent.entry(right.clone()).or_insert_with(|| right.clone());
        let (a, b) = (root(&mut parent, &left), root(&mut parent, &right));
        if a != b {
            parent.insert(b, a);
        }
    }
    let mut sets: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let keys: Vec<(String, String)> = parent.keys().cloned().collect();
    for key in keys {
        let top = root(&mut parent, &key);
        sets.entry(top).or_default().insert(key.1);
    }
    let mut out: BTreeMap<String, Vec<BTreeSet<String>>> = BTreeMap::new();
    for ((lesson, _), set) in sets {
        out.entry(lesson).or_default().push(set);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGINAL: &str = r#"
/// Retries a request.
pub(crate) fn retry_request(attempts: u32, budget: u64) -> Result<u32, String> {
    let mut tried = 0;
    let mut waited = 0u64;
    loop {
        tried += 1;
        if tried >= attempts {
            return Err(format!("gave up after {tried}"));
        }
        let wait = backoff(tried);
        if waited + wait > budget {
            return Err("over budget".to_string());
        }
        waited += wait;
    }
}

fn backoff(attempt: u32) -> u64 {
    let base = 100u64;
    base.saturating_mul(2u64.saturating_pow(attempt)).min(5_000)
}
"#;

    /// ORIGINAL with every name changed, comments added, items reordered, laid out anew.
    const DISGUISED: &str = r#"
// my helper
fn delay_for(n: u32) -> u64 { let b = 100u64; b.saturating_mul(2u64.saturating_pow(n)).min(5_000) }

pub(crate) fn retry_request(max: u32, limit: u64) -> Result<u32, String> {
    let mut count = 0; // attempts so far
    let mut slept = 0u64;
    loop {
        count += 1;
        if count >= max { return Err(format!("stopped at {count}")); }
        let d = delay_for(count);
        if slept + d > limit { return Err("too long".to_string()); }
        slept += d;
    }
}
"#;

    const OTHER: &str = r#"
pub(crate) fn retry_request(attempts: u32, budget: u64) -> Result<u32, String> {
    for attempt in 1..=attempts {
        let delay = match attempt { 1 => 100, 2 => 200, _ => 400 };
        if u64::from(attempt) * delay > budget {
            break;
        }
    }
    Err(String::from("no luck"))
}
"#;

    const STUB: &str = "pub fn retry_request(attempts: u32, budget: u64) -> Result<u32, String> {\n    todo!()\n}\n";

    #[test]
    fn renamed_reordered_and_recommented_is_the_same() {
        let a = Fingerprints::of(ORIGINAL).unwrap();
        let b = Fingerprints::of(DISGUISED).unwrap();
        assert!(!a.is_empty());
        assert_eq!(a.set, b.set);
    }

    #[test]
    fn a_disguised_copy_ranks_above_an_independent_answer() {
        let files = vec![
            ("ana".to_string(), ORIGINAL.to_string()),
            ("bo".to_string(), DISGUISED.to_string()),
            ("cy".to_string(), OTHER.to_string()),
        ];
        let found = pairs("build3", &files, Some(("the-answer", OTHER)), STUB).pairs;
        assert_eq!(found[0].left, "ana");
        assert_eq!(found[0].right, "bo");
        assert!((found[0].similarity - 1.0).abs() < 1e-9, "{found:?}");
        // cy's file is the reference here: listed, as a copy of it.
        assert!(found
            .iter()
            .any(|p| p.left == "cy" && p.right == "the-answer" && p.similarity > 0.99));
        // ana and cy wrote the function independently: not listed, or far below.
        assert!(
            found
                .iter()
                .filter(|p| (p.left == "ana" && p.right == "cy")
                    || p.right == "the-answer" && p.left != "cy")
                .all(|p| p.similarity < 0.5),
            "{found:?}"
        );
    }

    #[test]
    fn the_stub_is_no_evidence() {
        let files = vec![
            ("ana".to_string(), STUB.to_string()),
            ("bo".to_string(), STUB.to_string()),
        ];
        assert_eq!(pairs("build3", &files, None, STUB), Compared::default());
    }

    #[test]
    fn regions_name_the_lines_on_both_sides() {
        let files = vec![
            ("ana".to_string(), ORIGINAL.to_string()),
            ("bo".to_string(), format!("\n\n\n{ORIGINAL}")),
        ];
        let found = pairs("build3", &files, None, "").pairs;
        let regions = &found[0].regions;
        assert!(!regions.is_empty());
        for (a, b, c, d) in regions {
            assert_eq!((a + 3, b + 3), (*c, *d), "{regions:?}");
        }
    }

    #[test]
    fn tests_are_no_part_of_the_answer() {
        let with_tests = format!(
            "{ORIGINAL}\n#[cfg(test)]\nmod tests {{\n    #[test]\n    fn t() {{ assert_eq!(super::backoff(1), 200); let x = [1, 2, 3]; assert!(x.iter().all(|v| *v > 0)); }}\n}}\n"
        );
        assert_eq!(
            Fingerprints::of(&with_tests).unwrap().set,
            Fingerprints::of(ORIGINAL).unwrap().set
        );
    }

    #[test]
    fn deep_nesting_is_read_without_recursion() {
        // 1 MiB of brackets, the most a lesson file may hold, in a thread with a small
        // stack: a recursive walk would overflow it (and abort the whole batch).
        let deep = 1 << 18;
        let source = format!(
            "fn f() {{ {}{} }}\n{}{}",
            "([".repeat(deep / 2),
            "])".repeat(deep / 2),
            "mod m { ".repeat(2_000),
            "}".repeat(2_000)
        );
        let found = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || Fingerprints::of(&source).map(|f| f.len()))
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert!(found.is_some_and(|n| n > 0));
    }

    #[test]
    fn a_copy_padded_with_other_code_is_still_listed() {
        // The reference answer of build3 pasted in among every other lesson's answer.
        let answer = include_str!("../../../reference/src/retry.rs");
        let padded = [
            include_str!("../../../reference/src/fetch.rs"),
            answer,
            include_str!("../../../reference/src/narrow.rs"),
            include_str!("../../../reference/src/gateway/lookup.rs"),
        ]
        .join("\n");
        let stub = include_str!("../../../exercises/build3/stub.rs");
        let files = vec![("pad".to_string(), padded)];
        let found = pairs(
            "build3",
            &files,
            Some(("reference/src/retry.rs", answer)),
            stub,
        )
        .pairs;
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].similarity < 0.5, "diluted: {found:?}");
        assert!(found[0].contained > 0.95, "{found:?}");
        assert!(found[0].score() > 0.95);
        assert_eq!(clusters(&found, 0.8)["build3"].len(), 1);
    }

    /// The reference answer of build3, as the kit ships it.
    const ANSWER: &str = include_str!("../../../reference/src/retry.rs");

    fn against_answer(file: &str) -> Option<f64> {
        similarity(
            file,
            ANSWER,
            include_str!("../../../exercises/build3/stub.rs"),
        )
    }

    #[test]
    fn what_rustc_skips_or_ignores_hides_no_copy() {
        // Red-team round: each of these passed every check and was in no pair.
        let shebang = format!("#! \"\n{ANSWER}");
        let generic = ANSWER.replacen(
            "pub fn retry_request<T>(",
            "pub fn retry_request<#[cfg(test)] 'hidden, T>(",
            1,
        );
        assert_ne!(generic, ANSWER);
        let padded = ANSWER
            .replace("    policy.validate()?;", "    ;;(policy.validate()?);;")
            .replace(
                "Ok(value) => return Ok(value),",
                "Ok(value) => { return (Ok(value)); },",
            )
            .replace(".min(policy.max_delay)", ".min((policy.max_delay),)");
        let bom = format!("\u{feff}{ANSWER}");
        for (what, file) in [
            ("a shebang line", shebang),
            ("#[cfg(test)] inside an item", generic),
            ("empty statements and extra brackets", padded),
            ("a byte-order mark", bom),
        ] {
            let score = against_answer(&file);
            assert!(score.is_some_and(|s| s > 0.95), "{what}: {score:?}");
        }
        // Layout alone, joint or not: `|w|*w` against `|w| * w`.
        let spaced = ANSWER.replace(">=", ">= ").replace("|w| *w", "|w|*w");
        assert!(against_answer(&spaced).is_some_and(|s| s > 0.99));
    }

    #[test]
    fn the_stubs_signature_with_mut_is_still_the_stubs() {
        // The lesson lets a learner add `mut` to the parameters; the stub has none.
        let stub = include_str!("../../../exercises/build3/stub.rs");
        let with_mut = stub
            .replace("    request: impl", "    mut request: impl")
            .replace("    sleep: impl", "    mut sleep: impl")
            .replace("    log: impl", "    mut log: impl");
        assert_ne!(with_mut, stub);
        let base = Fingerprints::of(stub).unwrap().set;
        let theirs = Fingerprints::of(&with_mut).unwrap().without(&base);
        assert!(
            theirs.is_empty(),
            "{} fingerprints beyond the stub",
            theirs.len()
        );
    }

    #[test]
    fn a_deeply_nested_attribute_is_read_without_recursion() {
        let deep = 20_000;
        let source = format!(
            "#[a{}{}]\nfn f() {{}}\n{ANSWER}",
            "(".repeat(deep),
            ")".repeat(deep)
        );
        let found = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || against_answer(&source))
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert!(found.is_some_and(|s| s > 0.9), "{found:?}");
    }

    #[test]
    fn repeated_lines_do_not_make_regions_quadratic() {
        // Two identical files of one line repeated: every mark has thousands of places.
        let table = format!("const T: [u8; 60000] = [{}];\n", "0, ".repeat(60_000));
        let files = vec![
            ("a".to_string(), format!("{table}{ANSWER}")),
            ("b".to_string(), format!("{table}{ANSWER}")),
        ];
        let started = std::time::Instant::now();
        let found = pairs("build3", &files, None, "").pairs;
        assert_eq!(found.len(), 1);
        // Quadratic took tens of seconds here; linear takes well under one.
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn unreadable_files_are_named() {
        let files = vec![
            ("ok".to_string(), ANSWER.to_string()),
            ("broken".to_string(), "fn f( {".to_string()),
        ];
        let found = pairs("build3", &files, None, "");
        assert_eq!(found.unread, ["broken"]);
    }

    #[test]
    fn unreadable_text_has_no_fingerprints() {
        assert!(Fingerprints::of("fn f( {").is_none());
    }

    #[test]
    fn clusters_join_pairs() {
        let pair = |l: &str, r: &str, s: f64| Pair {
            lesson: "g".into(),
            left: l.into(),
            right: r.into(),
            similarity: s,
            contained: 0.0,
            regions: vec![],
        };
        let found = clusters(
            &[
                pair("a", "b", 0.9),
                pair("c", "d", 0.95),
                pair("b", "c", 0.9),
                pair("e", "f", 0.4),
            ],
            0.8,
        );
        assert_eq!(
            found["g"],
            vec![["a", "b", "c", "d"]
                .iter()
                .map(|s| s.to_string())
                .collect::<BTreeSet<_>>()]
        );
    }
}
