//! Agent Skills served over MCP (the `io.modelcontextprotocol/skills`
//! extension, SEP-2640): the naming rules, the `SKILL.md` frontmatter (YAML
//! 1.2, rendered as JSON), the limits, and reading a folder of skills with
//! every file's SHA-256 digest and size. The `skills!` macro runs this at
//! compile time, `ServerBuilder::skills_dir` at run time: one set of rules.

mod folder;
mod frontmatter;
mod name;

pub use folder::{digest, mime_type, read_skills, serve_as_text, SkillDir, SkillFile};
pub use frontmatter::{parse_skill_md, split_frontmatter};
pub use name::{check_name, check_segment};

use std::path::PathBuf;
use std::string::String;

/// The most resource entries one skill may list, `SKILL.md` included.
pub const MAX_SKILL_RESOURCES: usize = 512;
/// The most bytes all files of one skill may add up to (16 MiB).
pub const MAX_SKILL_TOTAL_BYTES: u64 = 16 * 1024 * 1024;
/// The file that makes a folder a skill.
pub const SKILL_MANIFEST: &str = "SKILL.md";
/// The MIME type `SKILL.md` is served with.
pub const SKILL_MD_MIME: &str = "text/markdown";
/// The longest skill name.
pub const MAX_NAME: usize = 64;
/// The longest description.
pub const MAX_DESCRIPTION: usize = 1024;
/// The longest `compatibility` field.
pub const MAX_COMPATIBILITY: usize = 500;
/// The `metadata` key prefix the MCP specification reserves.
pub const RESERVED_METADATA_PREFIX: &str = "io.modelcontextprotocol/";

/// A rule a skill breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillRule {
    /// `SKILL.md` does not begin with a `---` fenced YAML block.
    #[error("SKILL.md must begin with YAML frontmatter between `---` lines")]
    NoFrontmatter,
    /// The frontmatter is not valid YAML.
    #[error("the frontmatter is not valid YAML: {0}")]
    Yaml(String),
    /// The frontmatter is not a mapping of keys to values.
    #[error("the frontmatter must be a YAML mapping")]
    NotAMapping,
    /// The frontmatter holds a value JSON cannot carry.
    #[error("frontmatter `{0}`: {1}")]
    Unrepresentable(String, &'static str),
    /// A required field is absent or not a string.
    #[error("frontmatter `{0}` is required and must be a string")]
    Missing(&'static str),
    /// A field is longer than its limit.
    #[error("frontmatter `{field}` is {len} characters long; the limit is {max}")]
    TooLong {
        /// The field.
        field: &'static str,
        /// Its length in characters.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A field has the wrong type.
    #[error("frontmatter `{0}` must be {1}")]
    WrongType(&'static str, &'static str),
    /// A `metadata` key uses the prefix the specification reserves.
    #[error("frontmatter metadata key `{0}` uses the reserved prefix `io.modelcontextprotocol/`")]
    ReservedMetadata(String),
    /// The name breaks the naming rule.
    #[error("skill name `{name}`: {why}")]
    Name {
        /// The name.
        name: String,
        /// The part of the rule it breaks.
        why: &'static str,
    },
    /// The name is not the skill folder's name.
    #[error("skill name `{name}` must equal its folder's name `{folder}`")]
    NameNotFolder {
        /// The frontmatter's name.
        name: String,
        /// The folder's name.
        folder: String,
    },
    /// A folder name cannot be a URI path segment.
    #[error("folder name `{0}` is not usable in a skill:// URI (use letters, digits and -._~)")]
    Segment(String),
    /// A file is in no skill.
    #[error("no SKILL.md in its folder or any folder above it (up to the skills folder)")]
    MissingSkillMd,
    /// The folder holds no skill at all.
    #[error("no skill found: no SKILL.md in any folder below it")]
    NoSkills,
    /// `SKILL.md` sits in the skills folder itself.
    #[error("a skill must be a folder inside the skills folder, not the skills folder itself")]
    AtRoot,
    /// A skill has more files than the limit.
    #[error("the skill has {0} files; the limit is 512 (SKILL.md included)")]
    TooManyFiles(usize),
    /// A skill's files add up to more bytes than the limit.
    #[error("the skill's files add up to {0} bytes; the limit is 16 MiB (16777216 bytes)")]
    TooLarge(u64),
    /// `SKILL.md` is not UTF-8.
    #[error("SKILL.md must be UTF-8 text")]
    NotUtf8,
    /// A file name is not UTF-8.
    #[error("file names must be UTF-8")]
    NonUtf8Name,
    /// A file could not be read.
    #[error("cannot be read: {0}")]
    Io(String),
    /// A symbolic link leads out of the skills folder.
    #[error("is a symbolic link to a place outside the skills folder, which is not served")]
    LinkOutside,
    /// A symbolic link leads back to a folder that holds it: the folder
    /// would have no end.
    #[error("is a symbolic link to a folder that holds it (a loop)")]
    LinkLoop,
}

/// Why a folder of skills cannot be served: the file (or folder) and the
/// rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {rule}", file.display())]
pub struct SkillError {
    /// The file or folder at fault.
    pub file: PathBuf,
    /// The rule it breaks.
    pub rule: SkillRule,
}

impl SkillError {
    pub(crate) fn new(file: impl Into<PathBuf>, rule: SkillRule) -> Self {
        SkillError {
            file: file.into(),
            rule,
        }
    }
}
