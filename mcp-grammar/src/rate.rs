//! How a rate limit is written: `N/s`, `N/min` (or `N/m`), `N/h` or
//! `N/<ms>ms`, optionally followed by `burst B`.

/// A rate as written: `count` calls per `period_ms` milliseconds, in bursts
/// of up to `burst` (`count` when not given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateParts {
    /// Calls per period, above 0.
    pub count: u32,
    /// The period in milliseconds, 1 to a day.
    pub period_ms: u64,
    /// Calls that may come at once, above 0.
    pub burst: u32,
}

/// The longest period, a day, in milliseconds.
const DAY_MS: u64 = 86_400_000;

/// Reads a rate, or says what is wrong with it.
///
/// ```
/// use mcp_runtime_grammar::{parse_rate, RateParts};
/// assert_eq!(parse_rate("10/s"), Ok(RateParts { count: 10, period_ms: 1000, burst: 10 }));
/// assert_eq!(parse_rate("100/h burst 20").map(|r| r.burst), Ok(20));
/// assert!(parse_rate("10 per second").is_err());
/// ```
pub fn parse_rate(text: &str) -> Result<RateParts, &'static str> {
    let mut words = text.split_whitespace();
    let spec = words.next().ok_or("it is empty")?;
    let burst = match (words.next(), words.next(), words.next()) {
        (None, _, _) => None,
        (Some("burst"), Some(b), None) => Some(
            b.parse::<u32>()
                .ok()
                .filter(|b| *b > 0)
                .ok_or("the burst must be a whole number above 0")?,
        ),
        _ => return Err("only `burst N` may follow the rate"),
    };
    let (count, unit) = spec.split_once('/').ok_or("it has no `/`")?;
    let count = count
        .parse::<u32>()
        .ok()
        .filter(|c| *c > 0)
        .ok_or("the count must be a whole number above 0")?;
    let period_ms = match unit {
        "s" | "sec" | "second" => 1000,
        "m" | "min" | "minute" => 60_000,
        "h" | "hour" => 3_600_000,
        other => other
            .strip_suffix("ms")
            .and_then(|n| n.parse::<u64>().ok())
            .filter(|n| (1..=DAY_MS).contains(n))
            .ok_or("the period must be s, min, h or a number of ms up to a day")?,
    };
    Ok(RateParts {
        count,
        period_ms,
        burst: burst.unwrap_or(count),
    })
}
