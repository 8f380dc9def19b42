//! The catalog: what a server serves (tools, static resources, templates,
//! prompts), each sorted (the deterministic list order; tools and prompts
//! are found in it by binary search, resources through an index), and
//! each item's JSON serialized once, by the first list that needs it, so
//! that list pages are written by concatenation. Read-only once built;
//! swapped whole when the set changes.

use super::entry::Completer;
use super::entry::{PromptEntry, ResourceEntry, ToolEntry};
use super::{BuildError, SkillPart};
use crate::protocol::{ListChangedCapability, ResourcesCapability, ServerCapabilities};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

/// An index from a name (or URI) to its item's place in the catalog.
pub(crate) type Index = HashMap<String, usize, BuildHasherDefault<NameHasher>>;

/// FNV-1a over the name's bytes: the index's keys are the server's own names,
/// fixed once the catalog is built, so a name a client sends can only land
/// among them, never lengthen a probe; what matters is that hashing a short
/// name costs a few instructions, not SipHash's rounds, on every call.
#[derive(Clone, Copy)]
pub(crate) struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> Self {
        NameHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// What is served, read-only once built: swapped whole when the set changes.
#[derive(Debug, Default, Clone)]
pub(crate) struct Catalog {
    /// Tools sorted by name (a deterministic list order, and the order
    /// [`tool_at`](Self::tool_at) searches), each name once.
    pub tools: Vec<ToolEntry>,
    /// Static resources sorted by URI, then the skills' files (from
    /// `own_resources` on) in the skills' order.
    pub resources: Vec<ResourceEntry>,
    /// How many of `resources` are not skill files.
    pub own_resources: usize,
    pub resource_index: Index,
    /// Resource templates sorted by template.
    pub templates: Vec<ResourceEntry>,
    /// Prompts sorted by name, each name once (as `tools`).
    pub prompts: Vec<PromptEntry>,
    /// Each kind's listing, serialized when a list of that kind first asks.
    listings: Listings,
    /// Skills sorted by the URI of their `SKILL.md` (the Skills extension).
    pub skills: Vec<SkillPart>,
    /// The serialized entry of each skill, in the same order.
    pub skills_json: Vec<String>,
    pub skill_index: Index,
    /// Whether a tool runs as a task: the tasks extension is declared and
    /// `tasks/*` served.
    pub has_tasks: bool,
    /// Whether an item has a visibility predicate of its own.
    pub has_predicates: bool,
    /// Whether an item asks for OAuth scopes.
    pub has_scopes: bool,
    /// Whether a tool has `_meta.ui` or a resource is an app (MCP Apps):
    /// what is listed differs by whether the caller renders apps.
    pub has_apps: bool,
}

/// Each item's serialized JSON as a list shows it, in the catalog's order,
/// one cell per kind, so that a list of one kind builds no other's.
#[derive(Debug, Default, Clone)]
struct Listings {
    tools: OnceLock<Vec<String>>,
    /// The tools as callers that do not render apps see them (without
    /// `_meta.ui`).
    tools_plain: OnceLock<Vec<String>>,
    resources: OnceLock<Vec<String>>,
    templates: OnceLock<Vec<String>>,
    prompts: OnceLock<Vec<String>>,
    /// The hashes of each [`Listing`]'s items, by its place.
    hashes: [OnceLock<Vec<u64>>; LISTINGS],
}

/// How many [`Listing`]s there are (`Skills` stays the last).
const LISTINGS: usize = Listing::Skills as usize + 1;

/// One of the catalog's listings, as a list request's caller is shown them.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Listing {
    Tools,
    /// The tools as callers that do not render apps see them.
    ToolsPlain,
    Resources,
    Templates,
    Prompts,
    /// The last: [`LISTINGS`] counts up to it.
    Skills,
}

fn index_by<T>(
    items: &[T],
    key: impl Fn(&T) -> &str,
    location: impl Fn(&T) -> &'static str,
    kind: &'static str,
) -> Result<Index, BuildError> {
    let mut index = Index::with_capacity_and_hasher(items.len(), Default::default());
    for (i, item) in items.iter().enumerate() {
        if let Some(prev) = index.insert(key(item).to_owned(), i) {
            return Err(duplicate(kind, key(item), location(&items[prev]), location(item)));
        }
    }
    Ok(index)
}

/// Checks that items sorted by `key` hold each key once (a repeated one
/// is next to its twin); they are then found by binary search, with no
/// index to build.
fn unique_sorted<T>(
    items: &[T],
    key: impl Fn(&T) -> &str,
    location: impl Fn(&T) -> &'static str,
    kind: &'static str,
) -> Result<(), BuildError> {
    match items.windows(2).find(|pair| key(&pair[0]) == key(&pair[1])) {
        Some(pair) => Err(duplicate(kind, key(&pair[1]), location(&pair[0]), location(&pair[1]))),
        None => Ok(()),
    }
}

fn duplicate(kind: &'static str, name: &str, first: &'static str, second: &'static str) -> BuildError {
    let name = name.to_owned();
    if kind == "tool" {
        BuildError::DuplicateTool { name, first, second }
    } else {
        BuildError::Duplicate {
            kind,
            name,
            first,
            second,
        }
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "{}".into())
}

/// What the catalog is built from.
#[derive(Default, Clone)]
pub(crate) struct Parts {
    pub tools: Vec<ToolEntry>,
    pub resources: Vec<ResourceEntry>,
    pub prompts: Vec<PromptEntry>,
    pub skills: Vec<SkillPart>,
}

impl Catalog {
    pub(crate) fn build(parts: Parts) -> Result<Catalog, BuildError> {
        let Parts {
            mut tools,
            resources,
            mut prompts,
            mut skills,
        } = parts;
        tools.sort_by(|a, b| a.name().cmp(b.name()));
        for t in &tools {
            if !crate::tools::is_valid_name(t.name()) {
                return Err(BuildError::InvalidToolName(t.name().to_owned()));
            }
            if !t.checked_at_build() {
                continue;
            }
            let schema = &t.tool().input_schema;
            if schema.get("type").and_then(|v| v.as_str()) != Some("object") {
                return Err(BuildError::InvalidInputSchema(t.name().to_owned()));
            }
            crate::headers::check_declared(schema)
                .map(drop)
                .map_err(|why| BuildError::InvalidHeaderParam(t.name().to_owned(), why))?;
        }
        unique_sorted(&tools, |t| t.name(), |t| t.location, "tool")?;
        let (mut templates, mut statics): (Vec<_>, Vec<_>) = resources.into_iter().partition(|r| r.template.is_some());
        statics.sort_by(|a, b| a.uri.cmp(&b.uri));
        templates.sort_by(|a, b| a.uri.cmp(&b.uri));
        skills.sort_by(|a, b| a.skill.uri.cmp(&b.skill.uri));
        let skill_index = index_by(&skills, |s| &s.skill.uri, |_| "skills", "skill")?;
        let own_resources = statics.len();
        // A nested skill's files are its enclosing skill's too (skills
        // nest, publication is flat): each is published once, by the
        // innermost skill that holds it.
        let depth = |uri: &str| uri.bytes().filter(|&b| b == b'/').count();
        let mut innermost: HashMap<&str, usize> = HashMap::new();
        for part in &skills {
            let d = depth(&part.skill.uri);
            for file in &part.skill.files {
                let at = innermost.entry(file.uri.as_str()).or_insert(d);
                *at = (*at).max(d);
            }
        }
        for part in &skills {
            let d = depth(&part.skill.uri);
            statics.extend(
                part.skill
                    .files
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| innermost.get(f.uri.as_str()) == Some(&d))
                    .map(|(i, f)| super::skills::file_entry(part, i, f)),
            );
        }
        let resource_index = index_by(&statics, |r| &r.uri, |r| r.location, "resource")?;
        index_by(&templates, |r| &r.uri, |r| r.location, "resource template")?;
        prompts.sort_by(|a, b| a.prompt.name.cmp(&b.prompt.name));
        unique_sorted(&prompts, |p| &p.prompt.name, |p| p.location, "prompt")?;
        let has_tasks = tools
            .iter()
            .any(|t| t.task.mode != crate::tasks::TaskMode::Never || t.relays_tasks);
        let has_predicates = tools.iter().any(|t| t.visible.is_some())
            || statics.iter().chain(&templates).any(|r| r.visible.is_some())
            || prompts.iter().any(|p| p.visible.is_some());
        let has_scopes = tools.iter().any(|t| !t.scopes.is_empty())
            || statics.iter().chain(&templates).any(|r| !r.scopes.is_empty())
            || prompts.iter().any(|p| !p.scopes.is_empty());
        let has_apps = tools.iter().any(|t| t.ui.is_some()) || statics.iter().any(|r| r.app);
        let catalog = Catalog {
            has_apps,
            has_tasks,
            has_predicates,
            has_scopes,
            tools,
            resources: statics,
            own_resources,
            resource_index,
            templates,
            prompts,
            listings: Listings::default(),
            skills_json: skills.iter().map(|s| s.skill.entry_json.clone()).collect(),
            skills,
            skill_index,
        };
        super::apps::check(&catalog)?;
        Ok(catalog)
    }

    /// The place of the tool `name` in `tools`.
    pub(crate) fn tool_at(&self, name: &str) -> Option<usize> {
        self.tools.binary_search_by(|t| t.name().cmp(name)).ok()
    }

    /// The place of the prompt `name` in `prompts`.
    pub(crate) fn prompt_at(&self, name: &str) -> Option<usize> {
        self.prompts.binary_search_by(|p| p.prompt.name.as_str().cmp(name)).ok()
    }

    /// The tools' listing (serialized once, by the first list that needs
    /// it, as are the others), as callers that render apps see them.
    pub(crate) fn tools_json(&self) -> &[String] {
        self.listings
            .tools
            .get_or_init(|| self.tools.iter().map(|t| to_json(t.tool())).collect())
    }

    /// The tools' listing as callers that do not render apps see them
    /// (without `_meta.ui`): the same as [`tools_json`](Self::tools_json)
    /// unless some tool has a view.
    pub(crate) fn tools_plain_json(&self) -> &[String] {
        if !self.tools.iter().any(|t| t.ui.is_some()) {
            return self.tools_json();
        }
        self.listings
            .tools_plain
            .get_or_init(|| self.tools.iter().map(|t| to_json(&t.plain_tool())).collect())
    }

    /// The static resources' listing.
    pub(crate) fn resources_json(&self) -> &[String] {
        self.listings
            .resources
            .get_or_init(|| self.resources.iter().map(|r| to_json(&r.listing)).collect())
    }

    /// The resource templates' listing.
    pub(crate) fn templates_json(&self) -> &[String] {
        self.listings
            .templates
            .get_or_init(|| self.templates.iter().map(|r| to_json(&r.listing)).collect())
    }

    /// The prompts' listing.
    pub(crate) fn prompts_json(&self) -> &[String] {
        self.listings
            .prompts
            .get_or_init(|| self.prompts.iter().map(|p| to_json(&p.prompt)).collect())
    }

    /// A 64-bit hash of each item of `listing`, made once, by the first
    /// listen stream that compares what its caller is shown.
    pub(crate) fn hashes(&self, listing: Listing) -> &[u64] {
        let items = match listing {
            Listing::Tools => self.tools_json(),
            Listing::ToolsPlain => self.tools_plain_json(),
            Listing::Resources => self.resources_json(),
            Listing::Templates => self.templates_json(),
            Listing::Prompts => self.prompts_json(),
            Listing::Skills => &self.skills_json,
        };
        let cell = &self.listings.hashes[listing as usize];
        cell.get_or_init(|| {
            items
                .iter()
                .map(|item| {
                    let mut hasher = std::collections::hash_map::DefaultHasher::new();
                    hasher.write(item.as_bytes());
                    hasher.finish()
                })
                .collect()
        })
    }

    pub(crate) fn parts(&self) -> Parts {
        Parts {
            tools: self.tools.clone(),
            resources: self.resources[..self.own_resources]
                .iter()
                .chain(&self.templates)
                .cloned()
                .collect(),
            prompts: self.prompts.clone(),
            skills: self.skills.clone(),
        }
    }
}

impl Catalog {
    /// The resource a URI names: a static one, else the first template it
    /// matches, with the variables it binds.
    pub(crate) fn find_resource(&self, uri: &str) -> Option<(&ResourceEntry, Vec<(String, String)>)> {
        self.find_resource_where(uri, |_| true)
    }

    /// [`find_resource`](Self::find_resource) among the entries `shown`
    /// keeps: one it leaves out is absent, so a template may serve the URI
    /// of a hidden static resource.
    pub(crate) fn find_resource_where(
        &self,
        uri: &str,
        shown: impl Fn(&ResourceEntry) -> bool,
    ) -> Option<(&ResourceEntry, Vec<(String, String)>)> {
        if let Some(&i) = self.resource_index.get(uri) {
            if shown(&self.resources[i]) {
                return Some((&self.resources[i], Vec::new()));
            }
        }
        self.templates.iter().find_map(|t| {
            t.template
                .as_ref()
                .and_then(|tpl| tpl.matches(uri))
                .filter(|_| shown(t))
                .map(|vars| (t, vars))
        })
    }

    /// Whether anything the catalog serves completes.
    pub(crate) fn anything_completes(&self) -> bool {
        self.prompts
            .iter()
            .flat_map(|p| &p.completers)
            .chain(self.templates.iter().flat_map(|t| &t.completers))
            .any(Completer::completes)
    }

    /// The capabilities the server offers, derived from what it serves: no
    /// `tools` capability when there are no tools. List changes and resource
    /// updates are announced on `subscriptions/listen` streams, so the kinds that
    /// are present declare `listChanged` (and resources `subscribe`). Every
    /// server sends log messages to a request that asks for them (its
    /// `io.modelcontextprotocol/logLevel`), so every one declares `logging`.
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        let catalog = self;
        // Skill files are resources: skills declare `resources` too.
        let has_resources = !catalog.resources.is_empty() || !catalog.templates.is_empty();
        let has_skills = !catalog.skills.is_empty();
        ServerCapabilities {
            tools: (!catalog.tools.is_empty()).then_some(ListChangedCapability {
                list_changed: Some(true),
            }),
            prompts: (!catalog.prompts.is_empty()).then_some(ListChangedCapability {
                list_changed: Some(true),
            }),
            resources: has_resources.then_some(ResourcesCapability {
                list_changed: Some(true),
                subscribe: Some(true),
            }),
            completions: catalog.anything_completes().then(Default::default),
            extensions: (catalog.has_tasks || has_skills).then(|| {
                let mut extensions = serde_json::Map::new();
                if catalog.has_tasks {
                    extensions.insert(crate::protocol::TASKS_EXTENSION.to_owned(), serde_json::json!({}));
                }
                if has_skills {
                    // Settings inline under the id; `resources/directory/read` is served.
                    extensions.insert(
                        crate::protocol::SKILLS_EXTENSION.to_owned(),
                        serde_json::json!({ "directoryRead": true }),
                    );
                }
                extensions
            }),
            logging: Some(Default::default()),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Prompt, Tool};

    fn tool(name: &str) -> ToolEntry {
        let tool = Tool {
            name: name.into(),
            input_schema: serde_json::json!({"type": "object"}),
            ..Default::default()
        };
        ToolEntry::dynamic(tool, |_args, _ctx| async { "ok" })
    }

    fn prompt(name: &str) -> PromptEntry {
        let prompt = Prompt {
            name: name.into(),
            ..Default::default()
        };
        PromptEntry::dynamic(prompt, |_args, _ctx| async { String::from("ok") })
    }

    #[test]
    fn tools_and_prompts_are_found_by_name_in_their_sorted_order() {
        let parts = Parts {
            tools: ["walk", "add", "search", "zip", "b"].into_iter().map(tool).collect(),
            prompts: ["review", "explain"].into_iter().map(prompt).collect(),
            ..Default::default()
        };
        let catalog = Catalog::build(parts).unwrap();
        for name in ["add", "b", "search", "walk", "zip"] {
            let at = catalog.tool_at(name).unwrap_or_else(|| panic!("{name} not found"));
            assert_eq!(catalog.tools[at].name(), name);
        }
        assert_eq!(catalog.tool_at("a"), None);
        assert_eq!(catalog.tool_at("zz"), None);
        assert_eq!(
            catalog
                .prompt_at("review")
                .map(|i| catalog.prompts[i].prompt.name.as_str()),
            Some("review")
        );
        assert_eq!(catalog.prompt_at("walk"), None);
    }

    #[test]
    fn a_name_given_twice_stops_the_build_wherever_it_sorts() {
        let tools = Parts {
            tools: ["m", "dup", "a", "dup"].into_iter().map(tool).collect(),
            ..Default::default()
        };
        match Catalog::build(tools) {
            Err(BuildError::DuplicateTool { name, .. }) => assert_eq!(name, "dup"),
            other => panic!("expected DuplicateTool, got {:?}", other.map(|_| ())),
        }
        let prompts = Parts {
            prompts: ["z", "a", "z"].into_iter().map(prompt).collect(),
            ..Default::default()
        };
        match Catalog::build(prompts) {
            Err(BuildError::Duplicate { kind, name, .. }) => assert_eq!((kind, name.as_str()), ("prompt", "z")),
            other => panic!("expected Duplicate, got {:?}", other.map(|_| ())),
        }
    }
}
