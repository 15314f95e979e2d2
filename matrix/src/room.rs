//! `askpane-matrix room create` and `room use`: the one room the bridge posts in, who may answer
//! there, kept in `room.json` beside the session.

use anyhow::{Context, Result, bail};
use matrix_sdk::config::SyncSettings;
use matrix_sdk::ruma::api::client::room::create_room::v3::{Request as CreateRoom, RoomPreset};
use matrix_sdk::ruma::events::InitialStateEvent;
use matrix_sdk::ruma::events::room::encryption::RoomEncryptionEventContent;
use matrix_sdk::ruma::{OwnedRoomOrAliasId, OwnedUserId};
use matrix_sdk::{Client, Room};

use crate::account;
use crate::state::{Answerers, Dir, RoomConfig, write_json};

/// Creates an encrypted room (`m.room.encryption` in its initial state, so not one message is
/// ever sent in the clear) and invites `invite`.
pub async fn create(
    dir: &Dir,
    invite: Vec<String>,
    power_level: Option<i64>,
    name: &str,
) -> Result<String> {
    let users = parse_users(&invite)?;
    if users.is_empty() && power_level.is_none() {
        bail!(
            "invite at least one person who answers (--invite @alice:example.org), or give --power-level"
        );
    }
    let client = account::restore(dir).await?;
    client.sync_once(SyncSettings::default()).await.context("cannot sync with the homeserver")?;
    let mut request = CreateRoom::new();
    request.name = Some(name.to_owned());
    request.preset = Some(RoomPreset::PrivateChat);
    request.invite = users;
    request.initial_state = vec![
        InitialStateEvent::with_empty_state_key(
            RoomEncryptionEventContent::with_recommended_defaults(),
        )
        .to_raw_any(),
    ];
    let room =
        client.create_room(request).await.context("the homeserver did not create the room")?;
    let answerers = match power_level {
        Some(level) => Answerers::PowerLevel(level),
        None => Answerers::Users(invite),
    };
    save(dir, &room, answerers, false)?;
    Ok(room.room_id().to_string())
}

/// Joins (if needed) and takes the room `room`: refused unless it is encrypted, or
/// `allow_unencrypted`.
pub async fn use_room(
    dir: &Dir,
    room: &str,
    answerers: Vec<String>,
    power_level: Option<i64>,
    allow_unencrypted: bool,
) -> Result<String> {
    let users = parse_users(&answerers)?;
    if users.is_empty() && power_level.is_none() {
        bail!(
            "name who may answer: --answerer @alice:example.org (repeatable), or --power-level N"
        );
    }
    let target: OwnedRoomOrAliasId =
        room.try_into().with_context(|| format!("`{room}` is no room id or alias"))?;
    let client = account::restore(dir).await?;
    client.sync_once(SyncSettings::default()).await.context("cannot sync with the homeserver")?;
    let joined = join(&client, &target).await?;
    check_encrypted(&joined, allow_unencrypted).await?;
    let answerers = match power_level {
        Some(level) => Answerers::PowerLevel(level),
        None => Answerers::Users(answerers),
    };
    save(dir, &joined, answerers, allow_unencrypted)?;
    Ok(joined.room_id().to_string())
}

async fn join(client: &Client, target: &OwnedRoomOrAliasId) -> Result<Room> {
    if let Ok(room_id) = matrix_sdk::ruma::OwnedRoomId::try_from(target.as_str())
        && let Some(room) = client.get_room(&room_id)
        && room.state() == matrix_sdk::RoomState::Joined
    {
        return Ok(room);
    }
    client
        .join_room_by_id_or_alias(target, &[])
        .await
        .with_context(|| format!("cannot join {target}"))
}

/// Refuses an unencrypted room unless it was allowed.
pub async fn check_encrypted(room: &Room, allow_unencrypted: bool) -> Result<()> {
    let state =
        room.latest_encryption_state().await.context("cannot read the room's encryption")?;
    if !state.is_encrypted() && !allow_unencrypted {
        bail!(
            "{} is not encrypted: the bridge posts only in end-to-end encrypted rooms (give --allow-unencrypted to use it anyway)",
            room.room_id()
        );
    }
    Ok(())
}

fn parse_users(users: &[String]) -> Result<Vec<OwnedUserId>> {
    users
        .iter()
        .map(|user| {
            OwnedUserId::try_from(user.as_str())
                .with_context(|| format!("`{user}` is no Matrix user id (@name:server)"))
        })
        .collect()
}

fn save(dir: &Dir, room: &Room, answerers: Answerers, allow_unencrypted: bool) -> Result<()> {
    // A new room keeps the person's `enable`/`disable`.
    let start_with_inbox = dir.room().map_or(true, |old| old.start_with_inbox);
    let config = RoomConfig {
        room_id: room.room_id().to_string(),
        answerers,
        allow_unencrypted,
        start_with_inbox,
    };
    write_json(&dir.config_file(), &config)
}
