//! The OAuth 2.1 resource server against a real authorization server:
//! oidc-provider (npm), started on loopback by `scripts/auth-server.sh`,
//! issuing JWT access tokens (RFC 9068) bound to our resource by the
//! client-credentials grant, and answering introspection (RFC 7662).
//!
//! Without npm the test says so loudly and passes; with `CI` (or
//! `MCP_REQUIRE_AUTH_TESTS`) set, a missing npm is a failure.
//! Every JSON-RPC body we send back is validated against the schema.

mod support;

use mcp_runtime::auth::{IntrospectionVerifier, JwtVerifier, Rejection, ResourceServer, TokenVerifier};
use mcp_runtime::prelude::*;
use mcp_runtime::transport::http::{HttpConfig, HttpServer};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use support::http::*;

/// Reads a ticket; says who asked and whether the token reached the handler.
#[tool(scopes("tickets:read"))]
fn read_ticket(identity: Identity, headers: RequestHeaders) -> String {
    let token = identity.token().map_or("nobody".to_owned(), |t| {
        format!(
            "{} [{}] via {}",
            t.subject,
            t.scopes.join(" "),
            t.client_id.clone().unwrap_or_default()
        )
    });
    let hidden = headers.map().is_some() && headers.get("authorization").is_none();
    format!("{token}; authorization hidden: {hidden}")
}

/// Opens a ticket.
#[tool(scopes("tickets:write"))]
fn write_ticket() -> &'static str {
    "opened"
}

/// The authorization server of this test, stopped when dropped.
struct AuthServer {
    dir: PathBuf,
    issuer: String,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/auth-server.sh")
}

fn run(args: &[&str]) -> String {
    run_with(args, &[])
}

fn run_with(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new("bash")
        .arg(script())
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/auth-server.sh: {e}"));
    assert!(
        out.status.success(),
        "scripts/auth-server.sh {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Whether npm is there to install the authorization server; `false`
/// (loudly) outside CI, a failure in CI.
fn npm_found() -> bool {
    let npm = Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !npm {
        let required = std::env::var_os("CI").is_some() || std::env::var_os("MCP_REQUIRE_AUTH_TESTS").is_some();
        assert!(
            !required,
            "npm is needed to install the authorization server (oidc-provider)"
        );
        eprintln!("\n*** SKIPPED: the authorization-server tests need npm (to install oidc-provider) ***\n");
    }
    npm
}

impl AuthServer {
    /// Starts it, or `None` (loudly) where npm is missing outside CI.
    fn start() -> Option<AuthServer> {
        Self::start_as("main", None)
    }

    /// Starts one of this test's servers (`tag` names its state), on `port`
    /// when given.
    fn start_as(tag: &str, port: Option<u16>) -> Option<AuthServer> {
        if !npm_found() {
            return None;
        }
        let dir = std::env::temp_dir().join(format!("mcp-auth-test-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let dir_text = dir.to_string_lossy().into_owned();
        let issuer = match port {
            Some(port) => run_with(&["up", &dir_text], &[("MCP_AUTH_PORT", &port.to_string())]),
            None => run(&["up", &dir_text]),
        };
        Some(AuthServer { dir, issuer })
    }

    fn dir(&self) -> String {
        self.dir.to_string_lossy().into_owned()
    }

    /// A token signed by the server's key (or as `mode` says: foreign, none, hs256-public).
    fn sign(&self, claims: &Value, mode: &str) -> String {
        let (dir, claims) = (self.dir(), claims.to_string());
        let mut args = vec!["sign", dir.as_str(), claims.as_str()];
        if !mode.is_empty() {
            args.push(mode);
        }
        run(&args)
    }

    /// A new signing key, the server restarted with it on the same port.
    fn rotate(&mut self) {
        self.issuer = run(&["rotate", &self.dir()]);
    }

    /// The RS256 keys but the signing one withdrawn from the published set,
    /// the server restarted on the same port.
    fn retire(&mut self) {
        self.issuer = run(&["retire", &self.dir()]);
    }

    /// A token from the token endpoint (client credentials, RFC 8707 resource).
    async fn token(&self, client: &str, resource: &str, scope: &str) -> String {
        let answer: Value = http_client()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .form(&[
                ("grant_type", "client_credentials"),
                ("resource", resource),
                ("scope", scope),
            ])
            .send()
            .await
            .expect("the token endpoint answers")
            .json()
            .await
            .expect("a JSON token response");
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no access_token: {answer}"))
            .to_owned()
    }

    async fn revoke(&self, client: &str, token: &str) {
        let status = http_client()
            .post(format!("{}/token/revocation", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .form(&[("token", token)])
            .send()
            .await
            .expect("the revocation endpoint answers")
            .status();
        assert!(status.is_success(), "revocation: {status}");
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = Command::new("bash").arg(script()).args(["down", &self.dir()]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// POSTs `method` with a bearer token (or none).
async fn with_token(addr: SocketAddr, token: Option<&str>, method: &str, name: Option<&str>, params: Value) -> Answer {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let headers = with_header(standard_headers(method, name), "authorization", bearer.as_deref());
    post(addr, &headers, rpc(1, method, params)).await
}

async fn list_tools(addr: SocketAddr, token: &str) -> Vec<String> {
    let a = with_token(
        addr,
        Some(token),
        "tools/list",
        None,
        json!({"_meta": support::meta_with(json!({}))}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let v = a.json(Some("tools/list"));
    v["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn call_tool(addr: SocketAddr, token: Option<&str>, name: &str) -> Answer {
    let params = json!({"name": name, "arguments": {}, "_meta": support::meta_with(json!({}))});
    with_token(addr, token, "tools/call", Some(name), params).await
}

/// A 401 whose challenge names the metadata, the scope a client asks for
/// first (least privilege: the metadata lists both) and (for a bad token)
/// `invalid_token` with a description containing `why`.
fn assert_unauthorized(a: &Answer, resource_metadata: &str, why: Option<&str>) {
    assert_eq!(a.status, 401, "{}", a.text);
    let challenge = a
        .headers
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{resource_metadata}\"")),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"tickets:read\""), "{challenge}");
    match why {
        Some(why) => {
            assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
            assert!(challenge.contains(why), "expected {why:?} in {challenge}");
        }
        None => assert!(!challenge.contains("error="), "{challenge}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_of_a_real_authorization_server_are_verified() {
    let Some(mut auth) = AuthServer::start() else { return };
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let metadata_url = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");
    let jwt = JwtVerifier::discover(&auth.issuer, resource.clone())
        .await
        .expect("the issuer's metadata and keys")
        .refetch_interval(Duration::from_millis(200))
        .max_key_age(Duration::from_millis(500));
    let protection = ResourceServer::new(resource.clone(), auth.issuer.clone(), jwt)
        .scopes(["tickets:read", "tickets:write"])
        .challenge_scopes(["tickets:read"]);
    let server = Server::builder()
        .empty()
        .tool::<read_ticket>()
        .tool::<write_ticket>()
        .build()
        .unwrap();
    let addr = serve_protected(server, port, protection).await;

    // No token: 401 pointing at the metadata, which names the authorization server.
    let none = call_tool(addr, None, "read_ticket").await;
    assert_unauthorized(&none, &metadata_url, None);
    // The scope a client asks for first is the challenge's (least privilege).
    let challenge = none.headers["www-authenticate"].to_str().unwrap();
    let asked = challenge
        .split("scope=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("{challenge}"))
        .to_owned();
    let mut conn = connect(addr).await;
    let doc = read_all(
        conn.send(build(
            addr,
            hyper::Method::GET,
            "/.well-known/oauth-protected-resource/mcp",
            &[],
            vec![],
        ))
        .await,
    )
    .await;
    assert_eq!(doc.status, 200, "{}", doc.text);
    let doc: Value = serde_json::from_str(&doc.text).unwrap();
    assert_eq!(doc["resource"], resource);
    assert_eq!(doc["authorization_servers"], json!([auth.issuer]));
    assert_eq!(doc["scopes_supported"], json!(["tickets:read", "tickets:write"]));

    // A client-credentials token for this resource with both scopes.
    let full = auth.token("mcp-client", &resource, "tickets:read tickets:write").await;
    assert_eq!(list_tools(addr, &full).await, ["read_ticket", "write_ticket"]);
    let read = call_tool(addr, Some(&full), "read_ticket").await;
    assert_eq!(read.status, 200, "{}", read.text);
    assert_eq!(
        read.json(Some("tools/call"))["result"]["content"][0]["text"],
        "mcp-client [tickets:read tickets:write] via mcp-client; authorization hidden: true"
    );

    // Only the challenge's tickets:read: the write tool is hidden, and
    // calling it is a 403 step-up.
    let reader = auth.token("mcp-client", &resource, &asked).await;
    assert_eq!(list_tools(addr, &reader).await, ["read_ticket"]);
    let refused = call_tool(addr, Some(&reader), "write_ticket").await;
    assert_eq!(refused.status, 403, "{}", refused.text);
    let challenge = refused.headers["www-authenticate"].to_str().unwrap().to_owned();
    assert!(challenge.contains("error=\"insufficient_scope\""), "{challenge}");
    assert!(challenge.contains("scope=\"tickets:write\""), "{challenge}");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    let body = refused.json(Some("tools/call"));
    assert_eq!(body["error"]["data"]["requiredScopes"], json!(["tickets:write"]));

    // Tokens that must not pass, each a 401 invalid_token.
    let claims = |iss: &str, aud: &str, exp: u64| {
        json!({"iss": iss, "aud": aud, "exp": exp, "iat": now() - 10, "sub": "mallory",
               "client_id": "mcp-client", "scope": "tickets:read tickets:write", "jti": format!("t{exp}")})
    };
    let live = now() + 600;
    let foreign_aud = auth
        .token("mcp-client", "http://127.0.0.1:9/other", "tickets:read")
        .await;
    // One character in the middle of the signature (the last one may carry only padding bits).
    let signature_at = full.rfind('.').unwrap() + 1;
    let middle = signature_at + (full.len() - signature_at) / 2;
    let flipped = if &full[middle..=middle] == "A" { "B" } else { "A" };
    let tampered = format!("{}{flipped}{}", &full[..middle], &full[middle + 1..]);
    let cases = [
        ("wrong audience", foreign_aud, "not issued for this resource"),
        (
            "expired",
            auth.sign(&claims(&auth.issuer, &resource, now() - 3600), ""),
            "expired",
        ),
        (
            "wrong issuer",
            auth.sign(&claims("http://127.0.0.1:1", &resource, live), ""),
            "issued by",
        ),
        ("bad signature", tampered, "bad signature"),
        (
            "alg none",
            auth.sign(&claims(&auth.issuer, &resource, live), "none"),
            "algorithm none",
        ),
        (
            "HS256 keyed with the public key",
            auth.sign(&claims(&auth.issuer, &resource, live), "hs256-public"),
            "algorithm HS256",
        ),
        (
            "unknown kid",
            auth.sign(&claims(&auth.issuer, &resource, live), "foreign"),
            "unknown signing key",
        ),
        ("not a token", "not a jwt".replace(' ', "-"), "malformed"),
    ];
    for (case, token, why) in &cases {
        let a = call_tool(addr, Some(token), "read_ticket").await;
        assert!(a.status == 401, "{case}: {} {}", a.status, a.text);
        assert_unauthorized(&a, &metadata_url, Some(why));
    }
    // A well-signed token of ours for this resource passes (the negative cases are not the signer's fault).
    let forged_but_valid = auth.sign(&claims(&auth.issuer, &resource, live), "");
    assert_eq!(
        call_tool(addr, Some(&forged_but_valid), "read_ticket").await.status,
        200
    );
    // An audience whose scheme (or host) is in capitals still names this server.
    let shouted = resource.replacen("http://", "HTTP://", 1);
    let upper = auth.sign(&claims(&auth.issuer, &shouted, live + 3), "");
    assert_eq!(call_tool(addr, Some(&upper), "read_ticket").await.status, 200);

    // Keys rotated at the authorization server: a token under the new key is
    // accepted after one refetch, without restarting this server.
    tokio::time::sleep(Duration::from_millis(300)).await;
    auth.rotate();
    let rotated = auth.token("mcp-client", &resource, "tickets:read").await;
    assert_ne!(kid(&rotated), kid(&full), "the new token is signed with the new key");
    assert_eq!(list_tools(addr, &rotated).await, ["read_ticket"]);

    // A key the authorization server withdraws stops verifying tokens once
    // the set held here is older than max_key_age, though every token in
    // use names a key it knows.
    let previous = auth.sign(&claims(&auth.issuer, &resource, live + 1), "previous");
    assert_eq!(kid(&previous), kid(&full), "signed with the key before the rotation");
    assert_eq!(call_tool(addr, Some(&previous), "read_ticket").await.status, 200);
    auth.retire();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        list_tools(addr, &rotated).await,
        ["read_ticket"],
        "the signing key still verifies"
    );
    let retired = auth.sign(&claims(&auth.issuer, &resource, live + 2), "retired");
    assert_eq!(kid(&retired), kid(&full));
    let a = call_tool(addr, Some(&retired), "read_ticket").await;
    assert_eq!(a.status, 401, "a withdrawn key: {}", a.text);
    assert_unauthorized(&a, &metadata_url, Some("unknown signing key"));

    // Introspection (RFC 7662) of opaque tokens: an active one, and a revoked one.
    let introspect = IntrospectionVerifier::discover(&auth.issuer, "mcp-server", "mcp-server-secret", resource.clone())
        .await
        .expect("the introspection endpoint")
        .cache(0, Duration::ZERO);
    let active = auth.token("mcp-opaque", &resource, "tickets:read").await;
    assert_eq!(active.split('.').count(), 1, "an opaque token: {active}");
    let verified = introspect.verify(&active).await.expect("an active token");
    assert_eq!(verified.subject, "mcp-opaque");
    assert_eq!(verified.scopes, ["tickets:read"]);
    let revoked = auth.token("mcp-opaque", &resource, "tickets:read").await;
    assert!(introspect.verify(&revoked).await.is_ok());
    auth.revoke("mcp-opaque", &revoked).await;
    assert_eq!(introspect.verify(&revoked).await, Err(Rejection::Inactive));
    let elsewhere = auth
        .token("mcp-opaque", "http://127.0.0.1:9/other", "tickets:read")
        .await;
    assert!(matches!(
        introspect.verify(&elsewhere).await,
        Err(Rejection::Audience(_))
    ));
}

/// A listen stream opened with an introspected token ends once the token is
/// revoked at the authorization server (asked again every cache lifetime,
/// here 1 s, but at least 5 s apart); one whose token stays good goes on,
/// and the revoked token opens no new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_ends_once_its_token_is_revoked() {
    use http_body_util::BodyExt;
    let Some(auth) = AuthServer::start_as("revoke", None) else {
        return;
    };
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let introspect = IntrospectionVerifier::discover(&auth.issuer, "mcp-server", "mcp-server-secret", resource.clone())
        .await
        .expect("the introspection endpoint")
        .cache(100, Duration::from_secs(1));
    let protection = ResourceServer::new(resource.clone(), auth.issuer.clone(), introspect).scopes(["tickets:read"]);
    let server = Server::builder().empty().tool::<read_ticket>().build().unwrap();
    let addr = serve_protected(server, port, protection).await;
    let listen = |token: String| async move {
        let bearer = format!("Bearer {token}");
        let headers = with_header(
            standard_headers("subscriptions/listen", None),
            "authorization",
            Some(&bearer),
        );
        let body = rpc(
            1,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        );
        let mut conn = connect(addr).await;
        let response = conn
            .send(build(addr, hyper::Method::POST, "/mcp", &headers, body))
            .await;
        let mut sse = Sse::open(response, "subscriptions/listen", conn);
        let ack = sse.next().await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
        sse
    };
    // Whether the stream ends (rather than stays open) within `wait`.
    let ends_within = |mut sse: Sse, wait: Duration| async move {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(deadline, sse.body.frame()).await {
                Err(_) => return (false, sse),
                Ok(None | Some(Err(_))) => return (true, sse),
                Ok(Some(Ok(_))) => {}
            }
        }
    };
    let kept = auth.token("mcp-opaque", &resource, "tickets:read").await;
    let revoked = auth.token("mcp-opaque", &resource, "tickets:read").await;
    let stays = listen(kept.clone()).await;
    let goes = listen(revoked.clone()).await;
    auth.revoke("mcp-opaque", &revoked).await;
    // Asked again 5 to 5.5 s after it opened (the floor), the cache's 1 s long past.
    let (ended, _) = ends_within(goes, Duration::from_secs(10)).await;
    assert!(ended, "the stream of a revoked token still open after 10 s");
    let (ended, _stays) = ends_within(stays, Duration::from_millis(500)).await;
    assert!(!ended, "the stream of a good token ended");
    let again = with_token(addr, Some(&revoked), "tools/list", None, json!({})).await;
    assert_eq!(again.status, 401, "{}", again.text);
}

/// Serves `server` over HTTP on `port`, protected as `protection` says.
async fn serve_protected(server: Server, port: u16, protection: ResourceServer) -> SocketAddr {
    let config = HttpConfig {
        auth: Some(protection),
        ..HttpConfig::default()
    };
    let http = HttpServer::bind(server, &format!("127.0.0.1:{port}"), config)
        .await
        .unwrap();
    let addr = http.local_addr().unwrap();
    tokio::spawn(http.serve_until(std::future::pending()));
    addr
}

/// An HTTP client for the test's own requests. reqwest is built without a
/// rustls provider (as mcp-runtime's features have it), so the first client
/// of the process installs ring's, whichever test builds it.
fn http_client() -> reqwest::Client {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::new()
}

fn kid(token: &str) -> String {
    use base64::Engine as _;
    let head = token.split('.').next().unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(head).unwrap();
    serde_json::from_slice::<Value>(&bytes).unwrap()["kid"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn get(url: &str) -> (u16, String) {
    match http_client().get(url).send().await {
        Ok(r) => (r.status().as_u16(), r.text().await.unwrap_or_default()),
        Err(_) => (0, String::new()),
    }
}

async fn list_status(url: &str, token: &str) -> u16 {
    list_answer(url, token).await.map(|r| r.status().as_u16()).unwrap_or(0)
}

async fn list_answer(url: &str, token: &str) -> reqwest::Result<reqwest::Response> {
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": support::meta_with(json!({}))}});
    http_client()
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .json(&body)
        .send()
        .await
}

/// An authorization server that is down when a `main!` binary starts does
/// not stop it: it serves, `/readyz` names what it waits for, protected
/// requests get 503, and it retries until the server is there. Its 401
/// asks for the scopes `MCP_AUTH_CHALLENGE_SCOPES` names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binary_started_before_its_authorization_server_waits_for_it() {
    if !npm_found() {
        return;
    }
    // Installed first, so that the wait below is the server's start only.
    run(&["install"]);
    let (as_port, port) = (free_port(), free_port());
    let issuer = format!("http://127.0.0.1:{as_port}");
    let base = format!("http://127.0.0.1:{port}");
    let resource = format!("{base}/mcp");
    let _server = support::Killed(
        protected("everything", port, &issuer, &resource)
            .env("MCP_AUTH_CHALLENGE_SCOPES", "tickets:read, tickets:list")
            .spawn()
            .expect("the example starts"),
    );
    let started = std::time::Instant::now();
    while get(&format!("{base}/healthz")).await.0 != 200 {
        assert!(started.elapsed() < Duration::from_secs(30), "the binary does not serve");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, body) = get(&format!("{base}/readyz")).await;
    assert_eq!(status, 503, "{body}");
    let said: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        said,
        json!({"status": "waiting", "for": [format!("authorization server {issuer}")]})
    );
    let waiting = list_answer(&resource, "any-token").await.unwrap();
    assert_eq!(waiting.status().as_u16(), 503, "a protected request while it waits");
    assert_eq!(waiting.headers()["retry-after"], "5", "a 503 says when to try again");
    let anonymous = http_client()
        .post(&resource)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
    let challenge = anonymous.headers()["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.ends_with(r#", scope="tickets:read tickets:list""#),
        "{challenge}"
    );

    let auth = AuthServer::start_as("late", Some(as_port)).expect("npm was found");
    assert_eq!(auth.issuer, issuer);
    let up = std::time::Instant::now();
    loop {
        let (status, body) = get(&format!("{base}/readyz")).await;
        if status == 200 {
            assert_eq!(body, r#"{"status":"ready"}"#);
            break;
        }
        assert!(up.elapsed() < Duration::from_secs(45), "still not ready: {body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let token = auth.token("mcp-client", &resource, "tickets:read").await;
    assert_eq!(
        list_status(&resource, &token).await,
        200,
        "served once the server was reached"
    );
    assert_eq!(list_status(&resource, "forged").await, 401);
}

/// `MCP_AUTH_ISSUER` with a trailing slash the authorization server's issuer
/// lacks: discovery finds it, and the protected resource metadata names the
/// issuer as the server declares it (RFC 8414 compares issuers exactly: a
/// client given the other spelling refuses the server's metadata).
#[tokio::test]
async fn the_resource_metadata_names_the_issuer_as_its_server_declares_it() {
    let Some(auth) = AuthServer::start_as("slash", None) else {
        return;
    };
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let resource = format!("{base}/mcp");
    let slashed = format!("{}/", auth.issuer);
    let _server = support::Killed(
        protected("everything", port, &slashed, &resource)
            .spawn()
            .expect("the example starts"),
    );
    until_ready(&base).await;
    let (status, body) = get(&format!("{base}/.well-known/oauth-protected-resource/mcp")).await;
    assert_eq!(status, 200, "{body}");
    let metadata: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(metadata["authorization_servers"], json!([auth.issuer]), "{body}");
    let token = auth.token("mcp-client", &resource, "tickets:read").await;
    assert_eq!(list_status(&resource, &token).await, 200);
}

/// An authorization server whose metadata publishes no keys: with the
/// introspection credentials every token is introspected; without them the
/// binary refuses to start (exit 2). Both used to wait for keys that never
/// come (503 to every protected request, `/readyz` waiting for good).
#[tokio::test]
async fn an_authorization_server_without_keys_is_used_by_introspection() {
    if !npm_found() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("mcp-auth-test-{}-nokeys", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir_text = dir.to_string_lossy().into_owned();
    let issuer = run_with(&["up", &dir_text], &[("MCP_AUTH_NO_JWKS", "1")]);
    let auth = AuthServer { dir, issuer };
    let (_, meta) = get(&format!("{}/.well-known/oauth-authorization-server", auth.issuer)).await;
    assert!(!meta.contains("jwks_uri"), "{meta}");

    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let resource = format!("{base}/mcp");
    let binary = |credentials: bool| {
        let mut command = protected("everything", port, &auth.issuer, &resource);
        command
            .env_remove("MCP_AUTH_CLIENT_ID")
            .env_remove("MCP_AUTH_CLIENT_SECRET")
            .stderr(std::process::Stdio::piped());
        if credentials {
            command
                .env("MCP_AUTH_CLIENT_ID", "mcp-server")
                .env("MCP_AUTH_CLIENT_SECRET", "mcp-server-secret")
                .stderr(std::process::Stdio::null());
        }
        command
    };

    let refused = binary(false).output().expect("the example runs");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(said.contains("no jwks_uri"), "{said}");

    let _server = support::Killed(binary(true).spawn().expect("the example starts"));
    until_ready(&base).await;
    let opaque = auth.token("mcp-opaque", &resource, "tickets:read").await;
    assert_eq!(list_status(&resource, &opaque).await, 200, "an opaque token");
    assert_eq!(list_status(&resource, "forged.not.ajwt").await, 401);
    // This server refuses to introspect its JWTs (400 unsupported_token_type):
    // the token is refused, the server is not "unavailable".
    let jwt = auth.token("mcp-client", &resource, "tickets:read").await;
    assert_eq!(list_status(&resource, &jwt).await, 401, "a JWT it cannot introspect");
}

/// examples/after-sales protected: its export writes (the export and the
/// audit log), so a token that may only read is refused it (403
/// `insufficient_scope`) and does not see it listed; one that may write too
/// is served.
#[tokio::test]
async fn the_after_sales_export_needs_the_write_scope() {
    let Some(auth) = AuthServer::start_as("export", None) else {
        return;
    };
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let resource = format!("{base}/mcp");
    let dir = std::env::temp_dir().join(format!("mcp-auth-test-{}-desk", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let _server = support::Killed(
        protected("after-sales", port, &auth.issuer, &resource)
            .env("DATABASE_URL", format!("sqlite://{}", dir.join("desk.db").display()))
            .spawn()
            .expect("the example starts"),
    );
    until_ready(&base).await;
    let export = |token: String| {
        let resource = resource.clone();
        async move {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "after_sales_export", "arguments": {"month": "2026-11"},
                       "_meta": support::meta_with(json!({}))}});
            http_client()
                .post(&resource)
                .bearer_auth(token)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "after_sales_export")
                .json(&body)
                .send()
                .await
                .unwrap()
        }
    };
    let reader = auth.token("mcp-client", &resource, "tickets:read").await;
    assert!(!list_tools(port_addr(port), &reader)
        .await
        .iter()
        .any(|t| t == "after_sales_export"));
    let refused = export(reader).await;
    assert_eq!(refused.status().as_u16(), 403);
    let challenge = refused.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert!(challenge.contains("insufficient_scope"), "{challenge}");
    let writer = auth.token("mcp-client", &resource, "tickets:read tickets:write").await;
    assert_eq!(export(writer).await.status().as_u16(), 200);
    let _ = std::fs::remove_dir_all(&dir);
}

fn port_addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// An example's binary serving HTTP on `port`, protected by `issuer` for
/// `resource` (no Redis, output dropped): add what else it needs.
fn protected(example: &str, port: u16, issuer: &str, resource: &str) -> Command {
    let mut command = Command::new(support::example_binary(example));
    command
        .args(["--http", &format!("127.0.0.1:{port}")])
        .env("MCP_AUTH_ISSUER", issuer)
        .env("MCP_AUTH_RESOURCE", resource)
        .env_remove("MCP_REDIS_URL")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    command
}

/// Waits (at most a minute) until `base/readyz` says ready.
async fn until_ready(base: &str) {
    let started = std::time::Instant::now();
    while get(&format!("{base}/readyz")).await.0 != 200 {
        assert!(started.elapsed() < Duration::from_secs(60), "the binary is not ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
