//! What a tool function may return, and how each becomes a `CallToolResult`.

pub use crate::content::{Json, Summarized};
use crate::error::McpError;
use crate::mrtr::{Halt, Outcome};
use crate::protocol::{
    AudioContent, CallToolResult, ContentBlock, EmbeddedResource, ImageContent, ResourceLink, TextContent,
};
use schemars::JsonSchema;
use serde::Serialize;

/// Turns a tool function's return value into the tool's outcome.
///
/// Implemented for `String`, `&'static str`, `()`, every content type,
/// `Vec<ContentBlock>`, [`Json<T>`], [`Summarized<T>`], `CallToolResult`, `Outcome<T>`, and
/// `Result<T, E>` where `E: Display` (an `Err` is a tool execution error:
/// `isError: true` with the error's text).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a #[tool] function",
    note = "return String, a content type, Json<T> (T: Serialize + JsonSchema), CallToolResult, or Result<T, E> with E: Display"
)]
pub trait IntoToolResult {
    /// The outcome.
    fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError>;

    /// The `outputSchema` this return type advertises, if any.
    fn output_schema(_keep_defs: bool) -> Option<serde_json::Value> {
        None
    }
}

pub(crate) fn blocks(content: Vec<ContentBlock>) -> Result<Outcome<CallToolResult>, McpError> {
    Ok(Outcome::Complete(CallToolResult {
        content,
        ..Default::default()
    }))
}

/// A tool execution error result with one text block.
pub(crate) fn error_result(text: String) -> CallToolResult {
    CallToolResult {
        content: vec![ContentBlock::Text(TextContent {
            text,
            ..Default::default()
        })],
        is_error: Some(true),
        ..Default::default()
    }
}

fn text(text: String) -> ContentBlock {
    ContentBlock::Text(TextContent {
        text,
        ..Default::default()
    })
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError> {
        blocks(vec![text(self)])
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError> {
        blocks(vec![text(self.to_owned())])
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError> {
        blocks(Vec::new())
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError> {
        blocks(vec![self])
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError> {
        blocks(self)
    }
}

macro_rules! content_into_result {
    ($($ty:ident => $variant:ident),*) => {$(
        impl IntoToolResult for $ty {
            fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError> {
                blocks(vec![ContentBlock::$variant(self)])
            }
        }
        impl From<$ty> for ContentBlock {
            fn from(c: $ty) -> Self {
                ContentBlock::$variant(c)
            }
        }
    )*};
}
content_into_result!(TextContent => Text, ImageContent => Image, AudioContent => Audio,
    ResourceLink => ResourceLink, EmbeddedResource => Resource);

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError> {
        Ok(Outcome::Complete(self))
    }
}

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError> {
        let value = serde_json::to_value(&self.0)
            .map_err(|e| McpError::internal(format!("tool output could not be serialized: {e}")))?;
        let json = value.to_string();
        Ok(Outcome::Complete(CallToolResult {
            content: vec![text(json)],
            structured_content: Some(value),
            ..Default::default()
        }))
    }

    fn output_schema(keep_defs: bool) -> Option<serde_json::Value> {
        Some(crate::schema::output_schema_for::<T>(keep_defs))
    }
}

impl<T: Serialize + JsonSchema> IntoToolResult for Summarized<T> {
    fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError> {
        let value = serde_json::to_value(&self.value)
            .map_err(|e| McpError::internal(format!("tool output could not be serialized: {e}")))?;
        let json = value.to_string();
        Ok(Outcome::Complete(CallToolResult {
            content: vec![text(self.summary), text(json)],
            structured_content: Some(value),
            ..Default::default()
        }))
    }

    fn output_schema(keep_defs: bool) -> Option<serde_json::Value> {
        Some(crate::schema::output_schema_for::<T>(keep_defs))
    }
}

impl<T: IntoToolResult, E: std::fmt::Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError> {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => Ok(Outcome::Complete(error_result(e.to_string()))),
        }
    }

    fn output_schema(keep_defs: bool) -> Option<serde_json::Value> {
        T::output_schema(keep_defs)
    }
}

impl<T: IntoToolResult> IntoToolResult for Outcome<T> {
    fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError> {
        match self {
            Outcome::Complete(v) => v.into_tool_result(),
            Outcome::InputRequired(ir) => Ok(Outcome::InputRequired(ir)),
        }
    }

    fn output_schema(keep_defs: bool) -> Option<serde_json::Value> {
        T::output_schema(keep_defs)
    }
}

impl<T: IntoToolResult> IntoToolResult for Result<T, Halt> {
    fn into_tool_result(self) -> Result<Outcome<CallToolResult>, McpError> {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(Halt::Failed(msg)) => Ok(Outcome::Complete(error_result(msg))),
            Err(halt) => halt.into_outcome(),
        }
    }

    fn output_schema(keep_defs: bool) -> Option<serde_json::Value> {
        T::output_schema(keep_defs)
    }
}

/// Writes a `CallToolResult` as compact JSON, exactly as its `Serialize`
/// would: text blocks without annotations or metadata, the common case, are
/// written directly; everything else goes through serde.
pub(crate) fn write_call_result(result: &CallToolResult, out: &mut Vec<u8>) -> serde_json::Result<()> {
    use crate::protocol::ResultType;
    out.extend_from_slice(match result.result_type {
        ResultType::Complete => br#"{"resultType":"complete","content":["#.as_slice(),
        ResultType::InputRequired => br#"{"resultType":"input_required","content":["#.as_slice(),
        ResultType::Task => br#"{"resultType":"task","content":["#.as_slice(),
    });
    for (i, block) in result.content.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match block {
            ContentBlock::Text(TextContent {
                text,
                annotations: None,
                meta: None,
            }) => {
                out.extend_from_slice(br#"{"type":"text","text":"#);
                serde_json::to_writer(&mut *out, text)?;
                out.push(b'}');
            }
            other => serde_json::to_writer(&mut *out, other)?,
        }
    }
    out.push(b']');
    if let Some(structured) = &result.structured_content {
        out.extend_from_slice(br#","structuredContent":"#);
        serde_json::to_writer(&mut *out, structured)?;
    }
    if let Some(is_error) = result.is_error {
        out.extend_from_slice(if is_error {
            br#","isError":true"#.as_slice()
        } else {
            br#","isError":false"#
        });
    }
    if let Some(meta) = &result.meta {
        out.extend_from_slice(br#","_meta":"#);
        serde_json::to_writer(&mut *out, meta)?;
    }
    out.push(b'}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Annotations, ResultMeta, ResultType, Role};

    #[test]
    fn the_direct_writer_matches_serde() {
        let text = |t: &str| {
            ContentBlock::Text(TextContent {
                text: t.into(),
                annotations: None,
                meta: None,
            })
        };
        let annotated = ContentBlock::Text(TextContent {
            text: "x".into(),
            annotations: Some(Annotations {
                audience: Some(vec![Role::User]),
                ..Default::default()
            }),
            meta: None,
        });
        let cases = [
            CallToolResult {
                content: vec![text("hello")],
                ..Default::default()
            },
            CallToolResult::default(),
            CallToolResult {
                result_type: ResultType::InputRequired,
                content: vec![text("a \"quoted\"\n\u{1}line"), annotated, text("")],
                structured_content: Some(serde_json::json!({"k": [1, 2.5, null]})),
                is_error: Some(true),
                meta: Some(ResultMeta::default()),
            },
            CallToolResult {
                result_type: ResultType::Task,
                content: vec![ContentBlock::Image(ImageContent::default())],
                is_error: Some(false),
                ..Default::default()
            },
        ];
        for result in cases {
            let mut out = Vec::new();
            write_call_result(&result, &mut out).unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(&result).unwrap(),
                "{result:?}"
            );
        }
    }
}
