//! The one table of JSON-RPC method names this server reads: name ⇄ enum.
//! The framing interns names through it, the dispatcher and the legacy
//! router match on it, and the header checks ask it which parameter
//! `Mcp-Name` mirrors.

/// A method the server knows: the 2026-07-28 requests it serves, the
/// requests only a legacy (2025-11-25) session sends, and the client
/// notifications it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// `server/discover`
    Discover,
    /// `tools/list`
    ToolsList,
    /// `tools/call`
    ToolsCall,
    /// `resources/list`
    ResourcesList,
    /// `resources/templates/list`
    ResourceTemplatesList,
    /// `resources/read`
    ResourcesRead,
    /// `prompts/list`
    PromptsList,
    /// `prompts/get`
    PromptsGet,
    /// `completion/complete`
    Complete,
    /// `subscriptions/listen`
    SubscriptionsListen,
    /// `tasks/get` (tasks extension)
    TasksGet,
    /// `tasks/update` (tasks extension)
    TasksUpdate,
    /// `tasks/cancel` (tasks extension)
    TasksCancel,
    /// `skills/list` (skills extension)
    SkillsList,
    /// `skills/get` (skills extension)
    SkillsGet,
    /// `resources/directory/read` (skills extension, `directoryRead`)
    DirectoryRead,
    /// `tasks/result` (legacy: a 2025-11-25 task's result)
    TasksResult,
    /// `initialize` (legacy)
    Initialize,
    /// `ping` (legacy)
    Ping,
    /// `logging/setLevel` (legacy)
    SetLogLevel,
    /// `resources/subscribe` (legacy)
    ResourcesSubscribe,
    /// `resources/unsubscribe` (legacy)
    ResourcesUnsubscribe,
    /// `notifications/initialized` (legacy)
    Initialized,
    /// `notifications/cancelled`
    Cancelled,
    /// `notifications/progress`
    Progress,
    /// `notifications/roots/list_changed` (legacy)
    RootsListChanged,
}

/// Which body parameter the `Mcp-Name` header mirrors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameParam {
    /// `params.name` (`tools/call`, `prompts/get`).
    Name,
    /// `params.uri` (`resources/read`).
    Uri,
    /// `params.taskId` (`tasks/get`, `tasks/update`, `tasks/cancel`).
    TaskId,
}

impl Method {
    /// Every method with its name, most frequent first.
    const TABLE: [(Method, &'static str); 26] = [
        (Method::ToolsCall, "tools/call"),
        (Method::ToolsList, "tools/list"),
        (Method::ResourcesRead, "resources/read"),
        (Method::ResourcesList, "resources/list"),
        (Method::ResourceTemplatesList, "resources/templates/list"),
        (Method::PromptsGet, "prompts/get"),
        (Method::PromptsList, "prompts/list"),
        (Method::Complete, "completion/complete"),
        (Method::Discover, "server/discover"),
        (Method::SubscriptionsListen, "subscriptions/listen"),
        (Method::TasksGet, "tasks/get"),
        (Method::TasksUpdate, "tasks/update"),
        (Method::TasksCancel, "tasks/cancel"),
        (Method::SkillsList, "skills/list"),
        (Method::SkillsGet, "skills/get"),
        (Method::DirectoryRead, "resources/directory/read"),
        (Method::TasksResult, "tasks/result"),
        (Method::Initialize, "initialize"),
        (Method::Ping, "ping"),
        (Method::SetLogLevel, "logging/setLevel"),
        (Method::ResourcesSubscribe, "resources/subscribe"),
        (Method::ResourcesUnsubscribe, "resources/unsubscribe"),
        (Method::Initialized, "notifications/initialized"),
        (Method::Cancelled, "notifications/cancelled"),
        (Method::Progress, "notifications/progress"),
        (Method::RootsListChanged, "notifications/roots/list_changed"),
    ];

    /// Looks a name up; `None` for a method this server does not know.
    pub(crate) fn parse(name: &str) -> Option<Method> {
        Method::TABLE.iter().find(|(_, n)| *n == name).map(|(m, _)| *m)
    }

    /// The method's name on the wire (the same static the table holds).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Method::ToolsCall => "tools/call",
            Method::ToolsList => "tools/list",
            Method::ResourcesRead => "resources/read",
            Method::ResourcesList => "resources/list",
            Method::ResourceTemplatesList => "resources/templates/list",
            Method::PromptsGet => "prompts/get",
            Method::PromptsList => "prompts/list",
            Method::Complete => "completion/complete",
            Method::Discover => "server/discover",
            Method::SubscriptionsListen => "subscriptions/listen",
            Method::TasksGet => "tasks/get",
            Method::TasksUpdate => "tasks/update",
            Method::TasksCancel => "tasks/cancel",
            Method::SkillsList => "skills/list",
            Method::SkillsGet => "skills/get",
            Method::DirectoryRead => "resources/directory/read",
            Method::TasksResult => "tasks/result",
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::SetLogLevel => "logging/setLevel",
            Method::ResourcesSubscribe => "resources/subscribe",
            Method::ResourcesUnsubscribe => "resources/unsubscribe",
            Method::Initialized => "notifications/initialized",
            Method::Cancelled => "notifications/cancelled",
            Method::Progress => "notifications/progress",
            Method::RootsListChanged => "notifications/roots/list_changed",
        }
    }

    /// Whether 2026-07-28 serves it as a request (the rest are legacy
    /// requests, removed in 2026-07-28, or notifications).
    pub(crate) fn is_modern_request(self) -> bool {
        matches!(
            self,
            Method::Discover
                | Method::ToolsList
                | Method::ToolsCall
                | Method::ResourcesList
                | Method::ResourceTemplatesList
                | Method::ResourcesRead
                | Method::PromptsList
                | Method::PromptsGet
                | Method::Complete
                | Method::SubscriptionsListen
                | Method::TasksGet
                | Method::TasksUpdate
                | Method::TasksCancel
                | Method::SkillsList
                | Method::SkillsGet
                | Method::DirectoryRead
        )
    }

    /// Which parameter `Mcp-Name` mirrors for this method, if any (none for
    /// `skills/*` and `resources/directory/read`: clients send no `Mcp-Name`).
    pub(crate) fn name_param(self) -> Option<NameParam> {
        match self {
            Method::ToolsCall | Method::PromptsGet => Some(NameParam::Name),
            Method::ResourcesRead => Some(NameParam::Uri),
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => Some(NameParam::TaskId),
            _ => None,
        }
    }

    /// Whether the request stays open to stream notifications.
    pub(crate) fn is_long_lived(self) -> bool {
        self == Method::SubscriptionsListen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_round_trips_through_its_name() {
        for (m, name) in Method::TABLE {
            assert_eq!(Method::parse(name), Some(m));
            assert_eq!(m.as_str(), name);
        }
        assert_eq!(Method::parse("tools/frobnicate"), None);
        let names: std::collections::HashSet<_> = Method::TABLE.iter().map(|(_, n)| n).collect();
        assert_eq!(names.len(), Method::TABLE.len());
    }
}
