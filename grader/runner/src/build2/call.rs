//! One call of a fetcher on a scripted exchange: what the transport was asked, and what the
//! fetcher returned.

use crate::secs::same_secs;
use kit_types::graded::{FetchFn, Transport};
use kit_types::{HttpReply, RequestError, TransportFailure};
use serde_json::Value;
use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};

/// What the transport does when it is called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exchange {
    /// A reply arrives.
    Reply(HttpReply),
    /// No reply.
    Fails(TransportFailure),
}

/// One call of `fetch`: its arguments and what the transport does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The method argument.
    pub method: String,
    /// The URL argument.
    pub url: String,
    /// What the transport does.
    pub exchange: Exchange,
}

/// The URL every check and scenario fetches unless it says otherwise.
pub const URL: &str = "https://api.example/jobs/3";

impl Call {
    /// A GET of [`URL`] answered by `reply`.
    pub fn get(reply: HttpReply) -> Self {
        Call {
            method: "GET".into(),
            url: URL.into(),
            exchange: Exchange::Reply(reply),
        }
    }

    /// A GET of [`URL`] that gets no reply.
    pub fn failing(failure: TransportFailure) -> Self {
        Call {
            method: "GET".into(),
            url: URL.into(),
            exchange: Exchange::Fails(failure),
        }
    }

    /// The same call with another method.
    pub fn with_method(mut self, method: &str) -> Self {
        self.method = method.into();
        self
    }

    /// The call as people read it: `GET https://… → 429, Retry-After: "3", body ""`.
    pub fn describe(&self) -> String {
        format!(
            "{:?} {} → transport {}",
            self.method,
            self.url,
            describe_exchange(&self.exchange)
        )
    }
}

/// What the transport does, every field: `replies 429, headers [Retry-After: "3"], body ""`.
pub fn describe_exchange(exchange: &Exchange) -> String {
    match exchange {
        Exchange::Fails(f) => format!("fails: {f}"),
        Exchange::Reply(r) => {
            let headers: Vec<String> = r
                .headers
                .iter()
                .map(|(n, v)| format!("{n}: {v:?}"))
                .collect();
            format!(
                "replies {}, headers [{}], body {}",
                r.status,
                headers.join(", "),
                excerpt(&r.body, 80)
            )
        }
    }
}

/// `text` quoted, cut to `max` characters with a note of the length.
pub fn excerpt(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        format!("{text:?}")
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut:?}… ({count} characters)")
    }
}

/// What a call did.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The URL of each call of the transport, in order.
    pub transport_calls: Vec<String>,
    /// What `fetch` returned.
    pub result: Result<Value, RequestError>,
}

/// Runs `learner` on `call`. A panic of the fetcher is returned as its payload, for the
/// caller to judge.
pub fn record(learner: FetchFn, call: &Call) -> Result<Recorded, Box<dyn std::any::Any + Send>> {
    let calls = RefCell::new(Vec::new());
    let exchange = call.exchange.clone();
    let transport: Transport<'_> = Box::new(|url: &str| {
        calls.borrow_mut().push(url.to_string());
        match exchange {
            Exchange::Reply(reply) => Ok(reply),
            Exchange::Fails(failure) => Err(failure),
        }
    });
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        learner(&call.method, &call.url, transport)
    }))?;
    Ok(Recorded {
        transport_calls: calls.into_inner(),
        result,
    })
}

/// A result as the lesson speaks of it: `Ok({"state":"done"})`,
/// `transient rate_limited, retry_after 3.0`, `permanent not_found, status 404`.
pub fn describe_result(result: &Result<Value, RequestError>) -> String {
    match result {
        Ok(v) => format!("Ok({v})"),
        Err(RequestError::Transient(t)) => match t.retry_after {
            Some(w) => format!("transient {}, retry_after {w:?}", t.reason),
            None => format!("transient {}, no retry_after", t.reason),
        },
        Err(RequestError::Permanent(p)) => match p.status {
            Some(s) => format!("permanent {}, status {s}", p.kind),
            None => format!("permanent {}, no status", p.kind),
        },
    }
}

/// Whether two results are the same in every declared field (`detail` is free text and is
/// not compared).
pub fn same_result(a: &Result<Value, RequestError>, b: &Result<Value, RequestError>) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => x == y,
        (Err(RequestError::Transient(x)), Err(RequestError::Transient(y))) => {
            x.reason == y.reason
                && match (x.retry_after, y.retry_after) {
                    (Some(p), Some(q)) => same_secs(p, q),
                    (p, q) => p.is_none() && q.is_none(),
                }
        }
        (Err(RequestError::Permanent(x)), Err(RequestError::Permanent(y))) => {
            x.kind == y.kind && x.status == y.status
        }
        _ => false,
    }
}
