//! Properties every generated schema must have.

use super::fixtures::*;
use super::support;

// ---------------------------------------------------------------------------
// Properties every generated schema must have.
// ---------------------------------------------------------------------------

#[test]
fn every_input_schema_is_a_valid_2020_12_object_schema_without_root_noise() {
    for (t, may_ref) in all_tools() {
        let s = &t.input_schema;
        compile(s);
        assert_eq!(
            s["type"], "object",
            "{}: the inputSchema root must be `type: object`: {s:#}",
            t.name
        );
        for key in ["$schema", "title", "$id", "definitions"] {
            assert!(
                s.get(key).is_none(),
                "{}: inputSchema root carries `{key}`: {s:#}",
                t.name
            );
        }
        // Tool arguments are exactly the declared parameters.
        assert_eq!(s["additionalProperties"], false, "{}: {s:#}", t.name);
        if let Some(required) = s.get("required") {
            let required = required.as_array().expect("required is an array");
            assert!(!required.is_empty(), "{}: empty `required` should be omitted", t.name);
            for r in required {
                assert!(
                    s["properties"].get(r.as_str().unwrap()).is_some(),
                    "{}: required {r} is no property",
                    t.name
                );
            }
        }
        if let Some(p) = s.get("properties") {
            assert!(
                !p.as_object().unwrap().is_empty(),
                "{}: empty `properties` should be omitted",
                t.name
            );
        }
        let mut found = Vec::new();
        refs(s, &mut found);
        if !may_ref {
            assert!(
                found.is_empty(),
                "{}: inlined schema still has $ref {found:?}: {s:#}",
                t.name
            );
            assert!(s.get("$defs").is_none(), "{}: inlined schema has $defs: {s:#}", t.name);
        }
    }
}

#[test]
fn every_output_schema_is_valid_2020_12_without_root_noise() {
    let mut with_output = 0;
    for (t, may_ref) in all_tools() {
        let Some(s) = &t.output_schema else { continue };
        with_output += 1;
        assert!(
            s.is_object(),
            "{}: outputSchema must be a JSON object (not a boolean schema): {s}",
            t.name
        );
        compile(s);
        for key in ["$schema", "title", "$id", "definitions"] {
            assert!(
                s.get(key).is_none(),
                "{}: outputSchema root carries `{key}`: {s:#}",
                t.name
            );
        }
        let mut found = Vec::new();
        refs(s, &mut found);
        if !may_ref {
            assert!(
                found.is_empty(),
                "{}: inlined outputSchema still has $ref {found:?}: {s:#}",
                t.name
            );
        }
    }
    assert_eq!(with_output, 10);
}

#[test]
fn every_tool_definition_is_a_valid_mcp_tool() {
    for (t, _) in all_tools() {
        let wire = serde_json::to_value(&t).unwrap();
        support::assert_valid("2026-07-28", "Tool", &wire);
    }
}
