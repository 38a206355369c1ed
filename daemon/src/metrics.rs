//! Counters for `GET /metrics` (Prometheus text format 0.0.4): requests and latency per
//! route, answers per status, in-flight requests, refusals, the work queue and the block
//! cache.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds.
pub const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The routes counted (a fixed set: labels never come from request paths).
pub const ROUTES: [&str; 16] = [
    "/api/roots",
    "/api/list",
    "/api/info",
    "/api/fetch",
    "/api/chunk",
    "/api/download",
    "/v1/meta",
    "/v1/index",
    "/v1/raw",
    "/v1/chunk",
    "/v1/chunks",
    "/v1/slice",
    "/healthz",
    "/metrics",
    "/auth",
    "other",
];

#[derive(Debug, Default)]
struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_ns: AtomicU64,
}

/// Why requests were refused before any work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refusal {
    /// The work queue was full.
    QueueFull,
    /// The connection limit was reached.
    Connections,
    /// The deadline passed.
    Deadline,
    /// The answer did not fit in the memory budget beside the others.
    Memory,
}

impl Refusal {
    fn label(self) -> &'static str {
        match self {
            Refusal::QueueFull => "queue_full",
            Refusal::Connections => "connections",
            Refusal::Deadline => "deadline",
            Refusal::Memory => "memory",
        }
    }
}

/// The daemon's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    latency: [Histogram; ROUTES.len()],
    statuses: Mutex<BTreeMap<(usize, u16), u64>>,
    refusals: Mutex<BTreeMap<Refusal, u64>>,
    /// Requests being answered (held through [`Metrics::admit`]).
    in_flight: AtomicU64,
    /// Requests dropped before their answer was made (the client went away).
    cancelled: AtomicU64,
    /// Open connections.
    pub connections: AtomicU64,
    /// Requests admitted to the pool (holding a place in the work queue).
    pub queued: AtomicU64,
    /// Bytes of response bodies sent (counted as they are produced).
    pub body_bytes: AtomicU64,
}

/// The index of `route` in [`ROUTES`] ("other" for anything else).
#[must_use]
pub fn route_index(route: &str) -> usize {
    ROUTES
        .iter()
        .position(|r| *r == route)
        .unwrap_or(ROUTES.len() - 1)
}

/// A request counted in flight from its admission until its answer's body is sent, or until
/// it is dropped. The count is given back on drop, so a request whose handler is dropped
/// halfway (hyper drops it when the client goes away) leaves the gauge, and counts as
/// cancelled; a streamed body keeps it (it goes with the body, [`crate::serve::hold`]) until
/// its last byte is sent or the client goes away.
#[derive(Debug)]
pub struct InFlight {
    metrics: Arc<Metrics>,
    answered: bool,
}

impl InFlight {
    /// The request has its answer (its body may still be sent).
    pub fn answered(&mut self) {
        self.answered = true;
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
        if !self.answered {
            self.metrics.cancelled.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Metrics {
    /// Counts a request in flight until the returned guard is dropped.
    pub fn admit(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight {
            metrics: Arc::clone(self),
            answered: false,
        }
    }

    /// Counts one answered request.
    pub fn observe(&self, route: usize, status: u16, took: Duration) {
        let h = &self.latency[route.min(ROUTES.len() - 1)];
        let secs = took.as_secs_f64();
        for (b, bound) in h.buckets.iter().zip(BUCKETS) {
            if secs <= bound {
                b.fetch_add(1, Ordering::Relaxed);
            }
        }
        h.count.fetch_add(1, Ordering::Relaxed);
        h.sum_ns.fetch_add(
            u64::try_from(took.as_nanos()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        let mut s = self.statuses.lock().unwrap_or_else(|e| e.into_inner());
        *s.entry((route, status)).or_default() += 1;
    }

    /// Counts one refusal.
    pub fn refuse(&self, why: Refusal) {
        let mut r = self.refusals.lock().unwrap_or_else(|e| e.into_inner());
        *r.entry(why).or_default() += 1;
    }

    /// Refusals of kind `why` so far.
    #[must_use]
    pub fn refusals(&self, why: Refusal) -> u64 {
        let r = self.refusals.lock().unwrap_or_else(|e| e.into_inner());
        r.get(&why).copied().unwrap_or(0)
    }

    /// The text of `GET /metrics`; `extra` appends more samples (the cache's).
    #[must_use]
    pub fn render(&self, extra: &[(&str, &str, u64)]) -> String {
        let mut out = String::new();
        out.push_str("# HELP stratad_requests_total Requests answered, by route and status.\n");
        out.push_str("# TYPE stratad_requests_total counter\n");
        {
            let s = self.statuses.lock().unwrap_or_else(|e| e.into_inner());
            for ((route, status), n) in s.iter() {
                let _ = writeln!(
                    out,
                    "stratad_requests_total{{route=\"{}\",status=\"{status}\"}} {n}",
                    ROUTES[*route]
                );
            }
        }
        out.push_str("# HELP stratad_request_duration_seconds Time to answer, by route.\n");
        out.push_str("# TYPE stratad_request_duration_seconds histogram\n");
        for (route, h) in ROUTES.iter().zip(&self.latency) {
            let count = h.count.load(Ordering::Relaxed);
            if count == 0 {
                continue;
            }
            for (b, bound) in h.buckets.iter().zip(BUCKETS) {
                let _ = writeln!(
                    out,
                    "stratad_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {}",
                    b.load(Ordering::Relaxed)
                );
            }
            let _ = writeln!(
                out,
                "stratad_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(
                out,
                "stratad_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                h.sum_ns.load(Ordering::Relaxed) as f64 / 1e9
            );
            let _ = writeln!(
                out,
                "stratad_request_duration_seconds_count{{route=\"{route}\"}} {count}"
            );
        }
        out.push_str("# HELP stratad_refused_total Requests refused before any work, by reason.\n");
        out.push_str("# TYPE stratad_refused_total counter\n");
        for why in [
            Refusal::QueueFull,
            Refusal::Connections,
            Refusal::Deadline,
            Refusal::Memory,
        ] {
            let _ = writeln!(
                out,
                "stratad_refused_total{{reason=\"{}\"}} {}",
                why.label(),
                self.refusals(why)
            );
        }
        let gauges = [
            (
                "stratad_in_flight",
                "Requests being answered (until their body is sent).",
                self.in_flight.load(Ordering::Relaxed),
            ),
            (
                "stratad_connections",
                "Open connections.",
                self.connections.load(Ordering::Relaxed),
            ),
            (
                "stratad_queue_depth",
                "Requests admitted to the pool, waiting or running.",
                self.queued.load(Ordering::Relaxed),
            ),
        ];
        for (name, help, v) in gauges {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
        }
        let _ = writeln!(
            out,
            "# HELP stratad_requests_cancelled_total Requests dropped before their answer (the client went away).\n# TYPE stratad_requests_cancelled_total counter\nstratad_requests_cancelled_total {}",
            self.cancelled.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP stratad_body_bytes_total Response body bytes produced.\n# TYPE stratad_body_bytes_total counter\nstratad_body_bytes_total {}",
            self.body_bytes.load(Ordering::Relaxed)
        );
        for (name, help, v) in extra {
            let kind = if name.ends_with("_total") {
                "counter"
            } else {
                "gauge"
            };
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}"
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_prometheus_text() {
        let m = Metrics::default();
        m.observe(route_index("/api/info"), 200, Duration::from_millis(3));
        m.observe(route_index("/api/info"), 404, Duration::from_millis(30));
        m.observe(route_index("/nope"), 404, Duration::from_micros(10));
        m.refuse(Refusal::QueueFull);
        let t = m.render(&[("stratad_cache_hits_total", "Hits.", 7)]);
        assert!(t.contains("stratad_requests_total{route=\"/api/info\",status=\"200\"} 1\n"));
        assert!(t.contains("stratad_requests_total{route=\"other\",status=\"404\"} 1\n"));
        assert!(t.contains(
            "stratad_request_duration_seconds_bucket{route=\"/api/info\",le=\"0.005\"} 1\n"
        ));
        assert!(t.contains(
            "stratad_request_duration_seconds_bucket{route=\"/api/info\",le=\"0.05\"} 2\n"
        ));
        assert!(t.contains("stratad_request_duration_seconds_count{route=\"/api/info\"} 2\n"));
        assert!(t.contains("stratad_refused_total{reason=\"queue_full\"} 1\n"));
        assert!(t.contains("# TYPE stratad_cache_hits_total counter\nstratad_cache_hits_total 7\n"));
    }

    #[test]
    fn a_request_leaves_the_gauge_when_dropped_and_counts_as_cancelled_if_unanswered() {
        let m = Arc::new(Metrics::default());
        let mut answered = m.admit();
        let dropped = m.admit();
        assert_eq!(m.in_flight.load(Ordering::Relaxed), 2);
        answered.answered();
        drop(dropped);
        // Answered, its body still being sent: in flight until it is dropped.
        assert_eq!(m.in_flight.load(Ordering::Relaxed), 1);
        drop(answered);
        assert_eq!(m.in_flight.load(Ordering::Relaxed), 0);
        let t = m.render(&[]);
        assert!(t.contains("\nstratad_in_flight 0\n"), "{t}");
        assert!(t.contains("\nstratad_requests_cancelled_total 1\n"), "{t}");
    }
}
