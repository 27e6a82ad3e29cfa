//! The situations build2's lesson asks the learner's own scenario files to cover ("Show it
//! works on new inputs"), each recognised in a parsed [`FetchScenario`]. Their words are in
//! `exercises/build2/info.toml`, under the same ids.

use super::call::{Call, Exchange};
use super::scenario::FetchScenario;
use crate::scenario::delay_seconds;
use crate::scenario::Situation;
use kit_types::HttpReply;

/// The lesson's situations, in its order.
pub(crate) const SITUATIONS: &[Situation<FetchScenario>] = &[
    Situation {
        id: "json_array_or_scalar_200",
        covered_by: json_array_or_scalar_200,
    },
    Situation {
        id: "retry_after_twice",
        covered_by: retry_after_twice,
    },
    Situation {
        id: "unlisted_status_json_body",
        covered_by: unlisted_status_json_body,
    },
    Situation {
        id: "almost_get_method",
        covered_by: almost_get_method,
    },
];

/// The statuses the lesson's table declares, each with its own declaration (500 and every
/// other status are "unexpected").
const LISTED: [u16; 9] = [200, 400, 401, 403, 404, 429, 502, 503, 504];

/// The replies the transport gives to calls that reach it (exactly `"GET"`).
fn sent_replies(scenario: &FetchScenario) -> impl Iterator<Item = &HttpReply> {
    scenario
        .calls
        .iter()
        .filter(|c| c.method == "GET")
        .filter_map(|c: &Call| match &c.exchange {
            Exchange::Reply(r) => Some(r),
            Exchange::Fails(_) => None,
        })
}

fn json(body: &str) -> Option<serde_json::Value> {
    serde_json::from_str(body).ok()
}

/// A GET answered 200 whose body is JSON but not an object: an array or a bare scalar.
fn json_array_or_scalar_200(scenario: &FetchScenario) -> bool {
    sent_replies(scenario).any(|r| r.status == 200 && json(&r.body).is_some_and(|v| !v.is_object()))
}

/// A GET answered 429 with two or more Retry-After headers, the first not delay-seconds.
fn retry_after_twice(scenario: &FetchScenario) -> bool {
    sent_replies(scenario).any(|r| {
        let values: Vec<&str> = r
            .headers
            .iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case("retry-after"))
            .map(|(_, value)| value.as_str())
            .collect();
        r.status == 429 && values.len() >= 2 && delay_seconds(values[0]).is_none()
    })
}

/// A GET answered with a status the table does not list (500 included) and a JSON body.
fn unlisted_status_json_body(scenario: &FetchScenario) -> bool {
    sent_replies(scenario).any(|r| !LISTED.contains(&r.status) && json(&r.body).is_some())
}

/// A call whose method is not exactly `"GET"` but nearly: another case or spaces around it
/// (`"get"`, `"GET "`), or `"HEAD"`, the other read-only fetch.
fn almost_get_method(scenario: &FetchScenario) -> bool {
    scenario.calls.iter().any(|c| {
        c.method != "GET"
            && (c.method.trim().eq_ignore_ascii_case("GET")
                || c.method.trim().eq_ignore_ascii_case("HEAD"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::covered;
    use std::path::Path;

    /// The situations a build2 scenario of these calls covers.
    fn covers(calls: &str) -> Vec<&'static str> {
        let text = format!("exercise = \"build2\"\n{calls}");
        covered(&FetchScenario::parse(Path::new("s.toml"), &text).unwrap())
    }

    #[test]
    fn a_200_with_an_array_or_a_scalar_and_not_an_object() {
        for body in ["[1, 2]", "42", "null"] {
            let call = format!("[[call]]\nreply = {{ status = 200, body = '{body}' }}\n");
            assert_eq!(covers(&call), ["json_array_or_scalar_200"], "{body}");
        }
        assert!(covers("[[call]]\nreply = { status = 200, body = '{\"a\": 1}' }\n").is_empty());
        assert!(covers("[[call]]\nreply = { status = 200, body = '<html>' }\n").is_empty());
        // Refused before it is sent: the transport's reply is never read.
        assert!(
            !covers("[[call]]\nmethod = \"POST\"\nreply = { status = 200, body = '[1]' }\n")
                .contains(&"json_array_or_scalar_200")
        );
    }

    #[test]
    fn a_429_with_two_retry_afters_the_first_not_seconds() {
        let call = "[[call]]\nreply = { status = 429, headers = [[\"Retry-After\", \"soon\"], [\"retry-after\", \"3\"]] }\n";
        assert_eq!(covers(call), ["retry_after_twice"]);
        let both_seconds = "[[call]]\nreply = { status = 429, headers = [[\"Retry-After\", \"2\"], [\"Retry-After\", \"3\"]] }\n";
        assert!(covers(both_seconds).is_empty());
        let once = "[[call]]\nreply = { status = 429, headers = [[\"Retry-After\", \"soon\"]] }\n";
        assert!(covers(once).is_empty());
    }

    #[test]
    fn an_unlisted_status_with_a_json_body() {
        for status in [204, 301, 500] {
            let call =
                format!("[[call]]\nreply = {{ status = {status}, body = '{{\"e\": 1}}' }}\n");
            assert_eq!(covers(&call), ["unlisted_status_json_body"], "{status}");
        }
        assert!(covers("[[call]]\nreply = { status = 503, body = '{\"e\": 1}' }\n").is_empty());
        assert!(covers("[[call]]\nreply = { status = 500, body = 'oops' }\n").is_empty());
    }

    #[test]
    fn a_method_that_is_almost_get() {
        for method in ["get", "GET ", "HEAD"] {
            let call = format!("[[call]]\nmethod = \"{method}\"\ntransport = \"timeout\"\n");
            assert_eq!(covers(&call), ["almost_get_method"], "{method:?}");
        }
        assert!(covers("[[call]]\nmethod = \"GET\"\ntransport = \"timeout\"\n").is_empty());
        assert!(covers("[[call]]\nmethod = \"POST\"\ntransport = \"timeout\"\n").is_empty());
    }
}
