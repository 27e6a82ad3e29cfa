//! What one attempt of a request may fail with.
//!
//! A request callback declares its failures: [`TransientError`] for failures that another
//! attempt may fix, [`PermanentError`] for failures that repeating cannot fix. Both carry a
//! `detail` with raw context for the caller's own debugging; it is deliberately left out of
//! every `Display` text and every event, because it may hold private data.

use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// Why one attempt failed in a way that may be worth repeating.
///
/// Serialized in snake_case: `"timeout"`, `"connection"`, `"server_error"`, `"rate_limited"`.
///
/// ```
/// use kit_types::TransientReason;
/// assert_eq!(TransientReason::ServerError.to_string(), "server_error");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransientReason {
    /// The attempt ran out of time before a reply arrived.
    Timeout,
    /// No connection could be made, or it broke.
    Connection,
    /// The server said it failed (502, 503, 504).
    ServerError,
    /// The server asked the client to slow down (429).
    RateLimited,
}

impl TransientReason {
    /// Every reason, in declaration order: handy for tables and exhaustive tests.
    pub const ALL: [TransientReason; 4] = [
        TransientReason::Timeout,
        TransientReason::Connection,
        TransientReason::ServerError,
        TransientReason::RateLimited,
    ];

    /// The serialized name, e.g. `"server_error"`.
    pub fn as_str(self) -> &'static str {
        match self {
            TransientReason::Timeout => "timeout",
            TransientReason::Connection => "connection",
            TransientReason::ServerError => "server_error",
            TransientReason::RateLimited => "rate_limited",
        }
    }
}

impl fmt::Display for TransientReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A declared transient failure of one attempt.
///
/// ```
/// use kit_types::{TransientError, TransientReason};
/// let e = TransientError::new(TransientReason::RateLimited)
///     .with_retry_after(1.5)
///     .with_detail("GET /jobs/7?token=secret");
/// assert_eq!(e.retry_after, Some(1.5));
/// assert!(!e.to_string().contains("secret"));
/// ```
#[derive(Debug, Clone, PartialEq, Error)]
#[error("transient failure: {reason}")]
pub struct TransientError {
    /// The controlled category of the failure.
    pub reason: TransientReason,
    /// Seconds the server asked the client to wait (Retry-After delay-seconds), if it said.
    pub retry_after: Option<f64>,
    /// Raw context (URL, body excerpt...). May hold private text: it is never logged,
    /// never part of an event, never part of any `Display`.
    pub detail: String,
}

impl TransientError {
    /// A failure with no server wait and no detail.
    pub fn new(reason: TransientReason) -> Self {
        TransientError {
            reason,
            retry_after: None,
            detail: String::new(),
        }
    }

    /// Records the wait the server asked for, in seconds.
    pub fn with_retry_after(mut self, secs: f64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    /// Attaches raw context for the caller's own debugging.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
    }
}

/// What kind of failure repeating will not fix. Serialized in snake_case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermanentKind {
    /// 401: the credentials were refused.
    Unauthorized,
    /// 403: the credentials are valid but not allowed here.
    Forbidden,
    /// 404: the server is reachable and the thing is not there.
    NotFound,
    /// 400: the request itself is wrong.
    BadRequest,
    /// A reply that does not have the declared shape.
    MalformedResponse,
    /// Any other reply this client does not know how to handle.
    Unexpected,
}

impl PermanentKind {
    /// Every kind, in declaration order.
    pub const ALL: [PermanentKind; 6] = [
        PermanentKind::Unauthorized,
        PermanentKind::Forbidden,
        PermanentKind::NotFound,
        PermanentKind::BadRequest,
        PermanentKind::MalformedResponse,
        PermanentKind::Unexpected,
    ];

    /// The serialized name, e.g. `"not_found"`.
    pub fn as_str(self) -> &'static str {
        match self {
            PermanentKind::Unauthorized => "unauthorized",
            PermanentKind::Forbidden => "forbidden",
            PermanentKind::NotFound => "not_found",
            PermanentKind::BadRequest => "bad_request",
            PermanentKind::MalformedResponse => "malformed_response",
            PermanentKind::Unexpected => "unexpected",
        }
    }
}

impl fmt::Display for PermanentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A declared failure that another attempt will not fix.
///
/// ```
/// use kit_types::{PermanentError, PermanentKind};
/// let e = PermanentError::new(PermanentKind::NotFound).with_status(404);
/// assert_eq!(e.to_string(), "permanent failure: not_found (status 404)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct PermanentError {
    /// The controlled category of the failure.
    pub kind: PermanentKind,
    /// The HTTP status that carried it, if there was one.
    pub status: Option<u16>,
    /// Raw context; never part of `Display`.
    pub detail: String,
}

impl PermanentError {
    /// A failure with no status and no detail.
    pub fn new(kind: PermanentKind) -> Self {
        PermanentError {
            kind,
            status: None,
            detail: String::new(),
        }
    }

    /// Records the HTTP status that carried the failure.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Attaches raw context for the caller's own debugging.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
    }
}

impl fmt::Display for PermanentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "permanent failure: {}", self.kind)?;
        if let Some(status) = self.status {
            write!(f, " (status {status})")?;
        }
        Ok(())
    }
}

/// What one call of a request callback may fail with.
///
/// ```
/// use kit_types::{RequestError, TransientError, TransientReason};
/// let e: RequestError = TransientError::new(TransientReason::Timeout).into();
/// assert!(matches!(e, RequestError::Transient(_)));
/// ```
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RequestError {
    /// Another attempt may succeed.
    #[error(transparent)]
    Transient(#[from] TransientError),
    /// Another attempt will fail the same way.
    #[error(transparent)]
    Permanent(#[from] PermanentError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_serialize_snake_case() {
        let names: Vec<String> = TransientReason::ALL
            .iter()
            .map(|r| serde_json::to_string(r).unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "\"timeout\"",
                "\"connection\"",
                "\"server_error\"",
                "\"rate_limited\""
            ]
        );
        for r in TransientReason::ALL {
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{r}\""));
        }
        for k in PermanentKind::ALL {
            assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{k}\""));
        }
    }

    #[test]
    fn display_never_shows_detail() {
        let t = RequestError::from(
            TransientError::new(TransientReason::Timeout).with_detail("token=hunter2"),
        );
        let p = RequestError::from(
            PermanentError::new(PermanentKind::Unauthorized)
                .with_status(401)
                .with_detail("token=hunter2"),
        );
        assert_eq!(t.to_string(), "transient failure: timeout");
        assert_eq!(
            p.to_string(),
            "permanent failure: unauthorized (status 401)"
        );
    }
}
