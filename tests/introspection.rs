//! Tokens as a lever against the authorization server (issue 26, defect 6):
//! an oversized token is refused before any verifier asks about it, made-up
//! tokens from one address spend that address's budget and no more, and a
//! value taken from an unverified token is clipped before it is reflected
//! into `WWW-Authenticate`. The authorization server here is a small
//! introspection endpoint (and an empty key set) that counts what it is
//! asked.

mod support;

use base64::Engine as _;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use mcp_runtime::auth::{IntrospectionVerifier, JwtVerifier, ResourceServer, TokenVerifier};
use mcp_runtime::transport::http::HttpConfig;
use serde_json::json;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use support::http::*;

const RESOURCE: &str = "http://127.0.0.1/mcp";
const GOOD: &str = "good-token";

/// An authorization server that answers introspection (slowly, as a busy
/// one does) and serves an empty key set, counting the introspections.
struct FakeAs {
    addr: SocketAddr,
    introspections: Arc<AtomicUsize>,
}

async fn fake_as(delay: Duration) -> FakeAs {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let introspections = Arc::new(AtomicUsize::new(0));
    let counter = introspections.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let counter = counter.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let counter = counter.clone();
                    async move {
                        let path = req.uri().path().to_owned();
                        let body = req
                            .into_body()
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        let answer = if path == "/jwks" {
                            json!({"keys": []})
                        } else {
                            counter.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(delay).await;
                            let form = String::from_utf8_lossy(&body).into_owned();
                            if form.contains(&format!("token={GOOD}&")) {
                                let exp = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() + 3600;
                                json!({"active": true, "sub": "alice", "aud": RESOURCE, "exp": exp})
                            } else {
                                json!({"active": false})
                            }
                        };
                        let mut r = Response::new(Full::new(Bytes::from(answer.to_string())));
                        r.headers_mut().insert(
                            "content-type",
                            hyper::header::HeaderValue::from_static("application/json"),
                        );
                        Ok::<_, std::convert::Infallible>(r)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    FakeAs { addr, introspections }
}

fn introspection(fake: &FakeAs) -> IntrospectionVerifier {
    IntrospectionVerifier::new(format!("http://{}/introspect", fake.addr), "rs", "secret", RESOURCE)
        .expect("an introspection verifier")
}

fn with_bearer(token: &str) -> Vec<(String, String)> {
    with_header(
        standard_headers("tools/list", None),
        "authorization",
        Some(&format!("Bearer {token}")),
    )
}

fn list_request() -> Vec<u8> {
    rpc(1, "tools/list", json!({"_meta": meta_version(VERSION)}))
}

#[tokio::test]
async fn an_oversized_token_is_refused_before_introspection() {
    let fake = fake_as(Duration::ZERO).await;
    let rs = ResourceServer::new(RESOURCE, format!("http://{}", fake.addr), introspection(&fake));
    let server = start_with(HttpConfig {
        auth: Some(rs),
        ..HttpConfig::default()
    })
    .await;
    let huge = "a".repeat(mcp_runtime::auth::MAX_TOKEN_LEN + 1);
    let a = post(server.addr, &with_bearer(&huge), list_request()).await;
    assert_eq!(
        a.status, 400,
        "a token past the limit is a malformed credential: {}",
        a.text
    );
    let challenge = a.headers["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains("invalid_request") && challenge.len() < 512,
        "{challenge}"
    );
    assert_eq!(
        fake.introspections.load(Ordering::SeqCst),
        0,
        "the authorization server is never asked about it"
    );
    // The same made-up token of ordinary length is asked about once, then
    // refused from what the verifier remembers.
    for _ in 0..3 {
        let a = post(server.addr, &with_bearer("made-up"), list_request()).await;
        assert_eq!(a.status, 401, "{}", a.text);
    }
    assert_eq!(fake.introspections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_flood_of_random_tokens_from_one_address_does_not_starve_another() {
    // A slow authorization server: each answer takes half a second.
    let fake = fake_as(Duration::from_millis(500)).await;
    let verifier = Arc::new(introspection(&fake));
    let flooder: IpAddr = "192.0.2.1".parse().unwrap();
    let client: IpAddr = "198.51.100.7".parse().unwrap();
    let mut flood = tokio::task::JoinSet::new();
    for i in 0..400 {
        let verifier = verifier.clone();
        flood.spawn(async move {
            let token = format!(
                "random-{i}-{}",
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([i as u8; 12])
            );
            verifier.verify_from(&token, Some(flooder)).await.is_ok()
        });
    }
    // Let the flood take what it can first.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = Instant::now();
    let verified = verifier
        .verify_from(GOOD, Some(client))
        .await
        .expect("another address's valid token is verified");
    let waited = started.elapsed();
    assert_eq!(verified.subject, "alice");
    assert!(
        waited < Duration::from_secs(2),
        "the valid token waited {waited:?} behind another address's flood"
    );
    while let Some(accepted) = flood.join_next().await {
        assert!(!accepted.unwrap(), "no made-up token is accepted");
    }
    let asked = fake.introspections.load(Ordering::SeqCst);
    // The flooder's burst (30 by default) and the one valid token.
    assert!(
        asked <= 31,
        "400 made-up tokens from one address cost {asked} introspections"
    );
}

#[tokio::test]
async fn an_unknown_kid_is_clipped_in_the_challenge() {
    let fake = fake_as(Duration::ZERO).await;
    let issuer = format!("http://{}", fake.addr);
    let jwt = JwtVerifier::new(issuer.clone(), RESOURCE, format!("{issuer}/jwks")).expect("a JWT verifier");
    let server = start_with(HttpConfig {
        auth: Some(ResourceServer::new(RESOURCE, issuer, jwt)),
        ..HttpConfig::default()
    })
    .await;
    let b64 = |v: serde_json::Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let kid = "k".repeat(4000);
    let token = format!(
        "{}.{}.{}",
        b64(json!({"alg": "RS256", "typ": "at+jwt", "kid": kid})),
        b64(json!({"sub": "mallory"})),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([0u8; 64])
    );
    let a = post(server.addr, &with_bearer(&token), list_request()).await;
    assert_eq!(a.status, 401, "{}", a.text);
    let challenge = a.headers["www-authenticate"].to_str().unwrap();
    assert!(challenge.contains("unknown signing key"), "{challenge}");
    assert!(
        challenge.len() < 512,
        "the challenge reflects {} bytes of an unverified token",
        challenge.len()
    );
}
