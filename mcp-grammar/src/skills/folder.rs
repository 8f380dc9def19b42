//! Reading a folder of skills: every folder holding a `SKILL.md` is a
//! skill, named by its path below the skills folder (`acme/billing/refunds`
//! is `skill://acme/billing/refunds/SKILL.md`); each of its files (a nested
//! skill's too) with its bytes, SHA-256 digest and MIME type.

use super::{
    check_segment, parse_skill_md, SkillError, SkillRule, MAX_SKILL_RESOURCES, MAX_SKILL_TOTAL_BYTES, SKILL_MANIFEST,
};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::borrow::ToOwned;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::vec::Vec;

/// How deep folders are followed below the skills folder.
const MAX_DEPTH: usize = 32;

/// One file of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// Its path relative to the skill's folder, `/`-separated (`templates/invoice.md`).
    pub path: String,
    /// Where it was read from.
    pub source: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// `sha256:` and the lowercase hex SHA-256 of `bytes`.
    pub digest: String,
    /// Its MIME type, from its extension ([`mime_type`]).
    pub mime: &'static str,
}

/// One skill read from a folder.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillDir {
    /// Its path below the skills folder, `/`-separated; the last segment is its name.
    pub path: String,
    /// Its `SKILL.md` frontmatter as JSON, checked.
    pub frontmatter: Map<String, Value>,
    /// Every file of the skill (those of skills nested in it too), sorted by path.
    pub files: Vec<SkillFile>,
}

/// `sha256:` and the lowercase hex SHA-256 digest of `bytes`.
///
/// ```
/// assert_eq!(
///     mcp_runtime_grammar::skills::digest(b""),
///     "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/// );
/// ```
pub fn digest(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

/// The MIME type a skill file is served with, from its extension:
/// `SKILL.md` and other Markdown `text/markdown`, common text, data and
/// image types by name, anything else `application/octet-stream`.
///
/// ```
/// use mcp_runtime_grammar::skills::mime_type;
/// assert_eq!(mime_type("SKILL.md"), "text/markdown");
/// assert_eq!(mime_type("scripts/fill.py"), "text/x-python");
/// assert_eq!(mime_type("logo.png"), "image/png");
/// ```
pub fn mime_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = match name.rsplit_once('.') {
        Some((_, ext)) => ext.to_ascii_lowercase(),
        None => return "application/octet-stream",
    };
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" | "text" => "text/plain",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "py" => "text/x-python",
        "sh" | "bash" => "text/x-shellscript",
        "rs" => "text/x-rust",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

/// Whether a file is served as `text` (else as a base64 `blob`): UTF-8
/// bytes of a textual MIME type, or of an unknown one.
///
/// ```
/// use mcp_runtime_grammar::skills::serve_as_text;
/// assert!(serve_as_text("text/markdown", b"# Hi"));
/// assert!(!serve_as_text("image/png", b"PNG"));
/// assert!(!serve_as_text("application/octet-stream", &[0xff, 0xfe]));
/// ```
pub fn serve_as_text(mime: &str, bytes: &[u8]) -> bool {
    let binary =
        mime.starts_with("image/") && mime != "image/svg+xml" || matches!(mime, "application/pdf" | "application/zip");
    !binary && std::str::from_utf8(bytes).is_ok()
}

/// Reads every skill below `root`: each folder holding a `SKILL.md` (not
/// `root` itself), its frontmatter checked, its files read and digested,
/// its limits (512 files, 16 MiB) checked. Names starting with `.` are
/// skipped. Skills come sorted by path. The error names the file and the
/// rule: a file in no skill, a bad frontmatter or name, a folder name
/// unusable in a URI, a skill over a limit.
pub fn read_skills(root: &Path) -> Result<Vec<SkillDir>, SkillError> {
    let mut files = Vec::new();
    let inside = std::fs::canonicalize(root).map_err(|e| SkillError::new(root, SkillRule::Io(e.to_string())))?;
    walk(
        root,
        &inside,
        &mut Vec::from([inside.clone()]),
        &mut Vec::new(),
        &mut files,
    )?;
    files.sort_by(|a, b| a.0.cmp(&b.0));
    if files
        .iter()
        .any(|(segments, _, _)| segments.len() == 1 && segments[0] == SKILL_MANIFEST)
    {
        return Err(SkillError::new(root.join(SKILL_MANIFEST), SkillRule::AtRoot));
    }
    // The folders that are skills, as segment lists.
    let roots: Vec<&[String]> = files
        .iter()
        .filter(|(segments, _, _)| segments.last().is_some_and(|s| s == SKILL_MANIFEST))
        .map(|(segments, _, _)| &segments[..segments.len() - 1])
        .collect();
    if roots.is_empty() {
        return Err(SkillError::new(root, SkillRule::NoSkills));
    }
    for (segments, path, _) in &files {
        if !roots.iter().any(|r| segments.starts_with(r)) {
            let folder = path.parent().unwrap_or(root);
            return Err(SkillError::new(folder.join(SKILL_MANIFEST), SkillRule::MissingSkillMd));
        }
    }
    let mut skills = Vec::with_capacity(roots.len());
    for skill_root in &roots {
        let mut read = Vec::new();
        let mut total: u64 = 0;
        for (segments, path, canonical) in files.iter().filter(|(s, _, _)| s.starts_with(skill_root)) {
            if read.len() == MAX_SKILL_RESOURCES {
                let count = files.iter().filter(|(s, _, _)| s.starts_with(skill_root)).count();
                return Err(SkillError::new(
                    dir_of(root, skill_root),
                    SkillRule::TooManyFiles(count),
                ));
            }
            let budget = MAX_SKILL_TOTAL_BYTES.saturating_sub(total);
            let bytes = match read_inside(canonical, &inside, budget) {
                Ok(bytes) => bytes,
                Err(SkillRule::TooLarge(n)) => {
                    let over = total.saturating_add(n);
                    return Err(SkillError::new(dir_of(root, skill_root), SkillRule::TooLarge(over)));
                }
                Err(rule) => return Err(SkillError::new(path, rule)),
            };
            total = total.saturating_add(bytes.len() as u64);
            let rel = segments[skill_root.len()..].join("/");
            read.push(SkillFile {
                mime: mime_type(&rel),
                digest: digest(&bytes),
                path: rel,
                source: path.clone(),
                bytes,
            });
        }
        let manifest = dir_of(root, skill_root).join(SKILL_MANIFEST);
        let md = read
            .iter()
            .find(|f| f.path == SKILL_MANIFEST)
            .ok_or_else(|| SkillError::new(&manifest, SkillRule::MissingSkillMd))?;
        let text = std::str::from_utf8(&md.bytes).map_err(|_| SkillError::new(&manifest, SkillRule::NotUtf8))?;
        let folder = skill_root.last().map_or("", String::as_str);
        let frontmatter = parse_skill_md(text, folder).map_err(|rule| SkillError::new(&manifest, rule))?;
        skills.push(SkillDir {
            path: skill_root.join("/"),
            frontmatter,
            files: read,
        });
    }
    Ok(skills)
}

fn dir_of(root: &Path, segments: &[String]) -> PathBuf {
    segments.iter().fold(root.to_path_buf(), |p, s| p.join(s))
}

/// Collects every file below `dir` (its segments below the root, its path,
/// its canonical path). A symbolic link is followed only to a place inside
/// `inside` (the skills folder, canonical): one that leads out of it is an
/// error, so that no link makes the server publish a file from elsewhere
/// (`/proc/self/environ`). Files are read later through their canonical
/// path, checked again then ([`read_inside`]).
/// One that leads to a folder being walked (`held`, canonical: `dir` and the
/// folders above it) is an error too: the walk would not end.
fn walk(
    dir: &Path,
    inside: &Path,
    held: &mut Vec<PathBuf>,
    at: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, PathBuf, PathBuf)>,
) -> Result<(), SkillError> {
    let io = |path: &Path, e: std::io::Error| SkillError::new(path, SkillRule::Io(e.to_string()));
    let entries = std::fs::read_dir(dir).map_err(|e| io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io(dir, e))?;
        let path = entry.path();
        let name = entry
            .file_name()
            .into_string()
            .map_err(|_| SkillError::new(&path, SkillRule::NonUtf8Name))?;
        if name.starts_with('.') {
            continue;
        }
        check_segment(&name).map_err(|rule| SkillError::new(&path, rule))?;
        let meta = std::fs::metadata(&path).map_err(|e| io(&path, e))?;
        let canonical = std::fs::canonicalize(&path).map_err(|e| io(&path, e))?;
        if !canonical.starts_with(inside) {
            return Err(SkillError::new(&path, SkillRule::LinkOutside));
        }
        if meta.is_dir() && held.contains(&canonical) {
            return Err(SkillError::new(&path, SkillRule::LinkLoop));
        }
        at.push(name.to_owned());
        if meta.is_dir() {
            if at.len() > MAX_DEPTH {
                return Err(SkillError::new(&path, SkillRule::Io("folders nested too deep".into())));
            }
            held.push(canonical);
            let walked = walk(&path, inside, held, at, out);
            held.pop();
            walked?;
        } else if meta.is_file() {
            if meta.len() > MAX_SKILL_TOTAL_BYTES {
                return Err(SkillError::new(&path, SkillRule::TooLarge(meta.len())));
            }
            out.push((at.clone(), path, canonical));
        }
        at.pop();
    }
    Ok(())
}

/// Reads the file at `canonical` (found inside `inside` by the walk), at
/// most `budget` bytes, checking the file it opened rather than the path
/// it named: the folder may change between the walk and the read (a file
/// swapped for a link out of it, a FIFO, a file growing). It must be a
/// regular file, reached without a link at its last step (unix:
/// `O_NOFOLLOW`, and `O_NONBLOCK` so that a FIFO does not hold the open),
/// whose path resolves inside the folder to that same file once it is
/// open, and which does not change while it is read.
fn read_inside(canonical: &Path, inside: &Path, budget: u64) -> Result<Vec<u8>, SkillRule> {
    use std::io::Read;
    let io = |e: std::io::Error| SkillRule::Io(e.to_string());
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(canonical).map_err(io)?;
    let before = file.metadata().map_err(io)?;
    if !before.is_file() {
        return Err(SkillRule::Io(
            "not a regular file (it changed while the folder was read)".into(),
        ));
    }
    let now = std::fs::canonicalize(canonical).map_err(io)?;
    if !now.starts_with(inside) || !same_file(&before, &std::fs::metadata(&now).map_err(io)?) {
        return Err(SkillRule::LinkOutside);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(before.len().min(budget)).unwrap_or(0));
    (&file)
        .take(budget.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let read = bytes.len() as u64;
    if read > budget {
        return Err(SkillRule::TooLarge(before.len().max(read)));
    }
    let after = file.metadata().map_err(io)?;
    if after.len() != read || after.modified().ok() != before.modified().ok() {
        return Err(SkillRule::Io("it changed while it was read".into()));
    }
    Ok(bytes)
}

/// Whether two metadata are of the same file: its device and inode.
#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Whether two metadata are of the same file, as far as stable Rust tells
/// off unix (the file index of Windows is not stable yet): its size and
/// its times.
#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok() && a.created().ok() == b.created().ok()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::{format, vec};

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("skills-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::canonicalize(dir).unwrap()
    }

    #[test]
    fn what_is_opened_is_checked_not_what_was_named() {
        let tmp = scratch("opened");
        let inside = tmp.join("root");
        std::fs::create_dir_all(inside.join("a")).unwrap();
        std::fs::write(inside.join("a/plain.md"), "plain").unwrap();
        std::fs::write(tmp.join("secret"), "SECRET=1").unwrap();
        assert_eq!(read_inside(&inside.join("a/plain.md"), &inside, 100).unwrap(), b"plain");
        // A link at the last step, put there after the walk.
        std::os::unix::fs::symlink(tmp.join("secret"), inside.join("a/link.md")).unwrap();
        assert!(read_inside(&inside.join("a/link.md"), &inside, 100).is_err());
        // A folder on the way swapped for a link out of the skills folder.
        std::fs::create_dir_all(tmp.join("out")).unwrap();
        std::fs::write(tmp.join("out/plain.md"), "SECRET=2").unwrap();
        std::fs::rename(inside.join("a"), tmp.join("a-was")).unwrap();
        std::os::unix::fs::symlink(tmp.join("out"), inside.join("a")).unwrap();
        assert_eq!(
            read_inside(&inside.join("a/plain.md"), &inside, 100),
            Err(SkillRule::LinkOutside)
        );
        // A FIFO neither holds the read nor is read.
        let fifo = inside.join("fifo.md");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        assert!(matches!(read_inside(&fifo, &inside, 100), Err(SkillRule::Io(_))));
        // A file larger than what is left of the skill's budget is not read
        // whole; the error says its size.
        std::fs::write(inside.join("big.md"), vec![b'x'; 4096]).unwrap();
        assert_eq!(
            read_inside(&inside.join("big.md"), &inside, 1000),
            Err(SkillRule::TooLarge(4096))
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn a_link_swapped_in_after_the_walk_is_never_read() {
        let tmp = scratch("swap");
        let (root, skill) = (tmp.join("root"), tmp.join("root/acme/refunds"));
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: refunds\ndescription: How refunds go.\n---\n",
        )
        .unwrap();
        // Read (and digested) before z.md: the window between walk and read.
        std::fs::write(skill.join("a.bin"), vec![0u8; 1 << 20]).unwrap();
        let secret = tmp.join("secret");
        std::fs::write(&secret, "SECRET=1").unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = std::thread::spawn({
            let (stop, skill, secret) = (stop.clone(), skill.clone(), secret.clone());
            move || {
                // Hidden names are not walked.
                let (target, plain, link) = (skill.join("z.md"), skill.join(".plain"), skill.join(".link"));
                // A pause after each swap, so that some reads find the
                // folder as it was walked (and one finds it swapped).
                let pause = std::time::Duration::from_micros(200);
                while !stop.load(Ordering::Relaxed) {
                    std::fs::write(&plain, "plain").unwrap();
                    std::fs::rename(&plain, &target).unwrap();
                    std::thread::sleep(pause);
                    let _ = std::fs::remove_file(&link);
                    std::os::unix::fs::symlink(&secret, &link).unwrap();
                    std::fs::rename(&link, &target).unwrap();
                    std::thread::sleep(pause);
                }
            }
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(8);
        let (mut leaked, mut reads) = (false, 0);
        while std::time::Instant::now() < deadline && !leaked && reads < 200 {
            if let Ok(skills) = read_skills(&root) {
                reads += 1;
                leaked = skills
                    .iter()
                    .flat_map(|s| &s.files)
                    .any(|f| f.bytes.starts_with(b"SECRET"));
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        std::fs::remove_dir_all(&tmp).unwrap();
        assert!(
            !leaked,
            "a file outside the skills folder was read through a swapped link"
        );
        assert!(reads > 0, "no read of the folder succeeded");
    }
}
