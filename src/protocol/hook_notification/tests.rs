//! The Notification hook's input read from Claude Code 2.1.332's captures, and hostile ones.

use serde_json::{Value, json};

use super::*;

fn captured(text: &str) -> Value {
    serde_json::from_str(text).expect("a capture is JSON")
}

const PERMISSION_PROMPT: &str = include_str!(
    "../../../tests/fixtures/claude-code/2.1.332/notification/tui-handback-bash/hooks/Notification.1.stdin.json"
);
const IDLE_PROMPT: &str = include_str!(
    "../../../tests/fixtures/claude-code/2.1.332/notification/tui-handback-bash/hooks/Notification.2.stdin.json"
);

#[test]
fn the_captured_permission_prompt_names_its_project_and_session() {
    let notice = parse_notification(&captured(PERMISSION_PROMPT)).expect("a Notification");
    assert_eq!(notice.kind, NotificationType::PermissionPrompt);
    assert_eq!(notice.message, "Claude needs your permission");
    assert_eq!(notice.title, None);
    assert_eq!(notice.session_id.as_deref(), Some("c1b4931d-1905-4ce4-a05d-220af1b694b4"));
    assert_eq!(notice.project.as_deref(), Some("project"));
    assert_eq!(notice.headline(), "Claude Code waits in project (session c1b4931d)");
    assert_eq!(notice.words(), "Claude needs your permission");
}

#[test]
fn the_captured_idle_prompt_is_a_wait_too() {
    let notice = parse_notification(&captured(IDLE_PROMPT)).expect("a Notification");
    assert_eq!(notice.kind, NotificationType::IdlePrompt);
    assert!(notice.kind.waits());
    assert_eq!(notice.message, "Claude is waiting for your input");
}

#[test]
fn other_events_and_other_inputs_are_not_notifications() {
    let permission = json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash"});
    assert_eq!(parse_notification(&permission), None);
    assert_eq!(parse_notification(&json!([1, 2])), None);
    assert_eq!(parse_notification(&json!("Notification")), None);
    assert_eq!(parse_notification(&json!({"notification_type": "idle_prompt"})), None);
}

#[test]
fn types_are_typed_with_the_unknown_kept_by_name_and_sent_back_as_named() {
    let kind = |name: &str| {
        let notice = parse_notification(
            &json!({"hook_event_name": "Notification", "notification_type": name}),
        )
        .expect("a Notification");
        notice.kind
    };
    assert_eq!(kind("auth_success"), NotificationType::AuthSuccess);
    assert_eq!(kind("elicitation_dialog"), NotificationType::ElicitationDialog);
    assert_eq!(kind("agent_completed"), NotificationType::Other("agent_completed".to_owned()));
    assert!(!kind("auth_success").waits());
    assert!(kind("worker_permission_prompt").waits());
    let wire = serde_json::to_value(kind("brand_new_type")).expect("serialises");
    assert_eq!(wire, json!("brand_new_type"));
    let back: NotificationType = serde_json::from_value(json!("idle_prompt")).expect("reads");
    assert_eq!(back, NotificationType::IdlePrompt);
}

#[test]
fn missing_and_wrongly_typed_fields_are_left_out_never_a_panic() {
    let bare = parse_notification(&json!({"hook_event_name": "Notification"})).expect("one");
    assert_eq!(bare.kind, NotificationType::Other("notification".to_owned()));
    assert_eq!(bare.message, "notification");
    assert_eq!((bare.session_id, bare.project), (None, None));
    assert_eq!(
        parse_notification(&json!({"hook_event_name": "Notification"})).map(|n| n.headline()),
        Some("Claude Code".to_owned())
    );
    let wrong = parse_notification(&json!({
        "hook_event_name": "Notification", "notification_type": 7, "message": {"a": 1},
        "session_id": ["x"], "cwd": 42, "title": null,
    }))
    .expect("still a notice");
    assert_eq!(wrong.session_id, None);
    assert_eq!(wrong.project, None);
    let permission = parse_notification(&json!({
        "hook_event_name": "Notification", "notification_type": "permission_prompt",
        "message": "   ", "cwd": "/", "session_id": "",
    }))
    .expect("a notice");
    assert_eq!(permission.message, "Claude needs your permission", "Claude Code's own words");
    assert_eq!(permission.project, None, "/ names no project");
    assert_eq!(permission.headline(), "Claude Code waits");
}

#[test]
fn a_100_kb_japanese_message_is_cut_to_its_limit_on_a_character_boundary() {
    let long = "待機中のターミナル".repeat(100 * 1024 / 27);
    assert!(long.len() > 100 * 1000);
    let notice = parse_notification(&json!({
        "hook_event_name": "Notification", "notification_type": "idle_prompt", "message": long,
        "cwd": format!("/home/dev/{}", "注文".repeat(1000)), "session_id": "セッション".repeat(500),
        "title": "題".repeat(1000),
    }))
    .expect("a notice");
    assert_eq!(notice.message.chars().count(), MESSAGE_CHARS);
    assert!(notice.message.ends_with('…') && notice.message.starts_with("待機中"));
    assert_eq!(notice.project.as_ref().map(|p| p.chars().count()), Some(NAME_CHARS));
    assert_eq!(notice.short_session().as_deref(), Some("セッションセッシ"));
    assert!(notice.words().starts_with("題題"));
    let wire = serde_json::to_string(&notice).expect("serialises");
    assert!(wire.len() < 8 * 1024, "{} bytes on the wire", wire.len());
}

#[test]
fn a_windows_cwd_and_a_title_are_read() {
    let notice = parse_notification(&json!({
        "hook_event_name": "Notification", "notification_type": "permission_prompt",
        "message": "Claude needs your permission to use Bash", "title": "Permission needed",
        "cwd": "C:\\work\\orders\\", "session_id": "3f2a1b2c-0000",
    }))
    .expect("a notice");
    assert_eq!(notice.headline(), "Claude Code waits in orders (session 3f2a1b2c)");
    assert_eq!(notice.words(), "Permission needed: Claude needs your permission to use Bash");
}
