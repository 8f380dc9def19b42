//! A rate: so many calls per period, with a burst.

use std::time::Duration;

/// How often a caller may call: `count` calls per `period`, of which up to
/// `burst` may come at once (the cell rate algorithm, GCRA: one call every
/// `period / count`, with a tolerance of `burst - 1` of those intervals).
///
/// ```
/// use mcp_runtime::Rate;
/// use std::time::Duration;
///
/// let r: Rate = "10/s".parse().unwrap();
/// assert_eq!(r, Rate::new(10, Duration::from_secs(1)).unwrap());
/// assert_eq!(r.burst_size(), 10);
/// let strict: Rate = "600/min burst 5".parse().unwrap();
/// assert_eq!((strict.count(), strict.burst_size()), (600, 5));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    count: u32,
    period_ms: u64,
    burst: u32,
}

/// Why a rate could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid rate {given:?}: {why} (write it as \"10/s\", \"600/min\" or \"100/h burst 20\")")]
pub struct RateError {
    given: String,
    why: &'static str,
}

impl Rate {
    /// `count` calls per `period`, in a burst of up to `count`. `None` when
    /// either is zero (or the period is under a millisecond or over a day).
    pub fn new(count: u32, period: Duration) -> Option<Rate> {
        let period_ms = u64::try_from(period.as_millis()).ok()?;
        (count > 0 && (1..=86_400_000).contains(&period_ms)).then_some(Rate {
            count,
            period_ms,
            burst: count,
        })
    }

    /// `count` calls per second (at least one), in a burst of up to `count`.
    pub fn per_second(count: u32) -> Rate {
        Rate::__from_parts(count.max(1), 1000, count.max(1))
    }

    /// `count` calls per minute (at least one), in a burst of up to `count`.
    pub fn per_minute(count: u32) -> Rate {
        Rate::__from_parts(count.max(1), 60_000, count.max(1))
    }

    /// The same rate with bursts of at most `burst` calls (at least 1).
    pub fn with_burst(mut self, burst: u32) -> Rate {
        self.burst = burst.max(1);
        self
    }

    /// Calls per period.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The period.
    pub fn period(&self) -> Duration {
        Duration::from_millis(self.period_ms)
    }

    /// Calls that may come at once.
    pub fn burst_size(&self) -> u32 {
        self.burst
    }

    /// For the code `#[tool(rate_limit = "...")]` generates (checked by the
    /// macro): not an API.
    #[doc(hidden)]
    pub const fn __from_parts(count: u32, period_ms: u64, burst: u32) -> Rate {
        Rate {
            count,
            period_ms,
            burst,
        }
    }

    /// The time between two calls at the steady rate, in microseconds (at least 1).
    pub(crate) fn interval_us(&self) -> u64 {
        (self.period_ms.saturating_mul(1000) / u64::from(self.count.max(1))).max(1)
    }

    /// How far ahead of the steady rate a caller may be, in microseconds.
    pub(crate) fn tolerance_us(&self) -> u64 {
        self.interval_us()
            .saturating_mul(u64::from(self.burst.saturating_sub(1)))
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = match self.period_ms {
            1000 => "s".to_owned(),
            60_000 => "min".to_owned(),
            3_600_000 => "h".to_owned(),
            ms => format!("{ms}ms"),
        };
        write!(f, "{}/{unit}", self.count)?;
        if self.burst != self.count {
            write!(f, " burst {}", self.burst)?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Rate {
    type Err = RateError;

    /// `N/s`, `N/min` (or `N/m`), `N/h`, `N/<ms>ms`, optionally followed by
    /// `burst B`.
    fn from_str(text: &str) -> Result<Rate, RateError> {
        let parts = mcp_grammar::parse_rate(text).map_err(|why| RateError {
            given: text.to_owned(),
            why,
        })?;
        Ok(Rate {
            count: parts.count,
            period_ms: parts.period_ms,
            burst: parts.burst,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Rate;

    #[test]
    fn rates_read_and_print_back() {
        for text in ["10/s", "600/min", "100/h burst 20", "5/250ms", "3/s burst 1"] {
            let rate: Rate = text.parse().unwrap();
            assert_eq!(rate.to_string(), text);
        }
        let r: Rate = "10/s".parse().unwrap();
        assert_eq!((r.interval_us(), r.tolerance_us()), (100_000, 900_000));
        let one: Rate = "1/s burst 1".parse().unwrap();
        assert_eq!(one.tolerance_us(), 0);
        for bad in [
            "",
            "10",
            "0/s",
            "10/day",
            "10/s burst",
            "10/s burst 0",
            "10/s fast",
            "-1/s",
            "10/0ms",
        ] {
            assert!(bad.parse::<Rate>().is_err(), "{bad:?} was read");
        }
    }
}
