//! The kit's GET fetcher: one declared GET through an injected transport, with the reply
//! turned into the declared errors that [`retry_request`](crate::retry_request) understands.
//!
//! `retry_request` cannot look inside its `request` callback to see that it is safe to
//! repeat. Pairing it with this fetcher is what makes it so: the fetcher refuses anything
//! but GET, and it decides which replies are transient.
//!
//! | reply                                   | becomes                                      |
//! |-----------------------------------------|----------------------------------------------|
//! | transport timeout / connection failure  | transient `timeout` / `connection`           |
//! | 502, 503, 504                           | transient `server_error`                     |
//! | 429                                     | transient `rate_limited`, with Retry-After when it is delay-seconds |
//! | 400, 401, 403, 404                      | permanent `bad_request`, `unauthorized`, `forbidden`, `not_found` |
//! | 200 with a JSON body                    | `Ok(the parsed JSON)`                        |
//! | 200 with any other body                 | permanent `malformed_response`               |
//! | 500 and every other status              | permanent `unexpected`                       |
//!
//! Every error's `detail` keeps the raw context (the URL, the status, an excerpt of the
//! body) for the caller's debugging; no `Display` and no event ever shows it.

pub use kit_types::{HttpReply, TransportFailure};
use kit_types::{PermanentError, PermanentKind, RequestError, TransientError, TransientReason};

/// How much of a reply's body an error's `detail` keeps.
const BODY_EXCERPT: usize = 200;

/// Reads a Retry-After value as delay-seconds: one or more ASCII digits and nothing else
/// (RFC 9110, section 10.2.3). An HTTP-date, a fraction, a sign or any other text is not
/// supported and gives `None`.
///
/// ```
/// use reference::fetch::parse_retry_after;
/// assert_eq!(parse_retry_after("3"), Some(3.0));
/// assert_eq!(parse_retry_after(" 120 "), Some(120.0));
/// assert_eq!(parse_retry_after("1.5"), None);
/// assert_eq!(parse_retry_after("-1"), None);
/// assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
/// ```
pub fn parse_retry_after(value: &str) -> Option<f64> {
    // Surrounding spaces and tabs are not part of a field value.
    let digits = value.trim_matches([' ', '\t']);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Any run of digits parses as a finite f64 (a huge one simply exceeds every budget).
    digits.parse::<f64>().ok()
}

/// Performs one declared GET of `url` through `transport` and classifies the outcome.
///
/// A `method` other than exactly `"GET"` is refused before the transport is called, as a
/// permanent `bad_request` with no status: this fetcher is only for reads that are safe to
/// repeat.
///
/// ```
/// use reference::fetch::{fetch, HttpReply};
/// use reference::{RequestError, TransientReason};
///
/// let ok = fetch("GET", "https://api.example/jobs/3", |_url| Ok(HttpReply::new(200, r#"{"state":"done"}"#)));
/// assert_eq!(ok.unwrap()["state"], "done");
///
/// let slow_down = fetch("GET", "https://api.example/jobs/3", |_url| {
///     Ok(HttpReply::new(429, "").with_header("Retry-After", "2"))
/// });
/// let Err(RequestError::Transient(e)) = slow_down else { panic!() };
/// assert_eq!((e.reason, e.retry_after), (TransientReason::RateLimited, Some(2.0)));
/// ```
pub fn fetch(
    method: &str,
    url: &str,
    transport: impl FnOnce(&str) -> Result<HttpReply, TransportFailure>,
) -> Result<serde_json::Value, RequestError> {
    if method != kit_types::policy::RETRYABLE_METHOD {
        return Err(PermanentError::new(PermanentKind::BadRequest)
            .with_detail(format!("refused {method} {url}: only GET is fetched"))
            .into());
    }
    let reply = match transport(url) {
        Ok(reply) => reply,
        Err(failure) => {
            let reason = match failure {
                TransportFailure::Timeout => TransientReason::Timeout,
                TransportFailure::Connection => TransientReason::Connection,
            };
            return Err(TransientError::new(reason)
                .with_detail(format!("GET {url}: {failure:?}"))
                .into());
        }
    };
    classify(url, reply)
}

fn classify(url: &str, reply: HttpReply) -> Result<serde_json::Value, RequestError> {
    let detail = || {
        let excerpt: String = reply.body.chars().take(BODY_EXCERPT).collect();
        format!("GET {url} -> {}: {excerpt}", reply.status)
    };
    let permanent = |kind| -> Result<serde_json::Value, RequestError> {
        Err(PermanentError::new(kind)
            .with_status(reply.status)
            .with_detail(detail())
            .into())
    };
    let transient = |reason| TransientError::new(reason).with_detail(detail());
    match reply.status {
        200 => serde_json::from_str(&reply.body)
            .or_else(|_| permanent(PermanentKind::MalformedResponse)),
        502..=504 => Err(transient(TransientReason::ServerError).into()),
        429 => {
            let mut e = transient(TransientReason::RateLimited);
            e.retry_after = reply.header("Retry-After").and_then(parse_retry_after);
            Err(e.into())
        }
        400 => permanent(PermanentKind::BadRequest),
        401 => permanent(PermanentKind::Unauthorized),
        403 => permanent(PermanentKind::Forbidden),
        404 => permanent(PermanentKind::NotFound),
        _ => permanent(PermanentKind::Unexpected),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(reply: HttpReply) -> Result<serde_json::Value, RequestError> {
        fetch("GET", "https://api.example/x?token=secret", |_| Ok(reply))
    }

    fn reason(r: Result<serde_json::Value, RequestError>) -> TransientError {
        match r {
            Err(RequestError::Transient(e)) => e,
            other => panic!("expected transient, got {other:?}"),
        }
    }

    fn kind(r: Result<serde_json::Value, RequestError>) -> (PermanentKind, Option<u16>) {
        match r {
            Err(RequestError::Permanent(p)) => (p.kind, p.status),
            other => panic!("expected permanent, got {other:?}"),
        }
    }

    #[test]
    fn statuses_are_classified() {
        for s in [502, 503, 504] {
            assert_eq!(
                reason(get(HttpReply::new(s, ""))).reason,
                TransientReason::ServerError
            );
        }
        assert_eq!(
            kind(get(HttpReply::new(400, ""))),
            (PermanentKind::BadRequest, Some(400))
        );
        assert_eq!(
            kind(get(HttpReply::new(401, ""))),
            (PermanentKind::Unauthorized, Some(401))
        );
        assert_eq!(
            kind(get(HttpReply::new(403, ""))),
            (PermanentKind::Forbidden, Some(403))
        );
        assert_eq!(
            kind(get(HttpReply::new(404, ""))),
            (PermanentKind::NotFound, Some(404))
        );
        for s in [500, 201, 204, 301, 418, 501, 505] {
            assert_eq!(
                kind(get(HttpReply::new(s, "{}"))),
                (PermanentKind::Unexpected, Some(s))
            );
        }
        assert_eq!(
            kind(get(HttpReply::new(200, "<html>oops</html>"))),
            (PermanentKind::MalformedResponse, Some(200))
        );
        assert_eq!(
            get(HttpReply::new(200, "[1,2]")).unwrap(),
            serde_json::json!([1, 2])
        );
    }

    #[test]
    fn retry_after_only_as_delay_seconds() {
        let wait = |v: &str| {
            reason(get(HttpReply::new(429, "").with_header("retry-after", v))).retry_after
        };
        assert_eq!(wait("3"), Some(3.0));
        assert_eq!(wait("0"), Some(0.0));
        assert_eq!(wait("99999999999999999999999"), Some(1e23));
        for unsupported in [
            "",
            "1.5",
            "+3",
            "-3",
            "3s",
            "Fri, 31 Dec 1999 23:59:59 GMT",
            "nan",
            "inf",
        ] {
            assert_eq!(wait(unsupported), None, "{unsupported:?}");
        }
        assert_eq!(reason(get(HttpReply::new(429, ""))).retry_after, None);
        assert_eq!(
            reason(get(HttpReply::new(503, "").with_header("Retry-After", "3"))).retry_after,
            None
        );
    }

    #[test]
    fn transport_failures_are_transient() {
        let t = |f| reason(fetch("GET", "u", |_| Err(f))).reason;
        assert_eq!(t(TransportFailure::Timeout), TransientReason::Timeout);
        assert_eq!(t(TransportFailure::Connection), TransientReason::Connection);
    }

    #[test]
    fn only_get_is_sent() {
        let mut sent = false;
        let r = fetch("POST", "u", |_| {
            sent = true;
            Ok(HttpReply::new(200, "{}"))
        });
        assert!(!sent);
        assert_eq!(kind(r), (PermanentKind::BadRequest, None));
    }

    #[test]
    fn detail_keeps_context_and_display_hides_it() {
        let Err(e) = get(HttpReply::new(401, "token=secret rejected")) else {
            panic!()
        };
        let RequestError::Permanent(p) = &e else {
            panic!()
        };
        assert!(p.detail.contains("token=secret rejected") && p.detail.contains("api.example"));
        assert!(!e.to_string().contains("secret"));
    }
}
