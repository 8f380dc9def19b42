//! Round-trips every official 2026-07-28 example message through the protocol types.
//!
//! Each folder of `examples/` is named after a schema type and maps to one Rust type below;
//! a folder without a mapping fails the test, so nothing is skipped silently. A value is
//! deserialized, serialized back, and compared with the original as a `serde_json::Value`.

use mcp_runtime::protocol::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Examples that contradict the schema, with the error our types give for them.
///
/// `read-resource-result-response.json` omits `ttlMs` and `cacheScope`, which
/// `$defs/ReadResourceResult` requires (it only validates through the open
/// `InputRequiredResult` branch of the response's `anyOf`).
const KNOWN_INVALID: &[(&str, &str)] = &[(
    "ReadResourceResultResponse/read-resource-result-response.json",
    "missing field `ttlMs`",
)];

type Check = Result<(), String>;

/// The spec folder: `$MCP_SPEC_DIR`, or the repository's `tests/spec` fixtures.
fn spec_dir() -> PathBuf {
    match std::env::var_os("MCP_SPEC_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/spec")),
    }
}

/// Deserializes `value` as `T`, serializes it back and compares.
fn rt<T: Serialize + DeserializeOwned>(value: &Value) -> Result<T, String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| format!("deserialize: {e}"))?;
    let back = serde_json::to_value(&typed).map_err(|e| format!("serialize: {e}"))?;
    if &back != value {
        return Err(format!("round-trip differs:\n  original: {value}\n  back:     {back}"));
    }
    Ok(typed)
}

fn ok<T: Serialize + DeserializeOwned>(value: &Value) -> Check {
    rt::<T>(value).map(drop)
}

fn field<'a>(value: &'a Value, name: &str) -> Result<&'a Value, String> {
    value.get(name).ok_or_else(|| format!("no `{name}` in {value}"))
}

fn expect(cond: bool, what: &str) -> Check {
    if cond {
        Ok(())
    } else {
        Err(what.to_string())
    }
}

fn check_jsonrpc(value: &Value) -> Check {
    expect(
        value.get("jsonrpc") == Some(&Value::from("2.0")),
        "jsonrpc is not \"2.0\"",
    )
}

fn check_method(value: &Value, method: &str) -> Check {
    expect(
        value.get("method") == Some(&Value::from(method)),
        &format!("method is not {method:?}"),
    )
}

/// A full JSON-RPC request: `jsonrpc`, `id`, `method`, and `params` as `P`.
fn request<P: Serialize + DeserializeOwned>(value: &Value, method: &str) -> Check {
    check_jsonrpc(value)?;
    rt::<RequestId>(field(value, "id")?)?;
    check_method(value, method)?;
    ok::<P>(field(value, "params")?)
}

/// A server-to-client input request: `params` as `P` (if present), and the whole as an [`InputRequest`].
fn input_request<P: Serialize + DeserializeOwned>(value: &Value, method: &str) -> Check {
    check_method(value, method)?;
    if let Some(params) = value.get("params") {
        ok::<P>(params)?;
    }
    let mut bare = value.clone();
    if let Some(object) = bare.as_object_mut() {
        object.retain(|key, _| key == "method" || key == "params");
    }
    ok::<InputRequest>(&bare)
}

/// A JSON-RPC notification: `params` as `P`, optional when `params_optional`.
fn notification<P: Serialize + DeserializeOwned>(value: &Value, method: &str, params_optional: bool) -> Check {
    check_jsonrpc(value)?;
    check_method(value, method)?;
    match value.get("params") {
        Some(params) => ok::<P>(params),
        None => expect(params_optional, "params missing"),
    }
}

/// A JSON-RPC result response: `result` as `R`.
fn response<R: Serialize + DeserializeOwned>(value: &Value) -> Check {
    check_jsonrpc(value)?;
    rt::<RequestId>(field(value, "id")?)?;
    ok::<R>(field(value, "result")?)
}

/// A response whose result may also be `input_required` (tools/call, prompts/get, resources/read).
fn mrtr_response<R: Serialize + DeserializeOwned>(value: &Value) -> Check {
    let result = field(value, "result")?;
    if result.get("resultType") == Some(&Value::from("input_required")) {
        check_jsonrpc(value)?;
        ok::<InputRequiredResult>(result)
    } else {
        response::<R>(value)
    }
}

/// A JSON-RPC error object (`$defs/Error`).
#[derive(Debug, Serialize, Deserialize)]
struct ErrorObject {
    code: i64,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
}

/// A bare error object with the given code.
fn error_object(value: &Value, code: i64) -> Result<ErrorObject, String> {
    let error: ErrorObject = rt(value)?;
    expect(error.code == code, &format!("code {} is not {code}", error.code))?;
    expect(!error.message.is_empty(), "empty message")?;
    Ok(error)
}

/// A full JSON-RPC error response with the given code.
fn error_response(value: &Value, code: i64) -> Result<ErrorObject, String> {
    check_jsonrpc(value)?;
    if let Some(id) = value.get("id") {
        rt::<RequestId>(id)?;
    }
    error_object(field(value, "error")?, code)
}

/// The `data` of an error, required.
fn error_data(error: &ErrorObject) -> Result<&Value, String> {
    error.data.as_ref().ok_or_else(|| "no data".to_string())
}

/// `data` of -32022.
#[derive(Debug, Serialize, Deserialize)]
struct UnsupportedVersionData {
    supported: Vec<String>,
    requested: String,
}

/// A content type, through [`ContentBlock`], expecting the variant `is`.
fn content(value: &Value, is: fn(&ContentBlock) -> bool) -> Check {
    let block: ContentBlock = rt(value)?;
    expect(is(&block), &format!("parsed as the wrong variant: {block:?}"))
}

/// A sampling-only content type, through [`SamplingMessageContentBlock`].
fn sampling_content(value: &Value, is: fn(&SamplingMessageContentBlock) -> bool) -> Check {
    let block: SamplingMessageContentBlock = rt(value)?;
    expect(is(&block), &format!("parsed as the wrong variant: {block:?}"))
}

/// A field schema, as itself and through [`PrimitiveSchemaDefinition`], expecting the variant `is`.
fn primitive<T: Serialize + DeserializeOwned>(value: &Value, is: fn(&PrimitiveSchemaDefinition) -> bool) -> Check {
    ok::<T>(value)?;
    let schema: PrimitiveSchemaDefinition = rt(value)?;
    expect(is(&schema), &format!("parsed as the wrong variant: {schema:?}"))
}

/// Elicitation params, as themselves and through [`ElicitRequestParams`].
fn elicit_params<T: Serialize + DeserializeOwned>(value: &Value, is: fn(&ElicitRequestParams) -> bool) -> Check {
    ok::<T>(value)?;
    let params: ElicitRequestParams = rt(value)?;
    expect(is(&params), &format!("parsed as the wrong variant: {params:?}"))
}

use PrimitiveSchemaDefinition as P;

/// Checks one example file of the folder `folder`.
fn check(folder: &str, v: &Value) -> Check {
    match folder {
        // Content.
        "AudioContent" => content(v, |b| matches!(b, ContentBlock::Audio(_))),
        "EmbeddedResource" => content(v, |b| matches!(b, ContentBlock::Resource(_))),
        "ImageContent" => content(v, |b| matches!(b, ContentBlock::Image(_))),
        "ResourceLink" => content(v, |b| matches!(b, ContentBlock::ResourceLink(_))),
        "TextContent" => content(v, |b| matches!(b, ContentBlock::Text(_))),
        "ToolResultContent" => sampling_content(v, |b| matches!(b, SamplingMessageContentBlock::ToolResult(_))),
        "ToolUseContent" => sampling_content(v, |b| matches!(b, SamplingMessageContentBlock::ToolUse(_))),
        "BlobResourceContents" => {
            ok::<BlobResourceContents>(v)?;
            expect(
                matches!(rt::<ResourceContents>(v)?, ResourceContents::Blob(_)),
                "not a blob",
            )
        }
        "TextResourceContents" => {
            ok::<TextResourceContents>(v)?;
            expect(
                matches!(rt::<ResourceContents>(v)?, ResourceContents::Text(_)),
                "not text",
            )
        }

        // Elicitation field schemas.
        "BooleanSchema" => primitive::<BooleanSchema>(v, |s| matches!(s, P::Boolean(_))),
        "NumberSchema" => primitive::<NumberSchema>(v, |s| matches!(s, P::Number(_))),
        "StringSchema" => primitive::<StringSchema>(v, |s| matches!(s, P::String(_))),
        "TitledMultiSelectEnumSchema" => {
            primitive::<TitledMultiSelectEnumSchema>(v, |s| matches!(s, P::TitledMultiSelect(_)))
        }
        "TitledSingleSelectEnumSchema" => {
            primitive::<TitledSingleSelectEnumSchema>(v, |s| matches!(s, P::TitledSingleSelect(_)))
        }
        "UntitledMultiSelectEnumSchema" => {
            primitive::<UntitledMultiSelectEnumSchema>(v, |s| matches!(s, P::UntitledMultiSelect(_)))
        }
        "UntitledSingleSelectEnumSchema" => {
            primitive::<UntitledSingleSelectEnumSchema>(v, |s| matches!(s, P::UntitledSingleSelect(_)))
        }

        // Plain types.
        "CallToolRequestParams" => ok::<CallToolRequestParams>(v),
        "CallToolResult" => ok::<CallToolResult>(v),
        "CancelledNotificationParams" => ok::<CancelledNotificationParams>(v),
        "ClientCapabilities" => ok::<ClientCapabilities>(v),
        "CompleteRequestParams" => ok::<CompleteRequestParams>(v),
        "CompleteResult" => ok::<CompleteResult>(v),
        "CreateMessageRequestParams" => ok::<CreateMessageRequestParams>(v),
        "CreateMessageResult" => {
            ok::<CreateMessageResult>(v)?;
            expect(
                matches!(rt::<InputResponse>(v)?, InputResponse::CreateMessage(_)),
                "wrong input response",
            )
        }
        "DiscoverResult" => ok::<DiscoverResult>(v),
        "ElicitRequestFormParams" => {
            elicit_params::<ElicitRequestFormParams>(v, |p| matches!(p, ElicitRequestParams::Form(_)))
        }
        "ElicitRequestURLParams" => {
            elicit_params::<ElicitRequestUrlParams>(v, |p| matches!(p, ElicitRequestParams::Url(_)))
        }
        "ElicitResult" => {
            ok::<ElicitResult>(v)?;
            expect(
                matches!(rt::<InputResponse>(v)?, InputResponse::Elicit(_)),
                "wrong input response",
            )
        }
        "GetPromptRequestParams" => ok::<GetPromptRequestParams>(v),
        "GetPromptResult" => ok::<GetPromptResult>(v),
        "InputRequests" => ok::<InputRequests>(v),
        "InputRequiredResult" => ok::<InputRequiredResult>(v),
        "InputResponses" => ok::<InputResponses>(v),
        "ListPromptsResult" => ok::<ListPromptsResult>(v),
        "ListResourceTemplatesResult" => ok::<ListResourceTemplatesResult>(v),
        "ListResourcesResult" => ok::<ListResourcesResult>(v),
        "ListRootsResult" => {
            ok::<ListRootsResult>(v)?;
            expect(
                matches!(rt::<InputResponse>(v)?, InputResponse::ListRoots(_)),
                "wrong input response",
            )
        }
        "ListToolsResult" => ok::<ListToolsResult>(v),
        "LoggingMessageNotificationParams" => ok::<LoggingMessageNotificationParams>(v),
        "ModelPreferences" => ok::<ModelPreferences>(v),
        "PaginatedRequestParams" => ok::<PaginatedRequestParams>(v),
        "ProgressNotificationParams" => ok::<ProgressNotificationParams>(v),
        "ReadResourceResult" => ok::<ReadResourceResult>(v),
        "Resource" => ok::<Resource>(v),
        "ResourceUpdatedNotificationParams" => ok::<ResourceUpdatedNotificationParams>(v),
        "Root" => ok::<Root>(v),
        "SamplingMessage" => ok::<SamplingMessage>(v),
        "ServerCapabilities" => ok::<ServerCapabilities>(v),
        "SubscriptionsListenResult" => ok::<SubscriptionsListenResult>(v),
        "Tool" => ok::<Tool>(v),

        // Client-to-server requests.
        "CallToolRequest" => request::<CallToolRequestParams>(v, "tools/call"),
        "CompleteRequest" => request::<CompleteRequestParams>(v, "completion/complete"),
        "DiscoverRequest" => request::<RequestParams>(v, "server/discover"),
        "GetPromptRequest" => request::<GetPromptRequestParams>(v, "prompts/get"),
        "ListPromptsRequest" => request::<PaginatedRequestParams>(v, "prompts/list"),
        "ListResourceTemplatesRequest" => request::<PaginatedRequestParams>(v, "resources/templates/list"),
        "ListResourcesRequest" => request::<PaginatedRequestParams>(v, "resources/list"),
        "ListToolsRequest" => request::<PaginatedRequestParams>(v, "tools/list"),
        "ReadResourceRequest" => request::<ReadResourceRequestParams>(v, "resources/read"),
        "SubscriptionsListenRequest" => request::<SubscriptionsListenRequestParams>(v, "subscriptions/listen"),

        // Server-to-client input requests (MRTR).
        "CreateMessageRequest" => input_request::<CreateMessageRequestParams>(v, "sampling/createMessage"),
        "ElicitRequest" => input_request::<ElicitRequestParams>(v, "elicitation/create"),
        "ListRootsRequest" => input_request::<ListRootsRequestParams>(v, "roots/list"),

        // Responses.
        "CallToolResultResponse" => mrtr_response::<CallToolResult>(v),
        "CompleteResultResponse" => response::<CompleteResult>(v),
        "DiscoverResultResponse" => response::<DiscoverResult>(v),
        "GetPromptResultResponse" => mrtr_response::<GetPromptResult>(v),
        "ListPromptsResultResponse" => response::<ListPromptsResult>(v),
        "ListResourceTemplatesResultResponse" => response::<ListResourceTemplatesResult>(v),
        "ListResourcesResultResponse" => response::<ListResourcesResult>(v),
        "ListToolsResultResponse" => response::<ListToolsResult>(v),
        "ReadResourceResultResponse" => mrtr_response::<ReadResourceResult>(v),
        "SubscriptionsListenResultResponse" => response::<SubscriptionsListenResult>(v),

        // Notifications.
        "CancelledNotification" => notification::<CancelledNotificationParams>(v, "notifications/cancelled", false),
        "LoggingMessageNotification" => {
            notification::<LoggingMessageNotificationParams>(v, "notifications/message", false)
        }
        "ProgressNotification" => notification::<ProgressNotificationParams>(v, "notifications/progress", false),
        "PromptListChangedNotification" => {
            notification::<NotificationParams>(v, "notifications/prompts/list_changed", true)
        }
        "ResourceListChangedNotification" => {
            notification::<NotificationParams>(v, "notifications/resources/list_changed", true)
        }
        "ResourceUpdatedNotification" => {
            notification::<ResourceUpdatedNotificationParams>(v, "notifications/resources/updated", false)
        }
        "SubscriptionsAcknowledgedNotification" => notification::<SubscriptionsAcknowledgedNotificationParams>(
            v,
            "notifications/subscriptions/acknowledged",
            false,
        ),
        "ToolListChangedNotification" => {
            notification::<NotificationParams>(v, "notifications/tools/list_changed", true)
        }

        // Errors: bare error objects.
        "ParseError" => error_object(v, -32700).map(drop),
        "InvalidRequestError" => error_object(v, -32600).map(drop),
        "MethodNotFoundError" => error_object(v, -32601).map(drop),
        "InvalidParamsError" => error_object(v, -32602).map(drop),
        "InternalError" => error_object(v, -32603).map(drop),
        // Errors: full error responses.
        "HeaderMismatchError" => error_response(v, -32020).map(drop),
        "MissingRequiredClientCapabilityError" => {
            let error = error_response(v, -32021)?;
            ok::<ClientCapabilities>(field(error_data(&error)?, "requiredCapabilities")?)
        }
        "UnsupportedProtocolVersionError" => {
            let error = error_response(v, -32022)?;
            ok::<UnsupportedVersionData>(error_data(&error)?)
        }

        other => Err(format!("no mapping for example folder `{other}`: add one to this test")),
    }
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| {
            entry
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
                .path()
        })
        .collect();
    entries.sort();
    entries
}

#[test]
fn every_example_round_trips() {
    let examples = spec_dir().join("2026-07-28").join("examples");
    let mut failures = Vec::new();
    let (mut folders, mut files, mut round_tripped, mut known_invalid) = (0, 0, 0, 0);

    for folder_path in sorted_entries(&examples) {
        if !folder_path.is_dir() {
            continue;
        }
        folders += 1;
        let folder = folder_path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let jsons: Vec<PathBuf> = sorted_entries(&folder_path)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        if jsons.is_empty() {
            failures.push(format!("{folder}: no example files"));
        }
        for path in jsons {
            files += 1;
            let name = format!(
                "{folder}/{}",
                path.file_name().and_then(|n| n.to_str()).unwrap_or_default()
            );
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {name}: {e}"));
            let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"));
            let outcome = check(&folder, &value);
            match (KNOWN_INVALID.iter().find(|(known, _)| *known == name), outcome) {
                (None, Ok(())) => round_tripped += 1,
                (None, Err(e)) => failures.push(format!("{name}: {e}")),
                (Some((_, want)), Err(e)) if e.contains(want) => known_invalid += 1,
                (Some((_, want)), Err(e)) => failures.push(format!("{name}: expected an error with {want:?}, got {e}")),
                (Some(_), Ok(())) => failures.push(format!("{name}: listed in KNOWN_INVALID but round-trips now")),
            }
        }
    }

    println!(
        "round-tripped {round_tripped} of {files} example files in {folders} folders \
         ({known_invalid} known schema-invalid example rejected as expected)"
    );
    assert!(files > 0, "no examples found under {}", examples.display());
    assert!(
        failures.is_empty(),
        "{} example(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(round_tripped + known_invalid, files);
}

/// Cases the examples do not cover: the untagged unions pick the right variant, and order is kept.
#[test]
fn unions_pick_the_right_variant() {
    let legacy = serde_json::json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]});
    let parsed: PrimitiveSchemaDefinition = rt(&legacy).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(parsed, PrimitiveSchemaDefinition::LegacyTitled(_)),
        "{parsed:?}"
    );

    let integer = serde_json::json!({"type": "integer", "minimum": 1, "maximum": 2.5});
    let parsed: PrimitiveSchemaDefinition = rt(&integer).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(parsed, PrimitiveSchemaDefinition::Number(_)), "{parsed:?}");

    let form = serde_json::json!({"type": "object", "properties": {
        "zeta": {"type": "string"}, "alpha": {"type": "boolean"}, "mid": {"type": "array", "items": {"anyOf": []}}
    }});
    let parsed: ElicitRequestedSchema = rt(&form).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = parsed.properties.0.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha", "mid"]);
    let text = serde_json::to_string(&parsed).unwrap_or_default();
    assert!(
        text.find("zeta") < text.find("alpha") && text.find("alpha") < text.find("mid"),
        "{text}"
    );

    let roots = serde_json::json!({"method": "roots/list"});
    let parsed: InputRequest = rt(&roots).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parsed, InputRequest::ListRoots { params: None });

    let url = serde_json::json!({"mode": "url", "message": "m", "url": "https://example.com"});
    assert!(matches!(
        rt::<ElicitRequestParams>(&url),
        Ok(ElicitRequestParams::Url(_))
    ));
    let form_with_url_mode = serde_json::json!({"mode": "url", "message": "m", "requestedSchema": form});
    assert!(serde_json::from_value::<ElicitRequestParams>(form_with_url_mode).is_err());

    let answer =
        serde_json::json!({"action": "accept", "content": {"n": 2.5, "i": 3, "b": true, "s": "x", "l": ["y"]}});
    assert!(matches!(rt::<InputResponse>(&answer), Ok(InputResponse::Elicit(_))));

    assert_eq!(InputRequiredResult::default().result_type, ResultType::InputRequired);
    let progress = ProgressNotificationParams {
        progress_token: RequestId::Number(1),
        progress: 0.5,
        total: Some(2.0),
        message: None,
        meta: None,
    };
    assert_eq!(
        serde_json::to_string(&progress).unwrap_or_default(),
        r#"{"progressToken":1,"progress":0.5,"total":2}"#
    );
}
