//! askpane-matrix-peer: a second Matrix client, written with the same SDK as the bridge, that the
//! integration tests (tests/matrix.rs) drive over stdin/stdout JSON lines, so the test binary
//! stays free of matrix-sdk and the test room is really end-to-end encrypted. Never shipped.
//!
//! Each request is one line, `{"do": …, …}`; each gets one line back: `{"ok": true, …}` or
//! `{"ok": false, "error": "…"}`. Waits are bounded by `timeout_ms` (10 s by default).

// matrix-sdk's futures are deeply nested: the default limit (128) overflows proving them Send.
#![recursion_limit = "256"]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use matrix_sdk::config::SyncSettings;
use matrix_sdk::ruma::api::client::room::create_room::v3::{Request as CreateRoom, RoomPreset};
use matrix_sdk::ruma::api::client::uiaa;
use matrix_sdk::ruma::events::poll::unstable_end::UnstablePollEndEventContent;
use matrix_sdk::ruma::events::poll::unstable_response::UnstablePollResponseEventContent;
use matrix_sdk::ruma::events::poll::unstable_start::UnstablePollStartEventContent;
use matrix_sdk::ruma::events::relation::Thread;
use matrix_sdk::ruma::events::room::encrypted::OriginalSyncRoomEncryptedEvent;
use matrix_sdk::ruma::events::room::encryption::RoomEncryptionEventContent;
use matrix_sdk::ruma::events::room::member::StrippedRoomMemberEvent;
use matrix_sdk::ruma::events::room::message::{
    MessageType, OriginalSyncRoomMessageEvent, Relation, RoomMessageEventContent,
};
use matrix_sdk::ruma::events::{InitialStateEvent, OriginalSyncMessageLikeEvent};
use matrix_sdk::ruma::{Int, OwnedEventId, OwnedRoomId, OwnedUserId};
use matrix_sdk::{Client, Room};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, Notify};

/// Every event the peer saw, as the tests read them.
#[derive(Default)]
struct Seen {
    events: Mutex<Vec<Value>>,
    changed: Notify,
}

impl Seen {
    async fn push(&self, event: Value) {
        self.events.lock().await.push(event);
        self.changed.notify_waiters();
    }

    /// The first event `matches` accepts, waiting up to `timeout`.
    async fn wait(&self, timeout: Duration, matches: impl Fn(&Value) -> bool) -> Result<Value> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.changed.notified();
            if let Some(found) = self.events.lock().await.iter().find(|event| matches(event)) {
                return Ok(found.clone());
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                let events = self.events.lock().await.clone();
                bail!("not seen within {timeout:?}; seen: {}", Value::Array(events));
            }
        }
    }
}

struct Peer {
    client: Option<Client>,
    seen: Arc<Seen>,
    password: String,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let mut peer = Peer { client: None, seen: Arc::new(Seen::default()), password: String::new() };
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    #[expect(clippy::disallowed_methods, reason = "stdout is the peer's reply channel to the test")]
    let mut out = tokio::io::stdout();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Value>(&line) {
            Ok(request) => match peer.handle(&request).await {
                Ok(mut reply) => {
                    if let Some(object) = reply.as_object_mut() {
                        object.insert("ok".to_owned(), Value::Bool(true));
                    }
                    reply
                }
                Err(error) => json!({"ok": false, "error": format!("{error:#}")}),
            },
            Err(error) => json!({"ok": false, "error": format!("not JSON: {error}")}),
        };
        out.write_all(format!("{reply}\n").as_bytes()).await?;
        out.flush().await?;
    }
    Ok(())
}

fn text<'a>(request: &'a Value, key: &str) -> Result<&'a str> {
    request.get(key).and_then(Value::as_str).with_context(|| format!("`{key}` is missing"))
}

impl Peer {
    fn client(&self) -> Result<&Client> {
        self.client.as_ref().context("log in first")
    }

    async fn room(&self, request: &Value) -> Result<Room> {
        let id: OwnedRoomId = text(request, "room")?.try_into()?;
        self.client()?.get_room(&id).context("no such room")
    }

    async fn handle(&mut self, request: &Value) -> Result<Value> {
        let timeout = Duration::from_millis(
            request.get("timeout_ms").and_then(Value::as_u64).unwrap_or(10_000),
        );
        match text(request, "do")? {
            "login" => self.login(request).await,
            "create_room" => {
                let client = self.client()?;
                let mut create = CreateRoom::new();
                create.preset = Some(RoomPreset::PrivateChat);
                create.invite = request
                    .get("invite")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(OwnedUserId::try_from)
                    .collect::<Result<_, _>>()?;
                if request.get("encrypted").and_then(Value::as_bool).unwrap_or(true) {
                    create.initial_state = vec![
                        InitialStateEvent::with_empty_state_key(
                            RoomEncryptionEventContent::with_recommended_defaults(),
                        )
                        .to_raw_any(),
                    ];
                }
                let room = client.create_room(create).await?;
                Ok(json!({"room": room.room_id()}))
            }
            "join" => {
                let client = self.client()?;
                let id: OwnedRoomId = text(request, "room")?.try_into()?;
                let deadline = tokio::time::Instant::now() + timeout;
                loop {
                    if let Some(room) = client.get_room(&id) {
                        if room.state() == matrix_sdk::RoomState::Joined {
                            break;
                        }
                        if room.state() == matrix_sdk::RoomState::Invited {
                            room.join().await?;
                            break;
                        }
                    }
                    if tokio::time::Instant::now() > deadline {
                        bail!("no invite to {id} within {timeout:?}");
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Ok(json!({}))
            }
            "leave" => {
                self.room(request).await?.leave().await?;
                Ok(json!({}))
            }
            "invite" => {
                let room = self.room(request).await?;
                let user: OwnedUserId = text(request, "user")?.try_into()?;
                room.invite_user_by_id(&user).await?;
                Ok(json!({}))
            }
            "power_level" => {
                // The room's admin (its creator) sets `user`'s power level: a real
                // `m.room.power_levels` change, as Element's "Roles & permissions" sends it.
                let room = self.room(request).await?;
                let user: OwnedUserId = text(request, "user")?.try_into()?;
                let level =
                    request.get("level").and_then(Value::as_i64).context("`level` is missing")?;
                let sent = room.update_power_levels(vec![(&user, Int::try_from(level)?)]).await?;
                Ok(json!({"event": sent.event_id}))
            }
            "send" => {
                let room = self.room(request).await?;
                let sent =
                    room.send(RoomMessageEventContent::text_plain(text(request, "text")?)).await?;
                Ok(json!({"event": sent.response.event_id}))
            }
            "reply_in_thread" => {
                let room = self.room(request).await?;
                let root: OwnedEventId = text(request, "event")?.try_into()?;
                let mut content = RoomMessageEventContent::text_plain(text(request, "text")?);
                content.relates_to = Some(Relation::Thread(Thread::plain(root.clone(), root)));
                let sent = room.send(content).await?;
                Ok(json!({"event": sent.response.event_id}))
            }
            "vote" => {
                let room = self.room(request).await?;
                let poll: OwnedEventId = text(request, "poll")?.try_into()?;
                let answers: Vec<String> = request
                    .get("answers")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                let sent = room.send(UnstablePollResponseEventContent::new(answers, poll)).await?;
                Ok(json!({"event": sent.response.event_id}))
            }
            "wait_message" => {
                let contains = text(request, "contains")?.to_owned();
                let event = self
                    .seen
                    .wait(timeout, |event| {
                        event["type"] == "message"
                            && event["body"].as_str().is_some_and(|body| body.contains(&contains))
                    })
                    .await?;
                Ok(json!({"event": event}))
            }
            "wait_poll" => {
                let contains = text(request, "contains")?.to_owned();
                let event = self
                    .seen
                    .wait(timeout, |event| {
                        event["type"] == "poll_start"
                            && event["question"]
                                .as_str()
                                .is_some_and(|text| text.contains(&contains))
                    })
                    .await?;
                Ok(json!({"event": event}))
            }
            "wait_edit" => {
                let of = text(request, "event")?.to_owned();
                let contains = text(request, "contains")?.to_owned();
                let event = self
                    .seen
                    .wait(timeout, |event| {
                        event["type"] == "edit"
                            && event["replaces"] == of.as_str()
                            && event["body"].as_str().is_some_and(|body| body.contains(&contains))
                    })
                    .await?;
                Ok(json!({"event": event}))
            }
            "wait_poll_end" => {
                let poll = text(request, "poll")?.to_owned();
                let event = self
                    .seen
                    .wait(timeout, |event| {
                        event["type"] == "poll_end" && event["poll"] == poll.as_str()
                    })
                    .await?;
                Ok(json!({"event": event}))
            }
            "wait_undecrypted" => {
                let room = text(request, "room")?.to_owned();
                let event = self
                    .seen
                    .wait(timeout, |event| {
                        event["type"] == "undecrypted" && event["room"] == room.as_str()
                    })
                    .await?;
                Ok(json!({"event": event}))
            }
            "seen" => Ok(json!({"events": self.seen.events.lock().await.clone()})),
            other => bail!("unknown request `{other}`"),
        }
    }

    async fn login(&mut self, request: &Value) -> Result<Value> {
        let homeserver = text(request, "homeserver")?;
        let user = text(request, "user")?;
        self.password = text(request, "password")?.to_owned();
        let store = PathBuf::from(text(request, "store")?);
        let client =
            Client::builder().homeserver_url(homeserver).sqlite_store(&store, None).build().await?;
        client
            .matrix_auth()
            .login_username(user, &self.password)
            .initial_device_display_name("peer")
            .await?;
        client.sync_once(SyncSettings::default()).await?;
        // Cross-signed as Element does on login, so that the bridge's identity-based key
        // sharing sends this device the room's keys; `"cross_sign": false` leaves a new device
        // of an account that has an identity unsigned (one its owner never verified).
        let cross_sign = request.get("cross_sign").and_then(Value::as_bool).unwrap_or(true);
        if cross_sign
            && let Err(error) = client.encryption().bootstrap_cross_signing_if_needed(None).await
        {
            let response = error.as_uiaa_response().context("cross-signing failed")?;
            let mut auth = uiaa::Password::new(
                uiaa::UserIdentifier::Matrix(uiaa::MatrixUserIdentifier::new(user.to_owned())),
                self.password.clone(),
            );
            auth.session = response.session.clone();
            client
                .encryption()
                .bootstrap_cross_signing(Some(uiaa::AuthData::Password(auth)))
                .await?;
        }
        self.watch(&client);
        let syncing = client.clone();
        // The next long poll as soon as the last one ended, as the bridge syncs (its
        // `keep_syncing`), not the SDK's `sync`, which sleeps a second after a quick one: the
        // figures time the bridge, not this peer's pause. A pause only after an error or an
        // empty answer that came at once.
        tokio::spawn(async move {
            let settings = SyncSettings::default().timeout(Duration::from_secs(5));
            loop {
                let started = tokio::time::Instant::now();
                let quiet = match syncing.sync_once(settings.clone()).await {
                    Ok(response) => {
                        response.rooms.is_empty()
                            && response.to_device.is_empty()
                            && started.elapsed() < Duration::from_secs(1)
                    }
                    Err(_) => true,
                };
                if quiet {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        });
        let device = client.device_id().map(ToString::to_string);
        self.client = Some(client);
        Ok(json!({"device": device}))
    }

    fn watch(&self, client: &Client) {
        let seen = self.seen.clone();
        client.add_event_handler(move |event: OriginalSyncRoomMessageEvent, room: Room| {
            let seen = seen.clone();
            async move {
                let body = |message: &MessageType| match message {
                    MessageType::Text(text) => text.body.clone(),
                    MessageType::Notice(notice) => notice.body.clone(),
                    other => other.body().to_owned(),
                };
                // The HTML a client renders, when the event has one.
                let formatted = |message: &MessageType| match message {
                    MessageType::Text(text) => text.formatted.as_ref().map(|f| f.body.clone()),
                    MessageType::Notice(notice) => {
                        notice.formatted.as_ref().map(|f| f.body.clone())
                    }
                    _ => None,
                };
                // `m.mentions` as sent (absent: null), what a client pings for.
                let mentions = serde_json::to_value(&event.content.mentions).unwrap_or_default();
                let record = match &event.content.relates_to {
                    Some(Relation::Replacement(replacement)) => json!({
                        "type": "edit",
                        "event_id": event.event_id,
                        "sender": event.sender,
                        "room": room.room_id(),
                        "replaces": replacement.event_id,
                        "body": body(&replacement.new_content.msgtype),
                        "formatted_body": formatted(&replacement.new_content.msgtype),
                        "mentions": mentions,
                        "new_mentions": serde_json::to_value(&replacement.new_content.mentions)
                            .unwrap_or_default(),
                    }),
                    relation => {
                        let thread = match relation {
                            Some(Relation::Thread(thread)) => Some(thread.event_id.to_string()),
                            _ => None,
                        };
                        json!({
                            "type": "message",
                            "event_id": event.event_id,
                            "sender": event.sender,
                            "room": room.room_id(),
                            "thread": thread,
                            "body": body(&event.content.msgtype),
                            "formatted_body": formatted(&event.content.msgtype),
                            "mentions": mentions,
                        })
                    }
                };
                seen.push(record).await;
            }
        });
        let seen = self.seen.clone();
        client.add_event_handler(
            move |event: OriginalSyncMessageLikeEvent<UnstablePollStartEventContent>,
                  room: Room| {
                let seen = seen.clone();
                async move {
                    let start = event.content.poll_start();
                    let answers: Vec<Value> = start
                        .answers
                        .iter()
                        .map(|answer| json!({"id": answer.id, "text": answer.text}))
                        .collect();
                    seen.push(json!({
                        "type": "poll_start",
                        "event_id": event.event_id,
                        "room": room.room_id(),
                        "question": start.question.text,
                        "max_selections": u64::from(start.max_selections),
                        "answers": answers,
                    }))
                    .await;
                }
            },
        );
        let seen = self.seen.clone();
        client.add_event_handler(move |event: OriginalSyncMessageLikeEvent<UnstablePollEndEventContent>| {
            let seen = seen.clone();
            async move {
                seen.push(json!({"type": "poll_end", "event_id": event.event_id, "poll": event.content.relates_to.event_id}))
                    .await;
            }
        });
        // An event this device has no key for (the SDK hands it on still encrypted).
        let seen = self.seen.clone();
        client.add_event_handler(move |event: OriginalSyncRoomEncryptedEvent, room: Room| {
            let seen = seen.clone();
            async move {
                seen.push(json!({"type": "undecrypted", "event_id": event.event_id,
                                 "room": room.room_id()}))
                    .await;
            }
        });
        // Invites are joined on request ("join"); nothing to do here but let the SDK see them.
        client.add_event_handler(|_: StrippedRoomMemberEvent| async {});
    }
}
