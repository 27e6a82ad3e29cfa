//! Course help in graded levels, read from `exercises/LESSON/help.toml`.
//!
//! Help is guidance: the command that shows it records it in the guidance log first
//! (see [`crate::guidance`]).

use serde::{Deserialize, Serialize};
use std::path::Path;
use thiserror::Error;

/// The help file in each exercise folder.
pub(crate) const HELP_FILE: &str = "help.toml";

/// One level of help.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Level {
    /// A one-word name: `refresher`, `approach`, `repair`.
    pub(crate) name: String,
    /// The text, in Markdown.
    pub(crate) text: String,
    /// Left out of this copy of the kit (one without the answers, where a level that walks
    /// through the answer is withheld): `text` says so, and the level is never shown nor
    /// recorded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) withheld: bool,
}

/// An exercise's help, from the gentlest level to the most specific.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Help {
    /// Level 1 first.
    pub(crate) levels: Vec<Level>,
}

/// Why help could not be shown.
#[derive(Debug, Error)]
pub(crate) enum HelpError {
    /// The help file is missing, unreadable or not valid.
    #[error(transparent)]
    File(#[from] crate::toml_file::TomlFileError),
    /// There is no such level.
    #[error("there is no help level {asked}: levels go from 1 to {available}")]
    NoLevel {
        /// The level asked for.
        asked: usize,
        /// How many there are.
        available: usize,
    },
    /// The level is withheld from this copy of the kit.
    #[error("help level {number} ({name}) is not in this copy of the kit: {why}")]
    Withheld {
        /// The level asked for.
        number: usize,
        /// Its name.
        name: String,
        /// Its text, which says why.
        why: String,
    },
}

impl Help {
    /// Reads `help.toml` from an exercise folder.
    pub(crate) fn load(exercise_dir: &Path) -> Result<Help, HelpError> {
        Ok(crate::toml_file::read(&exercise_dir.join(HELP_FILE))?)
    }

    /// Level `n` (1-based), unless it is withheld from this copy of the kit.
    pub(crate) fn level(&self, n: usize) -> Result<&Level, HelpError> {
        let level =
            n.checked_sub(1)
                .and_then(|i| self.levels.get(i))
                .ok_or(HelpError::NoLevel {
                    asked: n,
                    available: self.levels.len(),
                })?;
        if level.withheld {
            return Err(HelpError::Withheld {
                number: n,
                name: level.name.clone(),
                why: level.text.trim().to_string(),
            });
        }
        Ok(level)
    }
}

#[cfg(test)]
mod tests {
    /// What the item's documentation once showed as an example.
    #[test]
    fn help_levels_are_numbered_from_one() {
        let help: crate::help::Help = toml::from_str(
            r#"
            [[levels]]
            name = "refresher"
            text = "A retry is a second request."
        "#,
        )
        .unwrap();
        assert_eq!(help.level(1).unwrap().name, "refresher");
        assert!(help.level(2).is_err());
    }

    #[test]
    fn a_withheld_level_is_refused_with_its_reason_and_the_others_are_shown() {
        let help: crate::help::Help = toml::from_str(
            r#"
            [[levels]]
            name = "refresher"
            text = "A retry is a second request."
            [[levels]]
            name = "approach"
            text = "not here: ask your instructor."
            withheld = true
            [[levels]]
            name = "repair"
            text = "Count attempts, not retries."
        "#,
        )
        .unwrap();
        assert_eq!(help.level(1).unwrap().name, "refresher");
        assert_eq!(help.level(3).unwrap().name, "repair");
        let refused = help.level(2).unwrap_err().to_string();
        assert_eq!(
            refused,
            "help level 2 (approach) is not in this copy of the kit: not here: ask your instructor."
        );
        // Written back as the bundle writes it, the mark stays; a level without it has none.
        let text = toml::to_string(&help).unwrap();
        assert_eq!(text.matches("withheld = true").count(), 1, "{text}");
        let again: crate::help::Help = toml::from_str(&text).unwrap();
        assert_eq!(again, help);
    }
}
