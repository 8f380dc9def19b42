//! The runtime's top-level modules import one way only.
//!
//! The module map in `ARCHITECTURE.md` is this test's data: its table lists
//! the layers bottom up, each with its top-level modules. The test reads
//! every source file of `mcp-runtime/src`, resolves each `crate::` and
//! `super::` path (and each name of a `use crate::{...}` group) to the
//! top-level module it names, and fails when a module reaches a module of a
//! higher layer, when a module is missing from the map, or when top-level
//! modules form a circle (even within one layer).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The layers of the module map, bottom up: each a list of top-level modules.
fn layers() -> Vec<(String, Vec<String>)> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let section = text
        .split("## Module map")
        .nth(1)
        .expect("ARCHITECTURE.md has a `## Module map` section");
    let mut layers = Vec::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(layer), Some(modules)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        if *layer == "layer" || layer.starts_with("---") {
            continue;
        }
        let names: Vec<String> = modules
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|m| m.split('/').next().unwrap_or(m).trim_end_matches('!').to_owned())
            .collect();
        layers.push((layer.to_string(), names));
    }
    assert!(!layers.is_empty(), "the module map table is empty");
    layers
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file: `src/dispatch/head.rs` is `[dispatch, head]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_owned());
    }
    parts
}

/// The source without comments (line, block and doc comments) and without
/// the contents of string literals, so that paths in prose do not count.
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            i += end;
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].chars().take_while(|c| *c == '#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            let end = rest[body..].find(&close).map_or(rest.len(), |e| body + e + close.len());
            out.push_str("\"\"");
            i += end;
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() {
                match rest.as_bytes()[j] {
                    b'\\' => j += 2,
                    b'"' => break,
                    _ => j += 1,
                }
            }
            out.push_str("\"\"");
            i += (j + 1).min(rest.len());
        } else if rest.starts_with("'\"'") {
            i += 3;
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The first path segments a piece of code names after `crate::` (with
/// `use crate::{a, b::c}` groups expanded), resolved from `module` for
/// `super::` and `self::` paths: top-level module names.
fn referenced(code: &str, module: &[String]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while let Some(pos) = code[i..].find("::") {
        let at = i + pos;
        i = at + 2;
        // The path's start: walk back over `super::`/`self::`/`crate` segments.
        let before = &code[..at];
        let start = before.rfind(|c: char| !(is_ident(c) || c == ':')).map_or(0, |p| p + 1);
        let head = &code[start..at];
        let segments: Vec<&str> = head.split("::").collect();
        if segments.first() != Some(&"crate") && segments.first() != Some(&"super") && segments.first() != Some(&"self")
        {
            continue;
        }
        // Only look at the path once, from its first `::`.
        if segments.len() > 1 {
            continue;
        }
        let path_text: String = code[start..]
            .chars()
            .take_while(|c| is_ident(*c) || *c == ':' || *c == '{' || *c == '}' || *c == ',' || c.is_whitespace())
            .collect();
        for absolute in resolve(&path_text, module) {
            if let Some(first) = absolute.first() {
                found.insert(first.clone());
            }
        }
    }
    found
}

/// Resolves a path text (`crate::a::b`, `super::x`, `crate::{a, b::c}`) to
/// absolute module paths.
fn resolve(path_text: &str, module: &[String]) -> Vec<Vec<String>> {
    let compact: String = path_text.chars().filter(|c| !c.is_whitespace()).collect();
    let (prefix, group) = match compact.find("::{") {
        Some(p) => {
            let inner = &compact[p + 3..];
            let mut depth = 0;
            let mut end = inner.len();
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        end = k;
                        break;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            (&compact[..p], Some(&inner[..end]))
        }
        None => (compact.trim_end_matches([':', '{', '}', ',']), None),
    };
    let mut base: Vec<String> = Vec::new();
    let mut segs = prefix.split("::").filter(|s| !s.is_empty()).peekable();
    match segs.peek().copied() {
        Some("crate") => {
            segs.next();
        }
        Some("super") | Some("self") => {
            base = module.to_vec();
            while let Some(s) = segs.peek().copied() {
                match s {
                    "super" => {
                        base.pop();
                        segs.next();
                    }
                    "self" => {
                        segs.next();
                    }
                    _ => break,
                }
            }
        }
        _ => return Vec::new(),
    }
    let mut path = base;
    path.extend(
        segs.map(|s| s.split(['{', '}', ',']).next().unwrap_or(s).to_owned())
            .filter(|s| !s.is_empty()),
    );
    match group {
        None => vec![path],
        Some(group) => {
            let mut items = Vec::new();
            let mut depth = 0;
            let mut current = String::new();
            for c in group.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        current.push(c);
                    }
                    '}' => {
                        depth -= 1;
                        current.push(c);
                    }
                    ',' if depth == 0 => items.push(std::mem::take(&mut current)),
                    _ => current.push(c),
                }
            }
            items.push(current);
            items
                .into_iter()
                .filter(|item| !item.is_empty())
                .map(|item| {
                    let first = item.split("::").next().unwrap_or(&item).to_owned();
                    let mut p = path.clone();
                    if first != "self" {
                        p.push(first);
                    }
                    p
                })
                .collect()
        }
    }
}

/// Which top-level module imports which, from the sources.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(ROOT).join("mcp-runtime/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let module = module_path(&src, &file);
        let Some(top) = module.first().cloned() else { continue }; // lib.rs: the facade
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        let edges = graph.entry(top.clone()).or_default();
        for target in referenced(&code, &module) {
            if target != top {
                edges.insert(target);
            }
        }
    }
    graph
}

#[test]
fn top_level_modules_import_only_from_layers_below_and_form_no_circle() {
    let layers = layers();
    let mut layer_of = BTreeMap::new();
    for (i, (_, modules)) in layers.iter().enumerate() {
        for m in modules {
            let previous = layer_of.insert(m.clone(), i);
            assert!(previous.is_none_or(|p| p == i), "`{m}` is in two layers of the map");
        }
    }
    let graph = imports();
    // The reader sees the imports at all (a sample of edges that must exist).
    for (from, to) in [
        ("dispatch", "server"),
        ("server", "mrtr"),
        ("transport", "dispatch"),
        ("mrtr", "error"),
    ] {
        assert!(
            graph.get(from).is_some_and(|t| t.contains(to)),
            "the reader missed `{from}` -> `{to}`"
        );
    }
    let mut problems = Vec::new();
    for (module, targets) in &graph {
        let Some(&from) = layer_of.get(module) else {
            problems.push(format!("`{module}` is not in the module map of ARCHITECTURE.md"));
            continue;
        };
        for target in targets {
            match layer_of.get(target) {
                None if target.starts_with(|c: char| c.is_ascii_uppercase()) => problems.push(format!(
                    "`{module}` names `crate::{target}` through the crate root's re-exports: name it by its module path"
                )),
                None => problems.push(format!("`{module}` imports `{target}`, which is not in the module map")),
                Some(&to) if to > from => problems.push(format!(
                    "`{module}` ({}) imports `{target}` ({}), a layer above it",
                    layers[from].0, layers[to].0
                )),
                Some(_) => {}
            }
        }
    }
    // No circle, even inside one layer: depth-first search for a back edge.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
        problems: &mut Vec<String>,
    ) {
        state.insert(node.to_owned(), 1);
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                0 => visit(next, graph, state, stack, problems),
                1 => {
                    let at = stack.iter().position(|s| s == next).unwrap_or(0);
                    problems.push(format!("a circle: {} -> {next}", stack[at..].join(" -> ")));
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.to_owned(), 2);
    }
    let mut state = BTreeMap::new();
    for module in graph.keys() {
        if state.get(module.as_str()).copied().unwrap_or(0) == 0 {
            visit(module, &graph, &mut state, &mut Vec::new(), &mut problems);
        }
    }
    assert!(
        problems.is_empty(),
        "the layers of mcp-runtime (ARCHITECTURE.md, Module map) are not respected:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn the_reader_resolves_paths_the_way_rustc_does() {
    let m = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let code = code_only(
        "use crate::{a::B, c, d::{e, f}};\n// crate::commented\nlet s = \"crate::in_string\";\nsuper::g::h();\nsuper::super::i::j;\nself::k::l;\ncrate::m::n(crate::o::p);",
    );
    let found = referenced(&code, &m(&["x", "y"]));
    let expected: BTreeSet<String> = ["a", "c", "d", "x", "i", "m", "o"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, expected);
    // From a top-level file, `super::` is the crate root.
    let found = referenced(&code_only("super::z::Z;"), &m(&["top"]));
    assert_eq!(found, ["z".to_string()].into_iter().collect());
}
