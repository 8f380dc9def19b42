//! Notification params: cancellation, progress, resource updates, list changes.

use super::{Meta, ProgressToken, RequestId};
use serde::{Deserialize, Serialize};

/// The `_meta` of a notification (`$defs/NotificationMetaObject`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NotificationMeta {
    /// The `subscriptions/listen` stream this notification was delivered on.
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// Any other metadata.
    #[serde(flatten)]
    pub other: Meta,
}

/// Params of a notification that carries only `_meta` (`$defs/NotificationParams`).
///
/// Used by `notifications/tools/list_changed`, `notifications/prompts/list_changed`
/// and `notifications/resources/list_changed`, whose params are optional.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// Params of `notifications/cancelled` (`$defs/CancelledNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The id of the request to cancel.
    pub request_id: RequestId,
    /// Why the request was cancelled, for logs or display.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// Params of `notifications/progress` (`$defs/ProgressNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification.
    #[serde(serialize_with = "number::f64")]
    pub progress: f64,
    /// Total progress required, if known.
    #[serde(serialize_with = "number::option_f64", skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What is happening now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// Params of `notifications/resources/updated` (`$defs/ResourceUpdatedNotificationParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResourceUpdatedNotificationParams {
    /// URI of the resource that changed (possibly a sub-resource of the subscribed one).
    pub uri: String,
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// Serializers for JSON `number` fields held as `f64`.
///
/// A whole value is written as a JSON integer (`50`, not `50.0`), the way most
/// peers write it, so such messages round-trip byte for byte.
pub(crate) mod number {
    use serde::Serializer;

    /// Largest magnitude below which every whole `f64` is an exact `i64`.
    const EXACT: f64 = crate::protocol::EXACT_INTEGER as f64;

    /// Serializes an `f64`, whole values as integers.
    pub(crate) fn f64<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        if value.fract() == 0.0 && value.abs() < EXACT {
            serializer.serialize_i64(*value as i64)
        } else {
            serializer.serialize_f64(*value)
        }
    }

    /// Serializes an `Option<f64>` (used with `skip_serializing_if = "Option::is_none"`).
    pub(crate) fn option_f64<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => f64(v, serializer),
            None => serializer.serialize_none(),
        }
    }
}
