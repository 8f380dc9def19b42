//! `SKILL.md` frontmatter: the `---` fenced YAML 1.2 block at the top of
//! the file, rendered as the JSON object a skill entry carries verbatim.

use super::{check_name, SkillRule, MAX_COMPATIBILITY, MAX_DESCRIPTION, RESERVED_METADATA_PREFIX};
use serde_json::{Map, Number, Value};
use std::borrow::ToOwned;
use std::string::{String, ToString};
use yaml_rust2::parser::{Event, EventReceiver, Parser};
use yaml_rust2::{Yaml, YamlLoader};

/// The largest frontmatter read, in bytes.
const MAX_FRONTMATTER: usize = 64 * 1024;

/// The deepest nesting of mappings and sequences a frontmatter may have.
const MAX_DEPTH: usize = 32;

/// Looks at a frontmatter's YAML events before it is loaded: an alias
/// (which the loader copies in full at each use, so a few hundred bytes can
/// grow to billions of nodes) or nesting past [`MAX_DEPTH`] refuses it.
#[derive(Default)]
struct Guard {
    depth: usize,
    refused: Option<&'static str>,
}

impl EventReceiver for Guard {
    fn on_event(&mut self, event: Event) {
        if self.refused.is_some() {
            return;
        }
        match event {
            Event::Alias(_) => self.refused = Some("YAML aliases are not supported"),
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    self.refused = Some("the frontmatter nests more than 32 levels deep");
                }
            }
            Event::SequenceEnd | Event::MappingEnd => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
    }
}

/// Refuses a frontmatter too large, too deep, or with aliases, before the
/// loader builds it.
fn guard(yaml: &str) -> Result<(), SkillRule> {
    if yaml.len() > MAX_FRONTMATTER {
        return Err(SkillRule::Yaml("the frontmatter is larger than 64 KiB".into()));
    }
    let mut guard = Guard::default();
    Parser::new_from_str(yaml)
        .load(&mut guard, true)
        .map_err(|e| SkillRule::Yaml(e.to_string()))?;
    match guard.refused {
        Some(why) => Err(SkillRule::Yaml(why.into())),
        None => Ok(()),
    }
}

/// The YAML text between the opening `---` line and the next `---` line
/// (a leading byte-order mark is allowed, and either line ending), or
/// `None` when the file does not begin with frontmatter.
///
/// ```
/// use mcp_runtime_grammar::skills::split_frontmatter;
/// assert_eq!(split_frontmatter("---\nname: a\n---\n# A\n"), Some("name: a"));
/// assert_eq!(split_frontmatter("# A\n"), None);
/// ```
pub fn split_frontmatter(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let body = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"))?;
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n').trim_end_matches('\r');
        if bare.trim_end_matches([' ', '\t']) == "---" {
            let yaml = &body[..at];
            return Some(
                yaml.strip_suffix('\n')
                    .map_or(yaml, |y| y.strip_suffix('\r').unwrap_or(y)),
            );
        }
        at += line.len();
    }
    None
}

/// Parses a `SKILL.md`'s frontmatter as YAML 1.2 into a JSON object and
/// checks the Agent Skills fields: `name` (the naming rule, and equal to
/// `folder`, the skill folder's name), `description` (1 to 1024
/// characters), `compatibility` (at most 500), `metadata` (a map of
/// strings, no key under the reserved `io.modelcontextprotocol/` prefix).
/// Every other field passes through as written.
///
/// ```
/// use mcp_runtime_grammar::skills::parse_skill_md;
/// let md = "---\nname: pdf\ndescription: Fill PDF forms\nmetadata:\n  version: \"2.1\"\n  beta: yes\n---\n";
/// let fm = parse_skill_md(md, "pdf").unwrap();
/// assert_eq!(fm["metadata"]["beta"], "yes"); // YAML 1.2: a string
/// assert!(parse_skill_md(md, "other").is_err());
/// ```
pub fn parse_skill_md(text: &str, folder: &str) -> Result<Map<String, Value>, SkillRule> {
    let yaml = split_frontmatter(text).ok_or(SkillRule::NoFrontmatter)?;
    guard(yaml)?;
    let docs = YamlLoader::load_from_str(yaml).map_err(|e| SkillRule::Yaml(e.to_string()))?;
    let doc = match docs.into_iter().next() {
        Some(Yaml::Hash(hash)) => Yaml::Hash(hash),
        _ => return Err(SkillRule::NotAMapping),
    };
    let Value::Object(map) = to_json(&doc, "")? else {
        return Err(SkillRule::NotAMapping);
    };
    check_fields(&map, folder)?;
    Ok(map)
}

fn check_fields(map: &Map<String, Value>, folder: &str) -> Result<(), SkillRule> {
    let name = map
        .get("name")
        .and_then(Value::as_str)
        .ok_or(SkillRule::Missing("name"))?;
    check_name(name)?;
    if name != folder {
        return Err(SkillRule::NameNotFolder {
            name: name.to_owned(),
            folder: folder.to_owned(),
        });
    }
    let description = map
        .get("description")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty())
        .ok_or(SkillRule::Missing("description"))?;
    too_long("description", description, MAX_DESCRIPTION)?;
    if let Some(c) = map.get("compatibility") {
        let c = c.as_str().ok_or(SkillRule::WrongType("compatibility", "a string"))?;
        too_long("compatibility", c, MAX_COMPATIBILITY)?;
    }
    if let Some(l) = map.get("license") {
        l.as_str().ok_or(SkillRule::WrongType("license", "a string"))?;
    }
    if let Some(metadata) = map.get("metadata") {
        let metadata = metadata
            .as_object()
            .filter(|m| m.values().all(Value::is_string))
            .ok_or(SkillRule::WrongType("metadata", "a map of strings to strings"))?;
        if let Some(key) = metadata.keys().find(|k| k.starts_with(RESERVED_METADATA_PREFIX)) {
            return Err(SkillRule::ReservedMetadata(key.clone()));
        }
    }
    Ok(())
}

fn too_long(field: &'static str, value: &str, max: usize) -> Result<(), SkillRule> {
    let len = value.chars().count();
    if len > max {
        return Err(SkillRule::TooLong { field, len, max });
    }
    Ok(())
}

/// A YAML node as JSON; `at`: its key path, for errors.
fn to_json(node: &Yaml, at: &str) -> Result<Value, SkillRule> {
    Ok(match node {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Integer(i) => Value::Number((*i).into()),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Real(text) => {
            let n = node
                .as_f64()
                .and_then(Number::from_f64)
                .ok_or_else(|| SkillRule::Unrepresentable(at.to_owned(), "infinity and NaN have no JSON form"))?;
            // `1.0` is the number 1, as a YAML 1.2 reader sees it.
            match text.parse::<i64>() {
                Ok(i) => Value::Number(i.into()),
                Err(_) => Value::Number(n),
            }
        }
        Yaml::Array(items) => Value::Array(items.iter().map(|i| to_json(i, at)).collect::<Result<_, _>>()?),
        Yaml::Hash(hash) => {
            let mut map = Map::new();
            for (k, v) in hash {
                let key = match k {
                    Yaml::String(s) | Yaml::Real(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    Yaml::Null => "null".to_owned(),
                    _ => return Err(SkillRule::Unrepresentable(at.to_owned(), "keys must be scalars")),
                };
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    std::format!("{at}.{key}")
                };
                map.insert(key, to_json(v, &path)?);
            }
            Value::Object(map)
        }
        Yaml::Alias(_) | Yaml::BadValue => {
            return Err(SkillRule::Unrepresentable(at.to_owned(), "aliases are not supported"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_1_2_scalars() {
        let md = "---\r\nname: a\ndescription: d\nn: 1.0\nv: \"2.1.0\"\nb: yes\nt: 2024-01-01\nx: true\n---   \r\n";
        let fm = parse_skill_md(md, "a").unwrap();
        assert_eq!(fm["b"], "yes");
        assert_eq!(fm["t"], "2024-01-01");
        assert_eq!(fm["x"], true);
        assert_eq!(fm["v"], "2.1.0");
        assert_eq!(fm["n"].as_f64(), Some(1.0));
    }

    #[test]
    fn rules() {
        assert_eq!(parse_skill_md("no", "a"), Err(SkillRule::NoFrontmatter));
        assert_eq!(parse_skill_md("---\n- a\n---\n", "a"), Err(SkillRule::NotAMapping));
        assert_eq!(
            parse_skill_md("---\nname: a\n---\n", "a"),
            Err(SkillRule::Missing("description"))
        );
        let reserved = "---\nname: a\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: y\n---\n";
        assert!(matches!(
            parse_skill_md(reserved, "a"),
            Err(SkillRule::ReservedMetadata(_))
        ));
        assert!(matches!(
            parse_skill_md("---\nname: a: b\n---\n", "a"),
            Err(SkillRule::Yaml(_))
        ));
    }

    /// Nine levels of aliases, each used ten times: a billion nodes if the
    /// loader were let at it (this test would run out of memory). Refused
    /// before it is.
    #[test]
    fn aliases_depth_and_size_are_refused_before_the_loader() {
        let mut md = String::from("---\nname: a\ndescription: d\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..10 {
            let uses = std::vec![std::format!("*l{}", level - 1); 10].join(", ");
            md.push_str(&std::format!("l{level}: &l{level} [{uses}]\n"));
        }
        md.push_str("---\n");
        assert_eq!(
            parse_skill_md(&md, "a"),
            Err(SkillRule::Yaml("YAML aliases are not supported".into()))
        );
        let deep = std::format!(
            "---\nname: a\ndescription: d\nx: {}1{}\n---\n",
            "[".repeat(40),
            "]".repeat(40)
        );
        assert!(matches!(parse_skill_md(&deep, "a"), Err(SkillRule::Yaml(why)) if why.contains("32 levels")));
        let block = std::format!(
            "---\nname: a\ndescription: d\nx:\n{}\n---\n",
            (0..40)
                .map(|i| std::format!("{}- ", "  ".repeat(i)))
                .collect::<std::vec::Vec<_>>()
                .join("\n")
        );
        assert!(matches!(parse_skill_md(&block, "a"), Err(SkillRule::Yaml(_))));
        let large = std::format!("---\nname: a\ndescription: d\nx: \"{}\"\n---\n", "y".repeat(70_000));
        assert!(matches!(parse_skill_md(&large, "a"), Err(SkillRule::Yaml(why)) if why.contains("64 KiB")));
    }
}
