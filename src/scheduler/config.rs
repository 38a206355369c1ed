//! How a [`super::Runtime`] is set up: by API ([`RuntimeConfig`]), then by environment, then
//! by detection.
#![forbid(unsafe_code)]

use super::topology::Topology;
use std::time::Duration;

/// How long an idle worker keeps looking for work before it sleeps, by default (50 µs).
///
/// Back-to-back jobs (a pipeline handing out one chunk's blocks after another) then find the
/// workers awake, and a worker that finds nothing for this long stops burning its core.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(50);

/// Settings of a [`super::Runtime`]. Every field left `None` is taken from the environment
/// where one applies, else detected.
///
/// ```
/// use strata::scheduler::{Runtime, RuntimeConfig};
/// let rt = Runtime::new(RuntimeConfig { workers: Some(2), pin: Some(false), ..RuntimeConfig::default() });
/// assert_eq!(rt.workers(), 2);
/// assert!(!rt.pinned());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// Worker threads. `None`: one per physical core ([`super::topology::Cores`]). `Some(0)`
    /// makes every job run on its caller's thread.
    pub workers: Option<usize>,
    /// Default `nthreads` of a job (caller included) when the job passes 0. `None`:
    /// `STRATA_NTHREADS`, else `BLOSC_NTHREADS`, else the number of workers.
    pub nthreads: Option<usize>,
    /// Pin each worker to its own core. `None`: on, unless `STRATA_PIN` is `0`, `false`, `off`
    /// or `no`.
    pub pin: Option<bool>,
    /// Cache sizes for the sizing rules. `None`: [`Topology::detect`].
    pub topology: Option<Topology>,
    /// How long an idle worker spins before sleeping. `None`: [`DEFAULT_SPIN`].
    pub spin: Option<Duration>,
}

impl RuntimeConfig {
    /// This config with `workers` set.
    #[must_use]
    pub fn with_workers(mut self, workers: usize) -> Self {
        self.workers = Some(workers);
        self
    }

    /// This config with the default `nthreads` set.
    #[must_use]
    pub fn with_nthreads(mut self, nthreads: usize) -> Self {
        self.nthreads = Some(nthreads);
        self
    }

    /// This config with pinning on or off.
    #[must_use]
    pub fn with_pin(mut self, pin: bool) -> Self {
        self.pin = Some(pin);
        self
    }

    /// This config with the given cache topology.
    #[must_use]
    pub fn with_topology(mut self, topology: Topology) -> Self {
        self.topology = Some(topology);
        self
    }
}

/// `STRATA_NTHREADS`, else `BLOSC_NTHREADS`, when set to a positive integer.
pub(crate) fn env_nthreads() -> Option<usize> {
    ["STRATA_NTHREADS", "BLOSC_NTHREADS"]
        .iter()
        .find_map(|var| {
            std::env::var(var)
                .ok()?
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
        })
}

/// `STRATA_PIN`: `Some(false)` for `0`/`false`/`off`/`no`, `Some(true)` for `1`/`true`/`on`/
/// `yes`, `None` otherwise.
pub(crate) fn env_pin() -> Option<bool> {
    let value = std::env::var("STRATA_PIN").ok()?;
    match value.trim().to_ascii_lowercase().as_str() {
        "0" | "false" | "off" | "no" => Some(false),
        "1" | "true" | "on" | "yes" => Some(true),
        _ => None,
    }
}
