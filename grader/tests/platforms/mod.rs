//! The platforms' own rules for the results files the kit writes, as validators that report
//! every problem they find. Written from the platforms' documentation (see
//! `docs/report-formats.md`), not from the kit's writers, and shared by the tests of the
//! report writers (`reports.rs`) and of the autograder bundles (`bundles.rs`); the tests in
//! `reports.rs` feed them broken documents, so a validator that accepts everything fails.
#![allow(dead_code)] // each test module uses its own subset

use serde_json::Value;

// ======================================================================================
// Exercism (interface.md: results.json version 3)
// ======================================================================================

pub const EXERCISM_OUTPUT_NOTICE: &str = "Output was truncated. Please limit to 500 chars";

/// The platform's rules for `results.json`; returns every problem found.
pub fn exercism_problems(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut bad = |p: String| problems.push(p);
    if text.len() > 500_000 {
        bad(format!("results.json is {} bytes, over 500 KB", text.len()));
    }
    let Ok(doc) = serde_json::from_str::<Value>(text) else {
        return vec!["not JSON".into()];
    };
    let Some(top) = doc.as_object() else {
        return vec!["not an object".into()];
    };
    for key in top.keys() {
        if !["version", "status", "message", "tests"].contains(&key.as_str()) {
            bad(format!("unknown top-level key {key}"));
        }
    }
    if top.get("version").and_then(Value::as_u64) != Some(3) {
        bad(format!(
            "version must be the number 3: {:?}",
            top.get("version")
        ));
    }
    let status = top.get("status").and_then(Value::as_str).unwrap_or("");
    if !["pass", "fail", "error"].contains(&status) {
        bad(format!("status {status:?} is not pass, fail or error"));
    }
    match top.get("message") {
        None | Some(Value::Null) if status == "error" => bad("error without a message".into()),
        None | Some(Value::Null) => {}
        Some(Value::String(m)) => {
            if status != "error" {
                bad("message set when status is not error (v3)".into());
            }
            if m.trim().is_empty() {
                bad("empty message".into());
            }
            if m.chars().count() > 65_535 {
                bad(format!("message has {} characters", m.chars().count()));
            }
        }
        Some(other) => bad(format!("message is not a string or null: {other}")),
    }
    let tests = match top.get("tests") {
        None | Some(Value::Null) => {
            if status != "error" {
                bad(format!("tests missing with status {status}"));
            }
            Vec::new()
        }
        Some(Value::Array(tests)) => tests.clone(),
        Some(other) => {
            bad(format!("tests is not an array: {other}"));
            Vec::new()
        }
    };
    if status == "error" && !tests.is_empty() {
        bad("status error, yet tests ran".into());
    }
    let mut statuses = Vec::new();
    for (i, t) in tests.iter().enumerate() {
        let Some(t) = t.as_object() else {
            bad(format!("test {i} is not an object"));
            continue;
        };
        for key in t.keys() {
            let known = [
                "name",
                "test_code",
                "status",
                "message",
                "output",
                "task_id",
            ];
            if !known.contains(&key.as_str()) {
                bad(format!("test {i}: unknown key {key}"));
            }
        }
        match t.get("name").and_then(Value::as_str) {
            Some(n) if !n.is_empty() => {}
            _ => bad(format!("test {i}: name missing")),
        }
        match t.get("test_code") {
            None | Some(Value::String(_)) => {}
            Some(other) => bad(format!("test {i}: test_code is not a string: {other}")),
        }
        let st = t.get("status").and_then(Value::as_str).unwrap_or("");
        if !["pass", "fail", "error"].contains(&st) {
            bad(format!("test {i}: status {st:?}"));
        }
        statuses.push(st.to_string());
        match t.get("message") {
            Some(Value::String(m)) if !m.is_empty() => {}
            None | Some(Value::Null) if st == "pass" => {}
            Some(Value::String(_)) if st == "pass" => {}
            other => bad(format!("test {i} ({st}): message is {other:?}")),
        }
        match t.get("output") {
            None | Some(Value::Null) => {}
            Some(Value::String(o)) => {
                if o.chars().count() > 500 {
                    bad(format!("test {i}: output has {} chars", o.chars().count()));
                }
            }
            Some(other) => bad(format!("test {i}: output is not a string: {other}")),
        }
        match t.get("task_id") {
            None => {}
            Some(v) if v.as_u64().is_some_and(|n| n >= 1) => {}
            Some(other) => bad(format!(
                "test {i}: task_id {other} is not a positive integer"
            )),
        }
    }
    let all_pass = statuses.iter().all(|s| s == "pass");
    if status == "pass" && !all_pass {
        bad("status pass, but not every test passed".into());
    }
    if status == "fail" && all_pass {
        bad("status fail, but every test passed".into());
    }
    problems
}

// ======================================================================================
// Gradescope (specs.md: results.json)
// ======================================================================================

pub const VISIBILITIES: [&str; 4] = ["hidden", "after_due_date", "after_published", "visible"];
pub const TEXT_FORMATS: [&str; 5] = ["text", "html", "simple_format", "md", "ansi"];

/// Gradescope's rules for `results.json`; returns every problem found.
pub fn gradescope_problems(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut bad = |p: String| problems.push(p);
    let Ok(doc) = serde_json::from_str::<Value>(text) else {
        return vec!["not JSON".into()];
    };
    let Some(top) = doc.as_object() else {
        return vec!["not an object".into()];
    };
    let known = [
        "score",
        "execution_time",
        "output",
        "output_format",
        "test_output_format",
        "test_name_format",
        "visibility",
        "stdout_visibility",
        "extra_data",
        "tests",
        "leaderboard",
    ];
    for key in top.keys() {
        if !known.contains(&key.as_str()) {
            bad(format!("unknown top-level key {key}"));
        }
    }
    let number = |v: &Value| v.as_f64().filter(|x| x.is_finite());
    match top.get("execution_time") {
        None => {}
        Some(v) if number(v).is_some() => {}
        Some(Value::String(s)) if s.parse::<f64>().is_ok() => {}
        Some(other) => bad(format!("execution_time is not a number: {other}")),
    }
    for key in ["output_format", "test_output_format", "test_name_format"] {
        if let Some(v) = top.get(key) {
            if !v.as_str().is_some_and(|s| TEXT_FORMATS.contains(&s)) {
                bad(format!("{key} {v}"));
            }
        }
    }
    for key in ["visibility", "stdout_visibility"] {
        if let Some(v) = top.get(key) {
            if !v.as_str().is_some_and(|s| VISIBILITIES.contains(&s)) {
                bad(format!("{key} {v}"));
            }
        }
    }
    if let Some(v) = top.get("output") {
        if !v.is_string() {
            bad(format!("output is not a string: {v}"));
        }
    }
    let tests = match top.get("tests") {
        None => Vec::new(),
        Some(Value::Array(t)) => t.clone(),
        Some(other) => {
            bad(format!("tests is not an array: {other}"));
            Vec::new()
        }
    };
    let top_score = top.get("score");
    if let Some(s) = top_score {
        if number(s).is_none() {
            bad(format!("score is not a number: {s}"));
        }
    }
    let mut max_total = 0.0;
    for (i, t) in tests.iter().enumerate() {
        let Some(t) = t.as_object() else {
            bad(format!("test {i} is not an object"));
            continue;
        };
        let known = [
            "score",
            "max_score",
            "status",
            "name",
            "name_format",
            "number",
            "output",
            "output_format",
            "tags",
            "visibility",
            "extra_data",
        ];
        for key in t.keys() {
            if !known.contains(&key.as_str()) {
                bad(format!("test {i}: unknown key {key}"));
            }
        }
        let score = t.get("score").and_then(number);
        if top_score.is_none() && score.is_none() {
            bad(format!("test {i}: no score, and no top-level score"));
        }
        if let Some(v) = t.get("status") {
            if !matches!(v.as_str(), Some("passed" | "failed")) {
                bad(format!("test {i}: status {v}"));
            }
        }
        for key in ["name", "number", "output"] {
            if let Some(v) = t.get(key) {
                if !v.is_string() {
                    bad(format!("test {i}: {key} is not a string: {v}"));
                }
            }
        }
        for key in ["output_format", "name_format"] {
            if let Some(v) = t.get(key) {
                if !v.as_str().is_some_and(|s| TEXT_FORMATS.contains(&s)) {
                    bad(format!("test {i}: {key} {v}"));
                }
            }
        }
        if let Some(v) = t.get("visibility") {
            if !v.as_str().is_some_and(|s| VISIBILITIES.contains(&s)) {
                bad(format!("test {i}: visibility {v}"));
            }
        }
        if let Some(max) = t.get("max_score") {
            match number(max) {
                Some(m) => {
                    max_total += m;
                    if score.is_some_and(|s| s > m || s < 0.0) {
                        bad(format!("test {i}: score {score:?} outside 0..={m}"));
                    }
                }
                None => bad(format!("test {i}: max_score is not a number")),
            }
        }
    }
    if let Some(s) = top_score.and_then(number) {
        if s > max_total + 1e-9 || s < 0.0 {
            bad(format!("score {s} outside 0..={max_total}"));
        }
    }
    problems
}
