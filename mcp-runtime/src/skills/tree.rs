//! Skills as directories (`resources/directory/read`): a directory is any
//! prefix of a skill file's URI ending at a `/` (the skill's folder, its
//! subfolders, and the folders of its path above it); its children are the
//! next segment of each file URI below it.

use super::Skill;
use crate::protocol::{Resource, DIRECTORY_MIME_TYPE};
use std::collections::BTreeMap;

/// Whether `dir` is a directory of `skill`.
pub(crate) fn contains(skill: &Skill, dir: &str) -> bool {
    skill.files.iter().any(|f| below(&f.uri, dir).is_some())
}

/// What follows directory `dir` in `uri`, when `uri` is below it: `dir`
/// names at least a first segment after `skill://`, and ends where a
/// segment of `uri` ends.
fn below<'a>(uri: &'a str, dir: &str) -> Option<&'a str> {
    let (_, path) = dir.split_once("://")?;
    if path.is_empty() || path.ends_with('/') {
        return None;
    }
    uri.strip_prefix(dir)?
        .strip_prefix('/')
        .filter(|rest| !rest.is_empty() && !rest.starts_with('/'))
}

/// The direct children of `dir` in `skills`, sorted by name, serialized:
/// files as resources, subfolders as directory resources. Empty when `dir`
/// is no directory of theirs.
pub(crate) fn children<'s>(skills: impl Iterator<Item = &'s Skill>, dir: &str) -> Vec<String> {
    let mut children: BTreeMap<String, String> = BTreeMap::new();
    for skill in skills {
        for file in &skill.files {
            let Some(rest) = below(&file.uri, dir) else { continue };
            let (name, is_dir) = match rest.split_once('/') {
                Some((name, _)) => (name, true),
                None => (rest, false),
            };
            if children.contains_key(name) {
                continue;
            }
            let uri = format!("{dir}/{name}");
            let resource = if is_dir {
                Resource {
                    uri,
                    name: name.to_owned(),
                    mime_type: Some(DIRECTORY_MIME_TYPE.to_owned()),
                    ..Default::default()
                }
            } else {
                let skill_md = file.uri == skill.uri;
                Resource {
                    uri,
                    name: name.to_owned(),
                    description: skill_md.then(|| skill.description().map(str::to_owned)).flatten(),
                    mime_type: Some(file.mime.to_owned()),
                    size: Some(file.bytes.len() as u64),
                    ..Default::default()
                }
            };
            children.insert(
                name.to_owned(),
                serde_json::to_string(&resource).unwrap_or_else(|_| "{}".into()),
            );
        }
    }
    children.into_values().collect()
}

#[cfg(test)]
mod tests {
    use crate::skills::tree::below;

    #[test]
    fn a_directory_is_a_path_of_segments_after_the_scheme() {
        let uri = "skill://acme/pdf/SKILL.md";
        assert_eq!(below(uri, "skill://acme"), Some("pdf/SKILL.md"));
        assert_eq!(below(uri, "skill://acme/pdf"), Some("SKILL.md"));
        for not_a_directory in [
            "skill:",
            "skill:/",
            "skill://",
            "skill://acme/",
            "skill://ac",
            "skill://acme/pdf/SKILL.md",
        ] {
            assert_eq!(below(uri, not_a_directory), None, "{not_a_directory}");
        }
    }
}
