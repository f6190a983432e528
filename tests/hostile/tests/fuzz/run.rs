//! What a fuzzing run is: its settings (from the environment), its cases
//! (each reproducible from the seed and its index alone), and the tally of
//! what the server did with them.

use std::io::Write as _;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

use oorandom::Rand64;
use serde::Deserialize;
use serde_json::Value;

use crate::corpus::Seed;
use crate::mutate;

/// How long an answer may take before the request counts as hung.
pub(crate) const HANG: Duration = Duration::from_secs(5);

/// Cases per transport unless `MCP_FUZZ_CASES` says otherwise.
const DEFAULT_CASES: usize = 10_000;

/// The run's settings: `MCP_FUZZ_SEED` (decimal or `0x` hex; a fresh one
/// otherwise), `MCP_FUZZ_CASES` and `MCP_FUZZ_CASE` (replay that case
/// alone, printing it).
pub(crate) struct Settings {
    pub(crate) seed: u64,
    pub(crate) cases: usize,
    pub(crate) only: Option<usize>,
}

impl Settings {
    pub(crate) fn from_env() -> Settings {
        let number = |name: &str| {
            let text = std::env::var(name).ok()?;
            let text = text.trim();
            let parsed = match text.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => text.parse(),
            };
            Some(parsed.unwrap_or_else(|_| panic!("{name}={text:?} is not a number")))
        };
        let seed = number("MCP_FUZZ_SEED").unwrap_or_else(fresh_seed);
        let cases = number("MCP_FUZZ_CASES").map_or(DEFAULT_CASES, |n| n as usize);
        let only = number("MCP_FUZZ_CASE").map(|n| n as usize);
        Settings { seed, cases, only }
    }

    /// The indices of the cases to run.
    pub(crate) fn indices(&self) -> std::ops::Range<usize> {
        match self.only {
            Some(index) => index..index + 1,
            None => 0..self.cases,
        }
    }
}

/// A seed from the clock, the same for every test of this process.
fn fresh_seed() -> u64 {
    static SEED: OnceLock<u64> = OnceLock::new();
    *SEED.get_or_init(|| {
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos() as u64);
        splitmix(nanos ^ u64::from(std::process::id()))
    })
}

/// SplitMix64's finalizer: spreads nearby inputs over the whole range.
fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The generator of one case: the seed, the transport and the index (and
/// the attempt, when a case is drawn again) pick it alone.
pub(crate) fn rng(seed: u64, transport: &str, index: usize, attempt: u64) -> Rand64 {
    let stream = transport
        .bytes()
        .fold(seed, |hash, byte| splitmix(hash ^ u64::from(byte)));
    let case = splitmix(index as u64 ^ splitmix(attempt));
    Rand64::new((u128::from(stream) << 64) | u128::from(case))
}

/// A uniform pick from `items`.
pub(crate) fn pick<'a, T>(rng: &mut Rand64, items: &'a [T]) -> &'a T {
    &items[below(rng, items.len())]
}

/// A uniform number in `0..n`.
pub(crate) fn below(rng: &mut Rand64, n: usize) -> usize {
    rng.rand_range(0..n as u64) as usize
}

/// True with probability `percent`%.
pub(crate) fn chance(rng: &mut Rand64, percent: u64) -> bool {
    rng.rand_range(0..100) < percent
}

/// One fuzz case: a mutant of a seed request.
pub(crate) struct Case {
    pub(crate) index: usize,
    pub(crate) seed: &'static Seed,
    pub(crate) body: Vec<u8>,
    /// The mutations applied, in order.
    pub(crate) ops: Vec<&'static str>,
    /// What drew it, for header mutations on HTTP.
    pub(crate) rng: Rand64,
}

/// The largest mutant sent: the limits on a message (4 MiB on both
/// transports) have tests of their own in `mcp-runtime/tests`, and a body
/// past them is answered before it is read, a race with the writer.
const MAX_BODY: usize = 3 << 20;

/// Case `index` of the run, drawn from `seeds`. A mutant that would make
/// `countdown` run long (its steps times its delay) is drawn again, as a
/// slow answer to it would be no hang; so is one over [`MAX_BODY`].
pub(crate) fn case(
    settings: &Settings,
    transport: &str,
    index: usize,
    seeds: &'static [Seed],
) -> Case {
    for attempt in 0.. {
        let mut rng = rng(settings.seed, transport, index, attempt);
        let seed = pick(&mut rng, seeds);
        let other = pick(&mut rng, seeds);
        let id = match index % 3 {
            0 => Value::from(format!("case-{index}")),
            _ => Value::from(index),
        };
        let (body, ops) =
            mutate::mutate(&mut rng, &seed.request(id), &other.request(Value::from(0)));
        if body.len() <= MAX_BODY && !slow_countdown(&body) {
            return Case {
                index,
                seed,
                body,
                ops,
                rng,
            };
        }
    }
    unreachable!("an endless range")
}

/// Whether `body` may call `countdown` for longer than half a second, read
/// as leniently as the server reads it (members it does not decode may
/// hold anything).
fn slow_countdown(body: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Call {
        params: Option<Params>,
    }
    #[derive(Deserialize)]
    struct Params {
        name: Option<Value>,
        arguments: Option<Value>,
    }
    let mentions = body.windows(8).any(|window| window == b"ountdown");
    let Ok(call) = serde_json::from_slice::<Call>(body) else {
        return mentions;
    };
    let Some(Params { name, arguments }) = call.params else {
        return false;
    };
    if name.as_ref().and_then(Value::as_str) != Some("countdown") {
        return false;
    }
    let arguments = arguments.unwrap_or_default();
    let steps = arguments["from"].as_u64().filter(|&from| from <= 255);
    let delay = match &arguments["delay_ms"] {
        Value::Null => Some(100),
        delay => delay
            .as_u64()
            .filter(|&ms| ms <= 65_535)
            .map(|ms| ms.min(1_000)),
    };
    steps
        .zip(delay)
        .is_some_and(|(steps, delay)| steps * delay > 500)
}

/// What one run saw.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) cases: usize,
    /// The server died, or its log says something panicked.
    pub(crate) panics: usize,
    /// No answer within [`HANG`].
    pub(crate) hangs: usize,
    /// An answer that is not valid JSON-RPC 2.0 (or not MCP's), or not the
    /// one the request called for.
    pub(crate) malformed: usize,
    /// A 5xx status.
    pub(crate) server_errors: usize,
    /// A 429 (the server runs without a rate limit).
    pub(crate) throttled: usize,
    /// Well-formed answers, by kind: results, errors, notifications sent
    /// before them, and HTTP's other outcomes (202, SSE, plain refusals).
    pub(crate) results: usize,
    pub(crate) errors: usize,
    pub(crate) notifications: usize,
    pub(crate) accepted: usize,
    pub(crate) streams: usize,
    pub(crate) refusals: usize,
    pub(crate) findings: Vec<String>,
}

/// The kinds of failure, each counted in its own field.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Failure {
    Panic,
    Hang,
    Malformed,
    ServerError,
    Throttled,
}

impl Tally {
    /// Counts a failure of `case`, keeping the first few in full.
    pub(crate) fn fail(&mut self, failure: Failure, case: &Case, detail: &str) {
        let count = match failure {
            Failure::Panic => &mut self.panics,
            Failure::Hang => &mut self.hangs,
            Failure::Malformed => &mut self.malformed,
            Failure::ServerError => &mut self.server_errors,
            Failure::Throttled => &mut self.throttled,
        };
        *count += 1;
        if self.findings.len() < 10 {
            self.findings.push(format!(
                "{failure:?} at case {} (seed request `{}`, mutations {:?}): {}\n    sent: {}",
                case.index,
                case.seed.name,
                case.ops,
                shorten(detail, 1_500),
                shorten(
                    &String::from_utf8_lossy(&case.body)
                        .escape_debug()
                        .to_string(),
                    1_500
                ),
            ));
        }
    }

    fn failures(&self) -> usize {
        self.panics + self.hangs + self.malformed + self.server_errors + self.throttled
    }

    /// Prints the summary (always: straight to stderr, past the test
    /// harness's capture) and fails the test on any failure.
    pub(crate) fn report(&self, transport: &str, settings: &Settings, started: Instant) {
        let summary = format!(
            "fuzz {transport}: {} cases in {:.1} s, seed {:#x}: panics {}, hangs {}, malformed {}, 5xx {}, 429 {} \
             (answers: {} results, {} errors, {} notifications, {} accepted, {} streams, {} plain refusals)",
            self.cases,
            started.elapsed().as_secs_f64(),
            settings.seed,
            self.panics,
            self.hangs,
            self.malformed,
            self.server_errors,
            self.throttled,
            self.results,
            self.errors,
            self.notifications,
            self.accepted,
            self.streams,
            self.refusals,
        );
        let _ = writeln!(std::io::stderr(), "{summary}");
        assert!(
            self.failures() == 0,
            "{summary}\nreplay one case with MCP_FUZZ_SEED={:#x} MCP_FUZZ_CASE=<index>\n{}",
            settings.seed,
            self.findings.join("\n"),
        );
    }
}

/// `text`, cut to about `limit` characters.
pub(crate) fn shorten(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((end, _)) => format!("{}… ({} bytes in all)", &text[..end], text.len()),
        None => text.to_owned(),
    }
}
