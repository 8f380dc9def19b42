//! `subscriptions/listen`: a long-lived stream of opted-in notifications.

use super::{Implementation, Meta, NotificationMeta, RequestId, RequestMeta, ResultType};
use serde::{Deserialize, Serialize};

/// Which notifications a subscription opts in to (`$defs/SubscriptionFilter`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// URIs whose `notifications/resources/updated` the client wants.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Tasks whose `notifications/tasks` the client wants (tasks extension).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

/// Params of `subscriptions/listen` (`$defs/SubscriptionsListenRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta")]
    pub meta: RequestMeta,
    /// The notifications to deliver on this stream.
    pub notifications: SubscriptionFilter,
}

/// The result ending a `subscriptions/listen` stream gracefully (`$defs/SubscriptionsListenResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// Always `complete`.
    pub result_type: ResultType,
    /// Result metadata, naming the subscription that ended.
    #[serde(rename = "_meta")]
    pub meta: SubscriptionsListenResultMeta,
}

/// The `_meta` of a [`SubscriptionsListenResult`] (`$defs/SubscriptionsListenResultMetaObject`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenResultMeta {
    /// The subscription that ended (the id of the listen request).
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub subscription_id: RequestId,
    /// The server's self-description.
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// Any other metadata.
    #[serde(flatten)]
    pub other: Meta,
}

/// Params of `notifications/subscriptions/acknowledged` (`$defs/SubscriptionsAcknowledgedNotificationParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// The notifications the server agreed to deliver.
    pub notifications: SubscriptionFilter,
    /// Notification metadata (carries the subscription id).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}
