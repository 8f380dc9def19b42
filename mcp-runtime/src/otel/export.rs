//! The OTLP exporters, wrapped so that a collector that refuses or does not
//! answer is said on stderr at most once a minute (with how many exports
//! failed since), instead of never or on every batch.

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const EVERY: Duration = Duration::from_secs(60);

/// An exporter whose failures are reported, rate-limited.
#[derive(Debug)]
pub(crate) struct Warned<E> {
    inner: E,
    what: &'static str,
    failed: AtomicU64,
    last: Mutex<Option<Instant>>,
}

impl<E> Warned<E> {
    pub(crate) fn new(inner: E, what: &'static str) -> Self {
        Warned {
            inner,
            what,
            failed: AtomicU64::new(0),
            last: Mutex::new(None),
        }
    }

    fn outcome(&self, result: OTelSdkResult) -> OTelSdkResult {
        if let Err(e) = &result {
            let failed = self.failed.fetch_add(1, Ordering::Relaxed).saturating_add(1);
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if last.is_none_or(|at| at.elapsed() >= EVERY) {
                *last = Some(Instant::now());
                self.failed.store(0, Ordering::Relaxed);
                tracing::warn!(
                    "OpenTelemetry: {failed} export(s) of {} failed and were dropped (said at most once a minute): {e}",
                    self.what
                );
            }
        }
        result
    }
}

impl<E: SpanExporter> SpanExporter for Warned<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let result = self.inner.export(batch).await;
        self.outcome(result)
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.inner.set_resource(resource);
    }
}

impl<E: PushMetricExporter> PushMetricExporter for Warned<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let result = self.inner.export(metrics).await;
        self.outcome(result)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}
