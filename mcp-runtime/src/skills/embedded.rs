//! The form of a skill the `skills!` macro writes: every file's bytes
//! (`include_bytes!`, so the build reruns when one changes), digest and
//! MIME type, and the frontmatter as JSON text, all computed at compile
//! time; turned into [`Skills`] with no file I/O.

use super::{Skill, Skills};
use bytes::Bytes;
use std::sync::Arc;

/// One skill as `skills!` embeds it.
#[derive(Debug)]
pub struct EmbeddedSkill {
    /// Its path below the skills folder (`acme/refunds`).
    pub path: &'static str,
    /// Its `SKILL.md` frontmatter, as compact JSON.
    pub frontmatter: &'static str,
    /// Its files, sorted by path.
    pub files: &'static [EmbeddedFile],
}

/// One file of an [`EmbeddedSkill`].
#[derive(Debug)]
pub struct EmbeddedFile {
    /// Its path relative to the skill's folder.
    pub path: &'static str,
    /// Its bytes.
    pub bytes: &'static [u8],
    /// `sha256:<hex>` of `bytes`.
    pub digest: &'static str,
    /// Its MIME type.
    pub mime: &'static str,
}

/// The [`Skills`] of what `skills!` embedded.
pub fn skills(embedded: &'static [EmbeddedSkill]) -> Skills {
    let skills = embedded
        .iter()
        .map(|s| {
            // Written by the macro from a parsed object: it parses back.
            let frontmatter = serde_json::from_str(s.frontmatter).unwrap_or_default();
            let files = s
                .files
                .iter()
                .map(|f| {
                    (
                        f.path.to_owned(),
                        Bytes::from_static(f.bytes),
                        f.digest.to_owned(),
                        f.mime,
                    )
                })
                .collect();
            Arc::new(Skill::new(s.path, frontmatter, files, Vec::new()))
        })
        .collect();
    Skills { skills }
}
