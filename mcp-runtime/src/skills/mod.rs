//! Agent Skills (the `io.modelcontextprotocol/skills` extension): the
//! skills a server serves, each with its `SKILL.md` frontmatter as JSON and
//! every file's bytes, digest and size, so that `skills/list`, `skills/get`,
//! `resources/read` and `resources/directory/read` answer from memory.
//! They come from a folder read at run time ([`Skills::from_dir`]) or
//! embedded at compile time (`skills!`, [`embedded`]); the naming rules,
//! the frontmatter parse and the limits are `mcp-runtime-grammar`'s, the
//! same on both paths.

pub(crate) mod embedded;
mod tree;

pub(crate) use tree::{children, contains};

use crate::protocol::{Skill as WireSkill, SkillResource, SkillResources};
use bytes::Bytes;
pub use mcp_grammar::skills::{SkillError, SkillRule};
use serde_json::{Map, Value};
use std::path::Path;
use std::sync::Arc;

/// A set of skills to serve: read from a folder ([`Skills::from_dir`]) or
/// embedded in the binary at compile time (`mcp_runtime::skills!`), handed
/// to [`ServerBuilder::skills`](crate::ServerBuilder::skills).
///
/// A folder holds one folder per skill, whose path below it is the
/// skill's path (`acme/billing/refunds/SKILL.md` is
/// `skill://acme/billing/refunds/SKILL.md`); every file in a skill's
/// folder is one of its resources.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("skills-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(dir.join("greeting")).unwrap();
/// # std::fs::write(dir.join("greeting/SKILL.md"), "---\nname: greeting\ndescription: Greet people\n---\nSay hello.\n").unwrap();
/// let skills = mcp_runtime::Skills::from_dir(&dir)?.scopes(["skills:read"]);
/// assert_eq!(skills.uris(), ["skill://greeting/SKILL.md"]);
/// let server = mcp_runtime::Server::builder().skills(skills).build().unwrap();
/// # drop(server); std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), mcp_runtime::SkillError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Skills {
    pub(crate) skills: Vec<Arc<Skill>>,
}

impl Skills {
    /// Reads and checks every skill below `dir` (see the type's docs): a
    /// file in no skill's folder, a `SKILL.md` without valid frontmatter, a
    /// name that breaks the naming rule or differs from its folder's, a
    /// skill past 512 files or 16 MiB is an error naming the file and the rule.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Skills, SkillError> {
        let read = mcp_grammar::skills::read_skills(dir.as_ref())?;
        let skills = read
            .into_iter()
            .map(|s| {
                let files = s
                    .files
                    .into_iter()
                    .map(|f| (f.path, Bytes::from(f.bytes), f.digest, f.mime))
                    .collect();
                Arc::new(Skill::new(&s.path, s.frontmatter, files, Vec::new()))
            })
            .collect();
        Ok(Skills { skills })
    }

    /// Asks every caller for these OAuth scopes, as a resource's
    /// `scopes(..)` does: `skills/get`, `resources/read` and
    /// `resources/directory/read` of these skills without them are refused
    /// (403 `insufficient_scope`), and lists leave them out where the
    /// endpoint hides what a token does not reach.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let scopes: Vec<String> = scopes.into_iter().map(Into::into).collect();
        for skill in &mut self.skills {
            let mut s = (**skill).clone();
            s.scopes.clone_from(&scopes);
            *skill = Arc::new(s);
        }
        self
    }

    /// The URIs of the skills' `SKILL.md`, sorted.
    pub fn uris(&self) -> Vec<String> {
        self.skills.iter().map(|s| s.uri.clone()).collect()
    }

    /// How many skills there are.
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }
}

/// One skill as the server serves it.
#[derive(Debug, Clone)]
pub(crate) struct Skill {
    /// `skill://<path>/SKILL.md`.
    pub uri: String,
    /// `skill://<path>`: its folder, a directory resource.
    pub root: String,
    pub frontmatter: Map<String, Value>,
    /// Sorted by URI.
    pub files: Vec<SkillFile>,
    /// The OAuth scopes a caller needs.
    pub scopes: Vec<String>,
    /// The entry of `skills/list` and `skills/get`, serialized once.
    pub entry_json: String,
}

/// One file of a skill.
#[derive(Debug, Clone)]
pub(crate) struct SkillFile {
    pub uri: String,
    pub bytes: Bytes,
    pub digest: String,
    pub mime: &'static str,
}

impl Skill {
    /// A skill at `path` (`acme/refunds`), its files given relative to its folder.
    pub(crate) fn new(
        path: &str,
        frontmatter: Map<String, Value>,
        files: Vec<(String, Bytes, String, &'static str)>,
        scopes: Vec<String>,
    ) -> Skill {
        let root = format!("skill://{path}");
        let mut files: Vec<SkillFile> = files
            .into_iter()
            .map(|(rel, bytes, digest, mime)| SkillFile {
                uri: format!("{root}/{rel}"),
                bytes,
                digest,
                mime,
            })
            .collect();
        files.sort_by(|a, b| a.uri.cmp(&b.uri));
        let mut skill = Skill {
            uri: format!("{root}/{}", mcp_grammar::skills::SKILL_MANIFEST),
            root,
            frontmatter,
            files,
            scopes,
            entry_json: String::new(),
        };
        skill.entry_json = skill.serialize();
        skill
    }

    fn serialize(&self) -> String {
        let entry = WireSkill {
            uri: self.uri.clone(),
            frontmatter: self.frontmatter.clone(),
            resources: SkillResources::Files(
                self.files
                    .iter()
                    .map(|f| SkillResource {
                        uri: f.uri.clone(),
                        digest: f.digest.clone(),
                        size: f.bytes.len() as u64,
                    })
                    .collect(),
            ),
        };
        serde_json::to_string(&entry).unwrap_or_else(|_| "{}".into())
    }

    /// The skill with every URI under `prefix`, as the first segment after
    /// `skill://` (a mount's [`MountUris::Prefixed`](crate::MountUris::Prefixed)).
    pub(crate) fn prefixed(&self, prefix: &str) -> Skill {
        let at = |uri: &str| match uri.strip_prefix("skill://") {
            Some(rest) => format!("skill://{prefix}/{rest}"),
            None => uri.to_owned(),
        };
        let mut skill = self.clone();
        skill.uri = at(&self.uri);
        skill.root = at(&self.root);
        for file in &mut skill.files {
            file.uri = at(&file.uri);
        }
        skill.entry_json = skill.serialize();
        skill
    }

    /// The frontmatter's `name`.
    pub(crate) fn name(&self) -> &str {
        self.frontmatter.get("name").and_then(Value::as_str).unwrap_or_default()
    }

    /// The frontmatter's `description`.
    pub(crate) fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }
}
