//! The Skills extension (`io.modelcontextprotocol/skills`): `skills/list`
//! pages, `skills/get`, skill files through `resources/read`,
//! `resources/directory/read`, a folder reloaded on change, the embedded
//! form, mounts. Every message is validated against the 2026-07-28 schema
//! (the extension has none of its own: the envelope there, the skill
//! shapes field by field here).

mod support;

use base64::Engine;
use mcp_runtime::{BuildError, MountUris, Server, Skills};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use support::StdioClient;

/// A fresh folder of skills: `pdf` (a subfolder, a binary file) and
/// `acme/refunds` (a prefix path).
fn folder(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-skills-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let write = |rel: &str, bytes: &[u8]| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    write(
        "pdf/SKILL.md",
        b"---\nname: pdf\ndescription: Fill PDF forms\nlicense: MIT\nmetadata:\n  version: \"2.1.0\"\n  beta: yes\n---\n# PDF\n",
    );
    write("pdf/templates/invoice.md", b"# Invoice\n");
    write("pdf/logo.png", &[0x89, b'P', b'N', b'G', 0, 0xff]);
    write(
        "acme/refunds/SKILL.md",
        b"---\nname: refunds\ndescription: Word refunds\n---\nBe kind.\n",
    );
    dir
}

fn sha256(bytes: &[u8]) -> String {
    // The test's own digest: the grammar crate's is what is under test.
    let out = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(bytes)?;
            child.wait_with_output()
        })
        .expect("sha256sum");
    format!(
        "sha256:{}",
        String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap()
    )
}

/// Every page of `skills/list`, checking that no skill spans two pages.
async fn all_skills(client: &mut StdioClient, id: &mut i64) -> (Vec<Value>, usize) {
    let (mut skills, mut pages, mut cursor) = (Vec::new(), 0, None::<String>);
    let mut seen = HashSet::new();
    loop {
        *id += 1;
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = client.call(*id, "skills/list", params).await;
        let result = &page["result"];
        assert_eq!(result["resultType"], "complete", "{page}");
        assert!(result["ttlMs"].is_u64() && result["cacheScope"].is_string(), "{page}");
        pages += 1;
        for skill in result["skills"].as_array().unwrap() {
            assert!(
                seen.insert(skill["uri"].as_str().unwrap().to_owned()),
                "a skill on two pages"
            );
            skills.push(skill.clone());
        }
        match result["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (skills, pages),
        }
    }
}

/// Every child of a directory, page after page.
async fn directory(client: &mut StdioClient, id: &mut i64, uri: &str) -> Vec<(String, String)> {
    let (mut children, mut cursor) = (Vec::new(), None::<String>);
    loop {
        *id += 1;
        let mut params = json!({"uri": uri});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let page = client.call(*id, "resources/directory/read", params).await;
        for c in page["result"]["resources"].as_array().unwrap() {
            children.push((
                c["uri"].as_str().unwrap().to_owned(),
                c["mimeType"].as_str().unwrap().to_owned(),
            ));
        }
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return children,
        }
    }
}

/// The bytes `resources/read` returns for `uri`.
async fn read(client: &mut StdioClient, id: i64, uri: &str) -> (Vec<u8>, Value) {
    let reply = client.call(id, "resources/read", json!({"uri": uri})).await;
    let content = reply["result"]["contents"][0].clone();
    let bytes = match (content["text"].as_str(), content["blob"].as_str()) {
        (Some(text), _) => text.as_bytes().to_vec(),
        (None, Some(blob)) => base64::engine::general_purpose::STANDARD.decode(blob).unwrap(),
        _ => panic!("no contents: {reply}"),
    };
    (bytes, content)
}

#[tokio::test]
async fn a_folder_is_listed_in_whole_skills_with_digests_of_what_is_read() {
    let dir = folder("list");
    let server = Server::builder().empty().page_size(1).skills_dir(&dir).build().unwrap();
    let mut client = StdioClient::start(server);
    let discover = client.call(1, "server/discover", json!({})).await;
    let caps = &discover["result"]["capabilities"];
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
    assert!(caps["resources"].is_object());

    let mut id = 1;
    let (skills, pages) = all_skills(&mut client, &mut id).await;
    assert_eq!(pages, 2, "one skill per page");
    let uris: Vec<&str> = skills.iter().map(|s| s["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["skill://acme/refunds/SKILL.md", "skill://pdf/SKILL.md"]);
    let pdf = &skills[1];
    // The frontmatter as YAML 1.2 reads it: `yes` is a string.
    assert_eq!(
        pdf["frontmatter"],
        json!({"name": "pdf", "description": "Fill PDF forms", "license": "MIT",
               "metadata": {"version": "2.1.0", "beta": "yes"}})
    );
    let listed: Vec<&str> = pdf["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        [
            "skill://pdf/SKILL.md",
            "skill://pdf/logo.png",
            "skill://pdf/templates/invoice.md"
        ]
    );
    for resource in pdf["resources"].as_array().unwrap() {
        let uri = resource["uri"].as_str().unwrap();
        id += 1;
        let (bytes, content) = read(&mut client, id, uri).await;
        let on_disk = std::fs::read(dir.join("pdf").join(uri.strip_prefix("skill://pdf/").unwrap())).unwrap();
        assert_eq!(bytes, on_disk, "{uri}");
        assert_eq!(resource["digest"], sha256(&bytes), "{uri}");
        assert_eq!(resource["size"], bytes.len(), "{uri}");
        match uri {
            "skill://pdf/SKILL.md" => {
                assert_eq!(content["mimeType"], "text/markdown");
                assert!(content["text"].is_string());
            }
            "skill://pdf/logo.png" => {
                assert_eq!(content["mimeType"], "image/png");
                assert!(content["blob"].is_string());
            }
            _ => assert!(content["text"].is_string()),
        }
    }

    // SKILL.md is listed among the resources, named and described by its frontmatter.
    let list = client.call(90, "resources/list", json!({})).await;
    let entry = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "skill://acme/refunds/SKILL.md")
        .cloned()
        .expect("SKILL.md listed");
    assert_eq!(entry["name"], "refunds");
    assert_eq!(entry["description"], "Word refunds");
    assert_eq!(entry["mimeType"], "text/markdown");

    // skills/get: the same entry, no cursor; an unknown URI is -32602.
    let got = client
        .call(91, "skills/get", json!({"uri": "skill://pdf/SKILL.md"}))
        .await;
    assert_eq!(got["result"]["skill"], *pdf);
    assert!(got["result"].get("nextCursor").is_none());
    assert!(got["result"]["ttlMs"].is_u64() && got["result"]["cacheScope"].is_string());
    let unknown = client
        .call(92, "skills/get", json!({"uri": "skill://nope/SKILL.md"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32602);
    assert_eq!(
        unknown["error"]["message"],
        "No skill is served at skill://nope/SKILL.md"
    );

    // Directories: a skill's folder, its subfolders, and the path above it.
    let mut id = 100;
    let children = directory(&mut client, &mut id, "skill://pdf").await;
    assert_eq!(
        children,
        [
            ("skill://pdf/SKILL.md".to_owned(), "text/markdown".to_owned()),
            ("skill://pdf/logo.png".to_owned(), "image/png".to_owned()),
            ("skill://pdf/templates".to_owned(), "inode/directory".to_owned()),
        ]
    );
    let above = directory(&mut client, &mut id, "skill://acme").await;
    assert_eq!(
        above,
        [("skill://acme/refunds".to_owned(), "inode/directory".to_owned())]
    );
    let file = client
        .call(95, "resources/directory/read", json!({"uri": "skill://pdf/SKILL.md"}))
        .await;
    assert_eq!(file["error"]["code"], -32602);
    // The scheme alone is no directory.
    for (n, uri) in (96..).zip(["skill:", "skill:/", "skill://"]) {
        let v = client.call(n, "resources/directory/read", json!({ "uri": uri })).await;
        assert_eq!(v["error"]["code"], -32602, "{uri}: {v}");
    }
    client.close().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A client of `server` with a listen stream open for resource list changes.
async fn listening_to_resource_lists(server: Server) -> StdioClient {
    let mut client = StdioClient::start(server);
    client
        .send(
            1,
            "subscriptions/listen",
            json!({"notifications": {"resourcesListChanged": true}}),
        )
        .await;
    let ack = client.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    client
}

#[tokio::test]
async fn a_changed_file_is_served_and_announced_on_listen_streams() {
    let dir = folder("reload");
    let server = Server::builder().empty().skills_dir(&dir).build().unwrap();
    let mut client = listening_to_resource_lists(server).await;

    let changed = b"---\nname: refunds\ndescription: Word refunds kindly\n---\nBe kinder.\n";
    std::fs::write(dir.join("acme/refunds/SKILL.md"), changed).unwrap();
    // Polled once a second: the notification comes within a few.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        assert!(std::time::Instant::now() < deadline, "no list_changed");
        let msg = client.recv().await;
        if msg["method"] == "notifications/resources/list_changed" {
            break;
        }
    }
    let got = client
        .call(2, "skills/get", json!({"uri": "skill://acme/refunds/SKILL.md"}))
        .await;
    let skill = &got["result"]["skill"];
    assert_eq!(skill["frontmatter"]["description"], "Word refunds kindly");
    assert_eq!(skill["resources"][0]["digest"], sha256(changed));
    assert_eq!(skill["resources"][0]["size"], changed.len());

    // A folder that became invalid keeps the old skills served.
    std::fs::write(dir.join("acme/refunds/SKILL.md"), b"no frontmatter").unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let still = client
        .call(3, "skills/get", json!({"uri": "skill://acme/refunds/SKILL.md"}))
        .await;
    assert_eq!(still["result"]["skill"]["resources"][0]["digest"], sha256(changed));
    client.close().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With lists that differ by caller (a hook hides a file), a listen stream
/// hears of a change that only `skills/list` shows: a file rewritten at the
/// same size, whose digest changed.
#[tokio::test]
async fn a_same_size_edit_is_announced_where_lists_differ_by_caller() {
    let dir = folder("same-size");
    let server = Server::builder()
        .empty()
        .skills_dir(&dir)
        .visible_if(|_, item| !matches!(item, mcp_runtime::Item::Resource(uri) if uri.ends_with("invoice.md")))
        .build()
        .unwrap();
    let mut client = listening_to_resource_lists(server).await;
    let before = b"---\nname: refunds\ndescription: Word refunds\n---\nBe kind.\n";
    let after = b"---\nname: refunds\ndescription: Word refunds\n---\nBe nice.\n";
    assert_eq!(before.len(), after.len());
    std::fs::write(dir.join("acme/refunds/SKILL.md"), after).unwrap();
    let heard = tokio::time::timeout(std::time::Duration::from_secs(10), client.recv())
        .await
        .expect("a list change within 10 s");
    assert_eq!(heard["method"], "notifications/resources/list_changed", "{heard}");
    client.close().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_skill_is_a_build_error_naming_the_file_and_the_rule() {
    let dir = folder("bad");
    std::fs::create_dir_all(dir.join("Bad")).unwrap();
    std::fs::write(dir.join("Bad/SKILL.md"), "---\nname: Bad\ndescription: d\n---\n").unwrap();
    let Err(BuildError::Skill(e)) = Server::builder().empty().skills_dir(&dir).build() else {
        panic!("a bad name must fail the build");
    };
    assert!(e.file.ends_with(Path::new("Bad/SKILL.md")), "{e}");
    assert!(e.to_string().contains("lowercase letters, digits and hyphens"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A symbolic link inside the skills folder is followed; one that leads out
/// of it is a build error naming it, never a file served from elsewhere.
#[cfg(unix)]
#[test]
fn a_link_out_of_the_skills_folder_is_a_build_error() {
    let dir = folder("links");
    std::os::unix::fs::symlink(dir.join("pdf/logo.png"), dir.join("pdf/templates/logo.png")).unwrap();
    Server::builder()
        .empty()
        .skills_dir(&dir)
        .build()
        .expect("a link inside the folder is followed");
    let outside = std::env::temp_dir().join(format!("mcp-skills-outside-{}", std::process::id()));
    std::fs::write(&outside, "SECRET=1").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("acme/refunds/env.md")).unwrap();
    let Err(BuildError::Skill(e)) = Server::builder().empty().skills_dir(&dir).build() else {
        panic!("a link out of the folder must fail the build");
    };
    assert!(e.file.ends_with(Path::new("acme/refunds/env.md")), "{e}");
    assert!(e.to_string().contains("outside the skills folder"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_file(&outside).unwrap();
}

/// Links back to a folder that holds them are a build error (the folder
/// would have no end). Hidden ones (`.a`), which the reader skips, do not
/// stop the watcher, which looks at every file: a later change is served.
#[cfg(unix)]
#[tokio::test]
async fn links_that_loop_are_refused_and_the_watcher_goes_on() {
    let dir = folder("loops");
    let skill = dir.join("acme/refunds");
    std::os::unix::fs::symlink(&skill, skill.join("a")).unwrap();
    std::os::unix::fs::symlink(&skill, skill.join("b")).unwrap();
    let Err(BuildError::Skill(e)) = Server::builder().empty().skills_dir(&dir).build() else {
        panic!("links that loop must fail the build");
    };
    assert!(e.to_string().contains("a loop"), "{e}");
    assert!(e.file.starts_with(&skill), "{e}");
    std::fs::remove_file(skill.join("a")).unwrap();
    std::fs::remove_file(skill.join("b")).unwrap();

    let server = Server::builder().empty().skills_dir(&dir).build().unwrap();
    let mut client = StdioClient::start(server);
    std::os::unix::fs::symlink(&skill, skill.join(".a")).unwrap();
    std::os::unix::fs::symlink(&skill, skill.join(".b")).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let changed = b"---\nname: refunds\ndescription: After the loop\n---\n";
    std::fs::write(skill.join("SKILL.md"), changed).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let got = client
            .call(1, "skills/get", json!({"uri": "skill://acme/refunds/SKILL.md"}))
            .await;
        if got["result"]["skill"]["frontmatter"]["description"] == "After the loop" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the watcher stopped: {got}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    client.close().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn embedded_skills_equal_the_folder_read_at_run_time() {
    let embedded = mcp_runtime::skills!("examples/everything/skills");
    let read = Skills::from_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/everything/skills")).unwrap();
    assert_eq!(embedded.uris(), read.uris());
    let listed = |skills: Skills| async move {
        let server = Server::builder().empty().skills(skills).build().unwrap();
        let mut client = StdioClient::start(server);
        let list = client.call(1, "skills/list", json!({})).await;
        client.close().await.unwrap();
        list["result"]["skills"].clone()
    };
    let (a, b) = (listed(embedded).await, listed(read).await);
    assert_eq!(a, b);
    assert_eq!(a.as_array().unwrap().len(), 2);
}

/// A mounted server's visibility asks of each skill file with the file's own
/// URI, as it does standalone (it was asked with the skill's `SKILL.md` for
/// every file once mounted).
#[tokio::test]
async fn a_mounted_servers_visibility_is_asked_of_each_skill_file() {
    let dir = folder("mount-visible");
    let hiding = |viewer: &mcp_runtime::Viewer<'_>, item: mcp_runtime::Item<'_>| {
        let _ = viewer;
        !matches!(item, mcp_runtime::Item::Resource(uri) if uri.ends_with("invoice.md"))
    };
    let inner = || {
        Server::builder()
            .empty()
            .skills(Skills::from_dir(&dir).unwrap())
            .visible_if(hiding)
            .build()
            .unwrap()
    };
    let invoice = "skill://pdf/templates/invoice.md";
    let standalone = inner();
    let outer = Server::builder().empty().mount("eu", &standalone).build().unwrap();
    for server in [inner(), outer] {
        let mut client = StdioClient::start(server);
        let hidden = client.call(1, "resources/read", json!({"uri": invoice})).await;
        assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
        let (bytes, _) = read(&mut client, 2, "skill://pdf/SKILL.md").await;
        assert!(bytes.starts_with(b"---\nname: pdf"));
        client.close().await.unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn mounted_skills_come_along_under_the_prefix() {
    let dir = folder("mount");
    let inner = Server::builder()
        .empty()
        .skills(Skills::from_dir(&dir).unwrap())
        .build()
        .unwrap();
    let outer = Server::builder()
        .empty()
        .mount_with("eu", &inner, MountUris::Prefixed)
        .build()
        .unwrap();
    let mut client = StdioClient::start(outer);
    let list = client.call(1, "skills/list", json!({})).await;
    let uris: Vec<&str> = list["result"]["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["skill://eu/acme/refunds/SKILL.md", "skill://eu/pdf/SKILL.md"]);
    let (bytes, content) = read(&mut client, 2, "skill://eu/pdf/SKILL.md").await;
    assert_eq!(content["uri"], "skill://eu/pdf/SKILL.md");
    assert!(bytes.starts_with(b"---\nname: pdf"));
    client.close().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Skills nest: a skill's folder may hold another skill, whose files are
/// the enclosing skill's too. The server builds, and publishes each file
/// once.
#[tokio::test]
async fn nested_skills_build_and_publish_each_file_once() {
    let dir = std::env::temp_dir().join(format!("mcp-skills-nested-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (rel, text) in [
        (
            "pdf/SKILL.md",
            "---\nname: pdf\ndescription: Fill PDF forms\n---\n# PDF\n",
        ),
        (
            "pdf/forms/SKILL.md",
            "---\nname: forms\ndescription: The form fields\n---\n# Forms\n",
        ),
        ("pdf/forms/fields.md", "# Fields\n"),
    ] {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let server = Server::builder()
        .empty()
        .skills_dir(&dir)
        .build()
        .expect("nested skills build");
    let mut client = StdioClient::start(server);
    let list = client.call(1, "resources/list", json!({})).await;
    let uris: Vec<&str> = list["result"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    for uri in [
        "skill://pdf/SKILL.md",
        "skill://pdf/forms/SKILL.md",
        "skill://pdf/forms/fields.md",
    ] {
        assert_eq!(uris.iter().filter(|u| **u == uri).count(), 1, "{uri} in {uris:?}");
    }
    let read = client
        .call(2, "resources/read", json!({"uri": "skill://pdf/forms/fields.md"}))
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "# Fields\n", "{read}");
    client.close().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two sources whose skills list a file at one URI: with the same bytes
/// the server builds (the file is published once); with different bytes it
/// does not, since one skill's entry would name a digest of bytes it is not
/// served.
#[test]
fn a_file_two_skills_list_with_different_bytes_is_refused() {
    let base = std::env::temp_dir().join(format!("mcp-skills-conflict-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let write = |root: &std::path::Path, rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let (outer, inner) = (base.join("outer"), base.join("inner"));
    write(
        &outer,
        "acme/SKILL.md",
        "---\nname: acme\ndescription: Acme's ways\n---\n# Acme\n",
    );
    write(&outer, "acme/tools/guide.md", "# Guide\n");
    write(
        &inner,
        "acme/tools/SKILL.md",
        "---\nname: tools\ndescription: Acme's tools\n---\n# Tools\n",
    );
    write(&inner, "acme/tools/guide.md", "# Guide\n");
    let build = || {
        Server::builder()
            .empty()
            .skills(Skills::from_dir(&outer).unwrap())
            .skills(Skills::from_dir(&inner).unwrap())
            .build()
    };
    assert!(build().is_ok(), "the same bytes");
    write(&inner, "acme/tools/guide.md", "# Another guide\n");
    assert_eq!(
        build().err(),
        Some(mcp_runtime::BuildError::SkillFileConflict(
            "skill://acme/tools/guide.md".into()
        ))
    );
    std::fs::remove_dir_all(&base).unwrap();
}
