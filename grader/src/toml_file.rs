//! Reading the kit's own TOML files (exercise metadata, help) with errors that name the file
//! and, for bad content, the line and column.

use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a TOML file of the kit could not be used.
#[derive(Debug, Error)]
pub enum TomlFileError {
    /// The file is missing or unreadable.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The content is not what the file must hold; the message names line and column.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
}

/// Reads and deserializes `path`.
pub(crate) fn read<T: DeserializeOwned>(path: &Path) -> Result<T, TomlFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| TomlFileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    toml::from_str(&text).map_err(|e| TomlFileError::Parse {
        path: path.to_path_buf(),
        message: e.to_string().trim_end().to_string(),
    })
}
