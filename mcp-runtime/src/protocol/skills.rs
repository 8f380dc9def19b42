//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): Agent
//! Skills served as `skill://` resources, listed with `skills/list`,
//! fetched with `skills/get`, browsed with `resources/directory/read`. The
//! extension publishes no JSON Schema: these mirror the TypeScript
//! interfaces of its specification.

use super::{CacheScope, Cursor, JsonObject, Meta, Resource, ResultType};
use serde::{Deserialize, Serialize};

/// The extension's identifier, in the server's `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The MIME type of a directory resource (`resources/directory/read`).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// The extension's settings, inline under its identifier.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillsCapability {
    /// Whether the server serves `resources/directory/read`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directory_read: Option<bool>,
}

/// One file of a skill, as its entry lists it (`SkillResource`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillResource {
    /// The file's URI.
    pub uri: String,
    /// `sha256:` and the lowercase hex SHA-256 of the bytes `resources/read` returns.
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// A skill's files: every one listed, or `"dynamic"` when its content is
/// generated and has no stable digests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SkillResources {
    /// Every file, `SKILL.md` included.
    Files(Vec<SkillResource>),
    /// The string `"dynamic"`.
    Dynamic(Dynamic),
}

/// The string `"dynamic"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dynamic {
    /// `"dynamic"`.
    #[serde(rename = "dynamic")]
    Dynamic,
}

/// A skill entry of `skills/list` and `skills/get` (`Skill`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// The URI of its `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` frontmatter as JSON, verbatim (`name` and `description` at least).
    pub frontmatter: JsonObject,
    /// Its files.
    pub resources: SkillResources,
}

/// The result of `skills/list` (`ListSkillsResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// One page of skills: a skill never spans pages.
    pub skills: Vec<Skill>,
    /// The next page's cursor, absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// How long the result may be cached.
    pub ttl_ms: u64,
    /// Who may share a cached copy.
    pub cache_scope: CacheScope,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The params of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetSkillParams {
    /// The URI of a skill's `SKILL.md`.
    pub uri: String,
}

/// The result of `skills/get` (`GetSkillResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// The skill, its `uri` the one asked for.
    pub skill: Skill,
    /// How long the result may be cached.
    pub ttl_ms: u64,
    /// Who may share a cached copy.
    pub cache_scope: CacheScope,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The params of `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceDirectoryParams {
    /// The directory's URI, without a trailing slash.
    pub uri: String,
    /// The page to read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
}

/// The result of `resources/directory/read`: the directory's direct
/// children, files as resources and subdirectories with
/// [`DIRECTORY_MIME_TYPE`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceDirectoryResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// One page of children.
    pub resources: Vec<Resource>,
    /// The next page's cursor, absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
