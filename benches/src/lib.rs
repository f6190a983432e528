//! Pieces the benchmark binaries share.

use std::time::Duration;

/// Latency percentiles and throughput of one run.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    /// Requests per second.
    pub rate: f64,
    /// Median latency.
    pub p50: Duration,
    /// 99th percentile latency.
    pub p99: Duration,
}

/// Summarizes `latencies` (any order) over `elapsed`.
pub fn summarize(latencies: &mut [Duration], elapsed: Duration) -> Summary {
    latencies.sort_unstable();
    let at = |q: f64| {
        if latencies.is_empty() {
            return Duration::ZERO;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss,
            reason = "an index into a list"
        )]
        let index = ((latencies.len() - 1) as f64 * q).round() as usize;
        latencies[index]
    };
    #[allow(clippy::cast_precision_loss, reason = "a request count")]
    let rate = latencies.len() as f64 / elapsed.as_secs_f64();
    Summary {
        rate,
        p50: at(0.50),
        p99: at(0.99),
    }
}

/// The bytes of the JSON-RPC response for `id` with `result` (raw JSON).
pub fn response(id: &serde_json::value::RawValue, result: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(40 + result.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
    out
}

/// What a floor server answers: the result for a method (and tool name),
/// captured from the real server so both send the same bytes.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Answers {
    /// Result JSON by `method` or `method name`.
    pub results: std::collections::HashMap<String, Box<serde_json::value::RawValue>>,
}

/// The parts of a JSON-RPC request a floor server looks at.
#[derive(Debug, serde::Deserialize)]
pub struct Request<'a> {
    /// The id, echoed back.
    #[serde(borrow)]
    pub id: &'a serde_json::value::RawValue,
    /// The method.
    pub method: &'a str,
    /// The parameters, parsed like a real server parses them.
    #[serde(default)]
    pub params: Option<Params<'a>>,
}

/// Parameters, as far as a floor server reads them.
#[derive(Debug, serde::Deserialize)]
pub struct Params<'a> {
    /// The tool name, for `tools/call`.
    #[serde(default, borrow)]
    pub name: Option<std::borrow::Cow<'a, str>>,
    /// The arguments, parsed into a value.
    #[serde(default)]
    pub arguments: Option<serde_json::Value>,
}

impl Answers {
    /// The result for `request`.
    pub fn result(&self, request: &Request<'_>) -> Option<&str> {
        let name = request.params.as_ref().and_then(|p| p.name.as_deref());
        let by_name = name.and_then(|name| self.results.get(&format!("{} {name}", request.method)));
        by_name
            .or_else(|| self.results.get(request.method))
            .map(|raw| raw.get())
    }
}
