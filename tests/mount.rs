//! Composition: `ServerBuilder::mount(prefix, &other)` serves another
//! server's tools and prompts as `prefix_name` and its resources under their
//! URIs (or, with `MountUris::Prefixed`, under `scheme://prefix/...`), each
//! with the mounted server's own state; instructions are merged; a clash is
//! a start-up error naming both definitions, as is a header parameter that
//! an argument's own type declares badly.

use mcp_runtime::prelude::*;
use mcp_runtime::testing::TestClient;
use mcp_runtime::{BuildError, MountUris, State};
use serde_json::json;

/// The CRM's data.
struct Crm {
    customers: Vec<&'static str>,
}

/// The billing side's data.
struct Billing {
    currency: &'static str,
}

/// A tenant, sent as a header whose name is not a header token.
#[mcp_runtime::schema]
#[schemars(extend("x-mcp-header" = "Tenant Id"))]
struct Tenant(String);

/// Echoes the tenant: its schema comes from its type alone.
#[tool]
fn tenant_echo(tenant: Tenant) -> String {
    tenant.0
}

/// Looks a customer up.
#[tool]
fn lookup(index: usize, crm: State<Crm>) -> Result<String, String> {
    crm.customers
        .get(index)
        .map(|c| (*c).to_owned())
        .ok_or_else(|| "no such customer".into())
}

/// Says the currency.
#[tool]
fn currency(billing: State<Billing>) -> String {
    billing.currency.to_owned()
}

/// Drafts a letter.
#[prompt]
fn letter(name: String) -> String {
    format!("Dear {name},")
}

/// The CRM's about page.
#[resource(uri = "crm://about", mime_type = "text/plain")]
fn about(crm: State<Crm>) -> String {
    format!("{} customers", crm.customers.len())
}

/// One customer's record.
#[resource(uri_template = "crm://customers/{index}", mime_type = "text/plain")]
fn customer(index: usize, crm: State<Crm>) -> Result<String, McpError> {
    crm.customers
        .get(index)
        .map(|c| (*c).to_owned())
        .ok_or_else(|| McpError::invalid_params("no such customer"))
}

fn crm() -> Server {
    crm_of(vec!["Ada", "Grace"])
}

fn crm_of(customers: Vec<&'static str>) -> Server {
    Server::builder()
        .empty()
        .tool::<lookup>()
        .prompt::<letter>()
        .resource::<about>()
        .resource::<customer>()
        .state(Crm { customers })
        .instructions("Customer records.")
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_mounted_server_keeps_its_state_under_a_prefix() {
    let server = Server::builder()
        .empty()
        .tool::<currency>()
        .state(Billing { currency: "EUR" })
        .instructions("Billing.")
        .mount("crm", &crm())
        .build()
        .unwrap();
    let client = TestClient::new(&server);
    let names: Vec<String> = client.list_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["crm_lookup", "currency"]);
    assert_eq!(
        client
            .call_tool("crm_lookup", json!({"index": 1}))
            .await
            .unwrap()
            .text(),
        "Grace"
    );
    assert_eq!(client.call_tool("currency", json!({})).await.unwrap().text(), "EUR");
    let e = client.call_tool("lookup", json!({"index": 0})).await.unwrap_err();
    assert_eq!(e.code().0, -32602, "only the prefixed name is served");
    let prompt = client.get_prompt("crm_letter", json!({"name": "Ada"})).await.unwrap();
    assert_eq!(prompt.messages.len(), 1);
    let about = client.read_resource("crm://about").await.unwrap();
    assert!(serde_json::to_string(&about).unwrap().contains("2 customers"));
    let discover = client.request("server/discover", json!({})).await.unwrap();
    assert_eq!(discover["instructions"], "Billing.\n\ncrm: Customer records.");
}

/// Sleeps for `ms` milliseconds.
#[tool]
async fn nap(ms: u64) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    "rested".into()
}

/// Lets every call through.
struct Open;

impl mcp_runtime::Middleware for Open {
    fn before<'a>(&'a self, _: &'a mcp_runtime::Call<'a>) -> mcp_runtime::MiddlewareFuture<'a, Result<(), McpError>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// What the mounted server applies around every call is not carried with its
/// entries: its middleware and server-wide limits are refused at build (they
/// were dropped without a word), and its default tool timeout goes with its
/// tools.
#[tokio::test]
async fn a_mounted_servers_guards_are_carried_or_refused() {
    let guarded = Server::builder()
        .empty()
        .tool::<nap>()
        .middleware(Open)
        .build()
        .unwrap();
    assert_eq!(
        Server::builder().empty().mount("sleepy", &guarded).build().unwrap_err(),
        BuildError::MountedGuards("sleepy".into(), "middleware")
    );
    let limited = Server::builder()
        .empty()
        .tool::<nap>()
        .rate_limit("10/s".parse().unwrap())
        .build()
        .unwrap();
    let refused = Server::builder().empty().mount("sleepy", &limited).build().unwrap_err();
    assert!(
        matches!(&refused, BuildError::MountedGuards(prefix, _) if prefix == "sleepy"),
        "{refused:?}"
    );
    assert!(
        refused.to_string().contains("set it on the mounting server"),
        "{refused}"
    );
    // Its tools' own rates go with them, counted in its shared store: a
    // mounting server without one would count them per replica.
    let rated = || {
        let tool: mcp_runtime::protocol::Tool =
            serde_json::from_value(json!({"name": "rated", "inputSchema": {"type": "object"}})).unwrap();
        mcp_runtime::ToolEntry::dynamic(tool, |_, _| async { "ok" }).rate_limit("5/s".parse().unwrap())
    };
    let store: std::sync::Arc<dyn mcp_runtime::RateStore> = std::sync::Arc::new(Unlimited);
    let shared = Server::builder()
        .empty()
        .tool_entry(rated())
        .rate_store(store.clone())
        .build()
        .unwrap();
    let refused = Server::builder().empty().mount("shared", &shared).build().unwrap_err();
    assert!(
        matches!(&refused, BuildError::MountedGuards(_, what) if what.contains("rate store")),
        "{refused:?}"
    );
    let server = Server::builder()
        .empty()
        .rate_store(store)
        .mount("shared", &shared)
        .build()
        .unwrap();
    assert_eq!(server.tool_names(), ["shared_rated"]);
    let bounded = Server::builder()
        .empty()
        .tool::<nap>()
        .tool_timeout(std::time::Duration::from_millis(50))
        .build()
        .unwrap();
    let server = Server::builder().empty().mount("sleepy", &bounded).build().unwrap();
    let client = TestClient::new(&server);
    let slow = client.call_tool("sleepy_nap", json!({"ms": 5000})).await.unwrap();
    assert_eq!(slow.is_error, Some(true));
    assert!(slow.text().contains("timed out"), "{}", slow.text());
    let quick = client.call_tool("sleepy_nap", json!({"ms": 1})).await.unwrap();
    assert_eq!(quick.text(), "rested");
}

#[test]
fn clashes_and_bad_prefixes_are_start_up_errors() {
    let crm = crm();
    let twice = Server::builder().empty().mount("crm", &crm).mount("crm", &crm).build();
    match twice {
        Err(BuildError::DuplicateTool { name, .. }) => assert_eq!(name, "crm_lookup"),
        other => panic!("expected a duplicate tool error, got {other:?}"),
    }
    let resources = Server::builder().empty().mount("a", &crm).mount("b", &crm).build();
    assert!(
        matches!(resources, Err(BuildError::Duplicate { kind: "resource", .. })),
        "{resources:?}"
    );
    let bad = Server::builder().empty().mount("bad prefix", &crm).build();
    assert_eq!(bad.unwrap_err(), BuildError::InvalidMountPrefix("bad prefix".into()));
    let header = Server::builder().empty().tool::<tenant_echo>().build();
    assert!(
        matches!(&header, Err(BuildError::InvalidHeaderParam(name, _)) if name == "tenant_echo"),
        "{header:?}"
    );
}

#[tokio::test]
async fn prefixed_uris_let_two_mounts_of_the_same_resources_live_side_by_side() {
    let server = Server::builder()
        .empty()
        .mount_with("eu", &crm_of(vec!["Ada", "Grace"]), MountUris::Prefixed)
        .mount_with("us", &crm_of(vec!["Linus"]), MountUris::Prefixed)
        .build()
        .unwrap();
    let client = TestClient::new(&server);
    let uris: Vec<String> = client
        .list_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri)
        .collect();
    assert_eq!(uris, ["crm://eu/about", "crm://us/about"]);
    let templates: Vec<String> = client
        .list_resource_templates()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.uri_template)
        .collect();
    assert_eq!(templates, ["crm://eu/customers/{index}", "crm://us/customers/{index}"]);

    let about = serde_json::to_value(client.read_resource("crm://us/about").await.unwrap()).unwrap();
    assert_eq!(
        about["contents"][0]["text"], "1 customers",
        "the mounted server's own state"
    );
    assert_eq!(
        about["contents"][0]["uri"], "crm://us/about",
        "the contents name the URI asked for"
    );
    let grace = serde_json::to_value(client.read_resource("crm://eu/customers/1").await.unwrap()).unwrap();
    assert_eq!(grace["contents"][0]["text"], "Grace");
    assert_eq!(grace["contents"][0]["uri"], "crm://eu/customers/1");
    let unprefixed = client.read_resource("crm://about").await.unwrap_err();
    assert_eq!(
        unprefixed.code().0,
        -32602,
        "only the prefixed URI is served: {unprefixed:?}"
    );
}

/// A shared rate store that admits every call.
struct Unlimited;

impl mcp_runtime::RateStore for Unlimited {
    fn spend<'a>(&'a self, _: &'a str, _: mcp_runtime::Rate) -> mcp_runtime::RateFuture<'a> {
        Box::pin(std::future::ready(Ok(None)))
    }
}
