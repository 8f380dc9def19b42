//! The one process-wide rustls crypto provider of every HTTPS client the
//! crate builds: the `auth` feature's verifiers and the `otel` feature's OTLP
//! exporter. Both use reqwest with rustls and no provider of its own, so one
//! must be installed before the first client is built, whichever feature
//! builds it first; a provider the application installed already is kept.

/// Installs rustls' ring provider unless a provider is installed already.
pub(crate) fn install_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may win the race; its provider is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
