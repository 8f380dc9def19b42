//! The gateway's configuration: the `mcpServers` file hosts already use.
//!
//! ```json
//! {"mcpServers": {
//!   "files":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]},
//!   "github": {"url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
//!              "prefix": "gh", "scopes": ["github"]}
//! }}
//! ```
//!
//! An entry runs a command (stdio: `command`, `args`, `env`, `cwd`) or
//! reaches a URL (Streamable HTTP: `url`, `headers`, and `oauth`:
//! `{"issuer", "clientId", "clientSecret", "scope"}` for tokens by the client
//! credentials grant). Its tools and prompts
//! are named `prefix_name`; `prefix` defaults to the entry's name, and `""`
//! serves one upstream under its own names. `scopes` are asked of callers
//! for every item of the entry (with authorization on). `${VAR}` in `env`,
//! `headers` and `args` is the gateway's environment variable `VAR`, so that
//! secrets stay out of the file. `protocolVersion` (`2026-07-28` or
//! `2025-11-25`) makes the gateway speak that revision to the upstream
//! instead of finding out with `server/discover`. `sessionPerCapabilities`
//! (a 2025-11-25 upstream: a session per set of capabilities callers
//! declare; by default on for a `url`, off for a `command`, where each
//! session is another process) is `ProxyOptions::session_per_capabilities`.

use mcp_runtime::client::{Client, ClientBuilder, Era};
use mcp_runtime::ProxyOptions;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The file.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    pub mcp_servers: BTreeMap<String, Entry>,
}

/// One upstream.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// `stdio`, `http` or `streamable-http` (as some hosts write it); told by the other fields when absent.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub prefix: Option<String>,
    #[serde(default)]
    pub scopes: Vec<String>,
    /// Tokens for a `url` by the OAuth client credentials grant.
    pub oauth: Option<OAuth>,
    /// Speak this revision only (`2026-07-28` or `2025-11-25`) instead of finding out.
    #[serde(default, rename = "protocolVersion")]
    pub protocol_version: Option<String>,
    /// A 2025-11-25 upstream: a session per set of capabilities callers declare.
    #[serde(default, rename = "sessionPerCapabilities")]
    pub session_per_capabilities: Option<bool>,
}

/// An upstream's own OAuth client: tokens from `issuer` by the client
/// credentials grant, for the upstream's URL.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OAuth {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    pub scope: Option<String>,
}

/// An upstream ready to proxy: its prefix, its client, how it is served.
pub struct Upstream {
    pub name: String,
    pub prefix: String,
    pub client: ClientBuilder,
    pub options: ProxyOptions,
}

impl Config {
    /// Reads and checks the file at `path`.
    pub fn load(path: &str) -> Result<Config, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
        let config: Config = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
        if config.mcp_servers.is_empty() {
            return Err(format!("{path}: mcpServers names no server"));
        }
        Ok(config)
    }

    /// Each entry as an upstream, or what is wrong with the first bad one.
    pub fn upstreams(self) -> Result<Vec<Upstream>, String> {
        self.mcp_servers
            .into_iter()
            .map(|(name, entry)| entry.upstream(&name).map_err(|e| format!("mcpServers.{name}: {e}")))
            .collect()
    }
}

impl Entry {
    fn upstream(self, name: &str) -> Result<Upstream, String> {
        let client = match (self.command, self.url, self.kind.as_deref()) {
            (Some(command), None, None | Some("stdio")) => {
                if !self.headers.is_empty() || self.oauth.is_some() {
                    return Err("headers and oauth go with a url, not a command".into());
                }
                let args = self.args.iter().map(|a| expand(a)).collect::<Result<Vec<_>, _>>()?;
                let mut client = Client::stdio(command, args);
                for (key, value) in &self.env {
                    client = client.env(key, expand(value)?);
                }
                if let Some(dir) = self.cwd {
                    client = client.current_dir(dir);
                }
                client
            }
            (None, Some(url), None | Some("http") | Some("streamable-http")) => {
                if !self.args.is_empty() || !self.env.is_empty() || self.cwd.is_some() {
                    return Err("args, env and cwd go with a command, not a url".into());
                }
                let mut client = Client::http(url);
                for (header, value) in &self.headers {
                    client = client.header(header, expand(value)?);
                }
                if let Some(oauth) = &self.oauth {
                    let secret = expand(&oauth.client_secret)?;
                    client = client.client_credentials(&oauth.issuer, &oauth.client_id, secret, oauth.scope.as_deref());
                }
                client
            }
            (Some(_), Some(_), _) => return Err("give a command or a url, not both".into()),
            (None, None, _) => return Err("give a command (stdio) or a url (Streamable HTTP)".into()),
            (_, _, Some(kind)) => {
                return Err(format!(
                    "type {kind:?} does not go with what is given (stdio: command; http: url)"
                ))
            }
        };
        let client = match self.protocol_version.as_deref() {
            None => client,
            Some("2026-07-28") => client.era(Era::Latest),
            Some("2025-11-25") => client.era(Era::Legacy),
            Some(other) => {
                return Err(format!(
                    "protocolVersion {other:?}: the gateway speaks 2026-07-28 or 2025-11-25"
                ))
            }
        };
        Ok(Upstream {
            name: name.to_owned(),
            prefix: self.prefix.unwrap_or_else(|| name.to_owned()),
            client: client.name(name),
            options: {
                let options = ProxyOptions::default().scopes(self.scopes);
                match self.session_per_capabilities {
                    Some(yes) => options.session_per_capabilities(yes),
                    None => options,
                }
            },
        })
    }
}

/// `text` with each `${VAR}` replaced by the environment variable `VAR`.
fn expand(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| format!("unclosed ${{ in {text:?}"))?;
        let var = &after[..end];
        let value = std::env::var(var).map_err(|_| format!("the environment variable {var} is not set"))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
