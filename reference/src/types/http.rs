//! What one HTTP exchange gives a client: a reply, or no reply at all.
//!
//! These are the inputs of the kit's GET fetcher (the build2 lesson) and of the stage 8
//! gateway's provider.

use serde::{Deserialize, Serialize};

/// What the transport received: a status, headers and a body.
///
/// ```
/// use kit_types::HttpReply;
/// let reply = HttpReply::new(429, "").with_header("retry-after", "3");
/// assert_eq!(reply.header("Retry-After"), Some("3"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpReply {
    /// The HTTP status code.
    pub status: u16,
    /// Header names and values, in the order received. Names compare case-insensitively.
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub body: String,
}

impl HttpReply {
    /// A reply with `status` and `body` and no headers.
    pub fn new(status: u16, body: impl Into<String>) -> Self {
        HttpReply {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// Adds a header.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The first value of header `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why the transport got no reply at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportFailure {
    /// No reply in time.
    Timeout,
    /// No connection, or it broke.
    Connection,
}

impl TransportFailure {
    /// The serialized name: `"timeout"` or `"connection"`.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportFailure::Timeout => "timeout",
            TransportFailure::Connection => "connection",
        }
    }
}

impl std::fmt::Display for TransportFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
