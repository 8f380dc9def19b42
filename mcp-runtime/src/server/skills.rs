//! Skills in the catalog: each skill file served as a static resource
//! (`resources/list`, `resources/read`, scopes and visibility as any
//! resource), and the watcher of a [`ServerBuilder::skills_dir`](super::ServerBuilder::skills_dir)
//! folder, which swaps the folder's skills when a file changes and
//! announces the change.

use super::entry::ResourceEntry;
use super::visibility::Predicate;
use super::{Catalog, ServerEvent, ServerInner};
use crate::mrtr::Outcome;
use crate::protocol::{BlobResourceContents, CacheScope, Resource, ResourceContents, TextResourceContents};
use crate::skills::{Skill, SkillFile, Skills};
use base64::Engine;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

/// One skill in the catalog's parts: where it came from (a watched
/// folder's number, 0 otherwise) and, once mounted, the mounted server's
/// visibility hooks: asked of the skill (and its `SKILL.md`) with the
/// skill's URI, and of each other file with the file's own (`files_visible`,
/// in the order of `skill.files`; empty until mounted).
#[derive(Clone)]
pub(crate) struct SkillPart {
    pub skill: Arc<Skill>,
    pub visible: Option<Predicate>,
    pub files_visible: Vec<Option<Predicate>>,
    pub source: u64,
}

impl std::fmt::Debug for SkillPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkillPart").field("uri", &self.skill.uri).finish()
    }
}

/// The parts of a set of skills from `source`.
pub(crate) fn parts(skills: Skills, source: u64) -> impl Iterator<Item = SkillPart> {
    skills.skills.into_iter().map(move |skill| SkillPart {
        skill,
        visible: None,
        files_visible: Vec::new(),
        source,
    })
}

/// The resource serving one file of a skill: `SKILL.md` named and
/// described by its frontmatter; UTF-8 text as `text`, the rest as `blob`.
pub(crate) fn file_entry(part: &SkillPart, index: usize, file: &SkillFile) -> ResourceEntry {
    let skill = &part.skill;
    let skill_md = file.uri == skill.uri;
    let visible = if skill_md {
        part.visible.clone()
    } else {
        part.files_visible.get(index).cloned().flatten()
    };
    let name = if skill_md {
        skill.name().to_owned()
    } else {
        file.uri.strip_prefix("skill://").unwrap_or(&file.uri).to_owned()
    };
    let listing = serde_json::to_value(Resource {
        uri: file.uri.clone(),
        name,
        description: skill_md.then(|| skill.description().map(str::to_owned)).flatten(),
        mime_type: Some(file.mime.to_owned()),
        size: Some(file.bytes.len() as u64),
        ..Default::default()
    })
    .unwrap_or_default();
    let (bytes, mime) = (file.bytes.clone(), file.mime);
    let text = mcp_grammar::skills::serve_as_text(mime, &bytes);
    let handler: super::entry::ResourceHandler = Arc::new(move |uri: &str, _vars, _ctx| {
        let contents = if text {
            ResourceContents::Text(TextResourceContents {
                uri: uri.to_owned(),
                mime_type: Some(mime.to_owned()),
                text: String::from_utf8_lossy(&bytes).into_owned(),
                meta: None,
            })
        } else {
            ResourceContents::Blob(BlobResourceContents {
                uri: uri.to_owned(),
                mime_type: Some(mime.to_owned()),
                blob: base64::engine::general_purpose::STANDARD.encode(&bytes),
                meta: None,
            })
        };
        Box::pin(std::future::ready(Ok(Outcome::Complete(vec![contents]))))
    });
    ResourceEntry {
        uri: file.uri.clone(),
        template: None,
        listing,
        ttl_ms: 0,
        cache_scope: if skill.scopes.is_empty() {
            CacheScope::Public
        } else {
            CacheScope::Private
        },
        handler,
        completers: Vec::new(),
        scopes: skill.scopes.clone(),
        visible,
        app: false,
        location: "skills",
    }
}

impl Catalog {
    /// The skill whose `SKILL.md` is `uri`.
    pub(crate) fn skill(&self, uri: &str) -> Option<&SkillPart> {
        self.skill_index.get(uri).map(|&i| &self.skills[i])
    }
}

/// How often a watched folder is looked at.
pub(crate) const POLL: Duration = Duration::from_secs(1);

/// What a folder looked like: every file's path, length and modification time.
pub(super) type Fingerprint = Vec<(PathBuf, u64, Option<SystemTime>)>;

pub(super) fn fingerprint(dir: &Path) -> Fingerprint {
    /// `held`: the folders being walked, canonical (the root first); a
    /// link back to one of them, or out of the root, is not followed (the
    /// reader refuses such a folder; the walk would not end, or would look
    /// at the whole disk every second), only noted. Names starting with
    /// `.` are skipped, as the reader skips them.
    fn walk(dir: &Path, held: &mut Vec<PathBuf>, out: &mut Fingerprint) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            if entry.file_name().as_encoded_bytes().starts_with(b".") {
                continue;
            }
            let path = entry.path();
            let Ok(meta) = std::fs::metadata(&path) else { continue };
            // The root and 32 levels below it, as the reader.
            if meta.is_dir() && held.len() <= 32 {
                let Ok(canonical) = std::fs::canonicalize(&path) else {
                    continue;
                };
                let outside = held.first().is_some_and(|root| !canonical.starts_with(root));
                if outside || held.contains(&canonical) {
                    out.push((path, 0, None));
                    continue;
                }
                held.push(canonical);
                walk(&path, held, out);
                held.pop();
            } else if meta.is_file() {
                out.push((path, meta.len(), meta.modified().ok()));
            }
        }
    }
    let mut out = Vec::new();
    let mut held: Vec<PathBuf> = std::fs::canonicalize(dir).into_iter().collect();
    walk(dir, &mut held, &mut out);
    out.sort();
    out
}

/// How long a folder whose read failed is left before it is read again,
/// changed or not.
const RETRY_FAILED: Duration = Duration::from_secs(30);

/// Watches `dir` (the skills of `source`) on a thread of its own while the
/// server lives: when a file changes, is added or removed, the folder is
/// read again; if it is valid its skills replace the old ones, and
/// `notifications/resources/list_changed` (and `notifications/resources/updated`
/// for each file whose bytes changed or that went away) is announced, on
/// this replica's listen streams and, through the event bus, on the others'.
/// An invalid folder is logged and the skills served stay as they were.
/// `seen`: what the folder held when the skills served were read.
pub(crate) fn watch(server: Weak<ServerInner>, dir: PathBuf, mut seen: Fingerprint, source: u64, poll: Duration) {
    let spawned = std::thread::Builder::new()
        .name("mcp-skills-watch".into())
        .spawn(move || {
            // The folder as it was when a read failed, and when: read again
            // when it changes, or a while later (the failure may have been
            // the machine's, such as too many open files, not the folder's).
            let mut failed: Option<(Fingerprint, std::time::Instant)> = None;
            loop {
                std::thread::sleep(poll);
                let Some(inner) = server.upgrade() else { return };
                if inner.stopping.is_cancelled() {
                    return;
                }
                let now = fingerprint(&dir);
                let retry = |(was, at): &(Fingerprint, std::time::Instant)| *was != now || at.elapsed() >= RETRY_FAILED;
                if now == seen && failed.is_none() || failed.as_ref().is_some_and(|f| !retry(f)) {
                    continue;
                }
                match Skills::from_dir(&dir) {
                    Ok(skills) => {
                        failed = None;
                        seen = now;
                        let server = super::Server { inner };
                        reload(&server, skills, source);
                    }
                    Err(e) => {
                        // Said once per state of the folder.
                        if failed.as_ref().is_none_or(|(was, _)| *was != now) {
                            tracing::warn!(folder = %dir.display(), "skills not reloaded, the old ones are served: {e}");
                        }
                        failed = Some((now, std::time::Instant::now()));
                    }
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot watch the skills folder: {e}");
    }
}

/// Replaces the skills of `source` and announces what changed.
/// A file URI that two skills list with different bytes (one skill's
/// entry would then name a digest of bytes it is not served), if any.
pub(crate) fn conflicting_file(parts: &[SkillPart]) -> Option<&str> {
    let mut digests: HashMap<&str, &str> = HashMap::new();
    parts
        .iter()
        .flat_map(|part| part.skill.files.iter())
        .find(|file| *digests.entry(file.uri.as_str()).or_insert(file.digest.as_str()) != file.digest)
        .map(|file| file.uri.as_str())
}

fn reload(server: &super::Server, skills: Skills, source: u64) {
    let mut old: HashMap<String, String> = HashMap::new();
    let mut new: HashMap<String, String> = HashMap::new();
    let changed = server.update_quiet(|parts| {
        for part in parts.skills.iter().filter(|p| p.source == source) {
            old.extend(part.skill.files.iter().map(|f| (f.uri.clone(), f.digest.clone())));
        }
        parts.skills.retain(|p| p.source != source);
        for part in self::parts(skills, source) {
            new.extend(part.skill.files.iter().map(|f| (f.uri.clone(), f.digest.clone())));
            parts.skills.push(part);
        }
        // Served all the same: refused, two watched folders changed in turn
        // would each wait for the other forever.
        if let Some(uri) = conflicting_file(&parts.skills) {
            tracing::warn!(uri, "skills: two skills list this file with different bytes; the innermost one's are served until they agree");
        }
        old != new
    });
    match changed {
        Ok(true) => {
            server.announce(ServerEvent::ResourcesListChanged);
            for (uri, digest) in &old {
                if new.get(uri) != Some(digest) {
                    server.announce(ServerEvent::ResourceUpdated(uri.clone()));
                }
            }
        }
        Ok(false) => {}
        Err(e) => tracing::warn!("skills not reloaded, the old ones are served: {e}"),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_watch_looks_inside_the_folder_only() {
        let tmp = std::env::temp_dir().join(format!("skills-watch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let (root, elsewhere) = (tmp.join("root"), tmp.join("elsewhere"));
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(elsewhere.join("deep")).unwrap();
        std::fs::write(root.join("a/SKILL.md"), "x").unwrap();
        std::fs::write(root.join(".hidden.md"), "x").unwrap();
        std::fs::write(elsewhere.join("deep/big.bin"), "x").unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("out")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join(".out")).unwrap();
        let seen: Vec<PathBuf> = fingerprint(&root).into_iter().map(|(p, _, _)| p).collect();
        std::fs::remove_dir_all(&tmp).unwrap();
        // The link out is noted (removing it is a change), not walked.
        assert_eq!(seen, [root.join("a/SKILL.md"), root.join("out")]);
    }
}
