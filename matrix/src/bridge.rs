//! `askpane-matrix run`: the bridge. Every ask that waits for a person becomes one room message
//! and one poll per question; poll votes and thread replies of the people allowed to answer go
//! back to the inbox as a front end's verbs, and the room hears what was sent or why not. An ask
//! that ends anywhere else has its message edited to say how, and its polls ended.
//!
//! One task owns the state (what was posted, the polls' votes); the inbox's socket thread and
//! the Matrix sync feed it through channels.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use askpane::protocol::chat::{self, Reply};
use askpane::protocol::inbox::{AskContent, FrontEndDecision, InboxMessage, Listed};
use matrix_sdk::config::SyncSettings;
use matrix_sdk::ruma::events::Mentions;
use matrix_sdk::ruma::events::OriginalSyncMessageLikeEvent;
use matrix_sdk::ruma::events::poll::start::PollKind;
use matrix_sdk::ruma::events::poll::unstable_end::UnstablePollEndEventContent;
use matrix_sdk::ruma::events::poll::unstable_response::UnstablePollResponseEventContent;
use matrix_sdk::ruma::events::poll::unstable_start::{
    NewUnstablePollStartEventContent, UnstablePollAnswer, UnstablePollAnswers,
    UnstablePollStartContentBlock, UnstablePollStartEventContent,
};
use matrix_sdk::ruma::events::relation::Thread;
use matrix_sdk::ruma::events::room::member::{MembershipState, OriginalSyncRoomMemberEvent};
use matrix_sdk::ruma::events::room::message::{
    MessageType, OriginalSyncRoomMessageEvent, Relation, ReplacementMetadata,
    RoomMessageEventContent,
};
use matrix_sdk::ruma::{OwnedEventId, OwnedRoomId, OwnedUserId, UInt};
use matrix_sdk::{Client, Room};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::inbox::{FromInbox, Inbox, Unreachable};
use crate::state::{Answerers, Dir, Posted, PostedMap, write_json};
use crate::{account, room};

/// What the room says to the bridge.
#[derive(Debug)]
enum FromRoom {
    /// A message in reply to (or in the thread of) `root`.
    Reply { sender: OwnedUserId, event_id: OwnedEventId, root: OwnedEventId, body: String },
    /// A vote in the poll `poll`: the answers' ids.
    Vote { sender: OwnedUserId, poll: OwnedEventId, answers: Vec<String> },
    /// `user` left the room (or was removed from it).
    Left { user: OwnedUserId },
}

/// An ask the bridge shows, open in the inbox.
struct Open {
    listed: Listed,
    content: AskContent,
    /// The polls' votes so far, by question index: who voted, and the answer the vote gives its
    /// question (`answers` in the socket's shape). The ask is answered once every poll has a
    /// vote. A question's first vote counted stands: a later one (a change, another member's)
    /// is refused.
    votes: HashMap<usize, (OwnedUserId, Map<String, Value>)>,
    /// The questions that have a poll (a secret one has none).
    polled: Vec<usize>,
}

struct Bridge {
    room: Room,
    /// The bot's own names, which a reply may start with (a mention of the bot).
    bot_names: Vec<String>,
    answerers: Answerers,
    dir: Dir,
    inbox: Inbox,
    posted: PostedMap,
    open: HashMap<String, Open>,
    /// The ask message's and its polls' event ids → ask key (and question index for a poll).
    by_event: HashMap<OwnedEventId, (String, Option<usize>)>,
    /// This run of the inbox, while connected.
    started: Option<u64>,
    /// Asks whose message the homeserver did not take (it was away): posted again every
    /// [`POST_AGAIN`] until it does, or the ask ends.
    unposted: HashMap<String, Listed>,
}

/// How often an ask the homeserver did not take is posted again.
const POST_AGAIN: Duration = Duration::from_secs(2);

/// Runs until Ctrl+C or SIGTERM, or (started by the inbox, `inbox_pid`) until the inbox is gone.
pub async fn run(dir: Dir, inbox_pid: Option<u32>) -> Result<()> {
    let config = dir.room()?;
    let client = account::restore(&dir).await?;
    // No long poll: a restarted bridge's stored token may have nothing new, and a plain
    // `sync_once` would then wait for the server's timeout before the bridge serves anyone.
    client
        .sync_once(SyncSettings::default().timeout(Duration::ZERO))
        .await
        .context("cannot sync with the homeserver")?;
    let room_id: OwnedRoomId =
        config.room_id.as_str().try_into().context("room.json: a broken room id")?;
    let Some(room) = client.get_room(&room_id) else {
        bail!("the account is not in {room_id}: run `askpane-matrix room use {room_id}`");
    };
    room::check_encrypted(&room, config.allow_unencrypted).await?;
    let bot = client.user_id().context("no user id in the session")?.to_owned();

    let (to_bridge, from_room) = mpsc::unbounded_channel();
    add_handlers(&client, &room_id, &bot, &to_bridge);
    let (inbox_events, from_inbox) = mpsc::unbounded_channel();
    let (inbox, inbox_thread) =
        Inbox::start(inbox_events).context("cannot start the inbox's thread")?;

    let sync = tokio::spawn(keep_syncing(client.clone()));
    let posted = dir.posted()?;
    let mut by_event = HashMap::new();
    for (key, posted) in &posted {
        if let Ok(event) = OwnedEventId::try_from(posted.event_id.as_str()) {
            by_event.insert(event, (key.clone(), None));
        }
        for (index, poll) in posted.polls.iter().enumerate() {
            if let Some(Ok(event)) = poll.as_deref().map(OwnedEventId::try_from) {
                by_event.insert(event, (key.clone(), Some(index)));
            }
        }
    }
    let mut bridge = Bridge {
        room,
        bot_names: vec![bot.to_string(), bot.localpart().to_owned()],
        answerers: config.answerers,
        dir,
        inbox: inbox.clone(),
        posted,
        open: HashMap::new(),
        by_event,
        started: None,
        unposted: HashMap::new(),
    };
    log(&format!("bridging the inbox to {room_id}"));
    let outcome = bridge.serve(from_inbox, from_room, inbox_pid).await;
    inbox.stop();
    sync.abort();
    let _ = sync.await;
    drop(to_bridge);
    tokio::task::spawn_blocking(move || inbox_thread.join()).await.ok();
    outcome
}

/// How long one sync waits on the homeserver for something new (a long poll).
const LONG_POLL: Duration = Duration::from_secs(30);
/// The pause after a sync that failed, or that came back at once with nothing new.
const SYNC_PAUSE: Duration = Duration::from_secs(1);

/// Syncs for ever, each long poll as soon as the last one ended; a homeserver that is away
/// (restarted, the network down) is tried again after a pause.
///
/// Not the SDK's `Client::sync`: it sleeps a second after any sync that ended within a second of
/// the one before. Each of the bridge's own messages ends its long poll (its echo), so a vote or
/// a reply that came in that second waited for the pause: 0.5–1 s of an answer's way to the
/// agent (issue 31's figures, 771 ms median with optimised builds). A sync that carries
/// something is followed by the next at once; the pause is kept for what it guards against, a
/// homeserver that answers at once with nothing (it ignores the long poll's timeout).
async fn keep_syncing(client: Client) {
    let settings = SyncSettings::default().timeout(LONG_POLL);
    loop {
        let started = tokio::time::Instant::now();
        match client.sync_once(settings.clone()).await {
            Ok(response) if !sync_was_empty(&response) => {}
            Ok(_) if started.elapsed() >= SYNC_PAUSE => {}
            Ok(_) => tokio::time::sleep(SYNC_PAUSE).await,
            Err(error) => {
                log(&format!("sync: {error}; trying again"));
                tokio::time::sleep(SYNC_PAUSE).await;
            }
        }
    }
}

/// A sync that brought nothing: no room, presence, account data or to-device change.
fn sync_was_empty(response: &matrix_sdk::sync::SyncResponse) -> bool {
    response.rooms.is_empty()
        && response.presence.is_empty()
        && response.account_data.is_empty()
        && response.to_device.is_empty()
}

fn add_handlers(
    client: &Client,
    room_id: &OwnedRoomId,
    bot: &OwnedUserId,
    to_bridge: &mpsc::UnboundedSender<FromRoom>,
) {
    let (ours, me, tell) = (room_id.clone(), bot.clone(), to_bridge.clone());
    client.add_event_handler(move |event: OriginalSyncRoomMessageEvent, room: Room| {
        let (ours, me, tell) = (ours.clone(), me.clone(), tell.clone());
        async move {
            if room.room_id() != ours || event.sender == me {
                return;
            }
            let root = match &event.content.relates_to {
                Some(Relation::Thread(thread)) => thread.event_id.clone(),
                Some(Relation::Reply(reply)) => reply.in_reply_to.event_id.clone(),
                _ => return,
            };
            let body = match &event.content.msgtype {
                MessageType::Text(text) => text.body.clone(),
                MessageType::Notice(notice) => notice.body.clone(),
                _ => return,
            };
            let _ = tell.send(FromRoom::Reply {
                sender: event.sender,
                event_id: event.event_id,
                root,
                body,
            });
        }
    });
    let (ours, tell) = (room_id.clone(), to_bridge.clone());
    client.add_event_handler(move |event: OriginalSyncRoomMemberEvent, room: Room| {
        let (ours, tell) = (ours.clone(), tell.clone());
        async move {
            let gone =
                matches!(event.content.membership, MembershipState::Leave | MembershipState::Ban);
            if room.room_id() != ours || !gone {
                return;
            }
            let _ = tell.send(FromRoom::Left { user: event.state_key });
        }
    });
    let (ours, me, tell) = (room_id.clone(), bot.clone(), to_bridge.clone());
    client.add_event_handler(
        move |event: OriginalSyncMessageLikeEvent<UnstablePollResponseEventContent>, room: Room| {
            let (ours, me, tell) = (ours.clone(), me.clone(), tell.clone());
            async move {
                if room.room_id() != ours || event.sender == me {
                    return;
                }
                let _ = tell.send(FromRoom::Vote {
                    sender: event.sender,
                    poll: event.content.relates_to.event_id.clone(),
                    answers: event.content.poll_response.answers.clone(),
                });
            }
        },
    );
}

impl Bridge {
    async fn serve(
        &mut self,
        mut from_inbox: mpsc::UnboundedReceiver<FromInbox>,
        mut from_room: mpsc::UnboundedReceiver<FromRoom>,
        inbox_pid: Option<u32>,
    ) -> Result<()> {
        let mut terminate = terminate_signal()?;
        let orphaned = orphaned(inbox_pid);
        tokio::pin!(orphaned);
        let mut post_again = tokio::time::interval(POST_AGAIN);
        post_again.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = post_again.tick(), if !self.unposted.is_empty() => self.post_again().await,
                _ = tokio::signal::ctrl_c() => return Ok(()),
                _ = terminate.recv() => return Ok(()),
                () = &mut orphaned => {
                    log("the inbox that started the bridge is gone; the bridge ends");
                    return Ok(());
                }
                event = from_inbox.recv() => match event {
                    Some(event) => self.on_inbox(event).await,
                    None => bail!("the inbox's thread ended"),
                },
                event = from_room.recv() => match event {
                    Some(event) => self.on_room(event).await,
                    None => bail!("the room's handlers ended"),
                },
            }
        }
    }

    async fn on_inbox(&mut self, event: FromInbox) {
        match event {
            FromInbox::Up { started } => {
                log("connected to the inbox");
                self.started = Some(started);
            }
            FromInbox::Down => {
                if self.started.take().is_some() {
                    log("the inbox is away; waiting for it");
                }
                self.open.clear();
                // The inbox lists what is still open when it is back.
                self.unposted.clear();
            }
            FromInbox::Message(message) => self.on_inbox_message(*message).await,
        }
    }

    async fn on_inbox_message(&mut self, message: InboxMessage) {
        match message {
            InboxMessage::List { requests } => self.reconcile(requests).await,
            InboxMessage::Asked { request } => {
                if request.content.is_some() {
                    self.show(request).await;
                } else {
                    // An inbox whose `asked` carries no content: the full list has it.
                    self.inbox.relist();
                }
            }
            InboxMessage::Settled { connection, id, outcome, answered_by } => {
                let Some(key) = self.key(connection, &id) else { return };
                self.open.remove(&key);
                self.unposted.remove(&key);
                self.finish(&key, &ended_elsewhere(&outcome, answered_by.as_deref())).await;
            }
            _ => {}
        }
    }

    fn key(&self, connection: u64, id: &str) -> Option<String> {
        self.started.map(|started| format!("{started}:{connection}:{id}"))
    }

    /// The inbox's list: posts what is new, picks up what was posted before (a restart), and
    /// finishes what ended while the bridge did not hear it.
    async fn reconcile(&mut self, requests: Vec<Listed>) {
        let mut listed_keys = Vec::new();
        for request in requests {
            let Some(key) = self.key(request.connection, &request.id) else { return };
            listed_keys.push(key);
            self.show(request).await;
        }
        let gone: Vec<String> = self
            .posted
            .iter()
            .filter(|(key, posted)| !posted.finished && !listed_keys.contains(key))
            .map(|(key, _)| key.clone())
            .collect();
        for key in gone {
            self.open.remove(&key);
            self.finish(
                &key,
                "Ended while the bridge was away (answered elsewhere, withdrawn or timed out).",
            )
            .await;
        }
    }

    /// Posts the ask unless it was posted before; either way it is open from now on.
    async fn show(&mut self, listed: Listed) {
        let Some(key) = self.key(listed.connection, &listed.id) else { return };
        let Some(content) = listed.content.as_deref().cloned() else { return };
        let polls = chat::polls(&content);
        if !self.posted.contains_key(&key) {
            let Some(message) = chat::render(&listed) else { return };
            match self.post(&listed, message, &polls).await {
                Ok(posted) => {
                    if let Ok(event) = OwnedEventId::try_from(posted.event_id.as_str()) {
                        self.by_event.insert(event, (key.clone(), None));
                    }
                    for (index, poll) in posted.polls.iter().enumerate() {
                        if let Some(Ok(event)) = poll.as_deref().map(OwnedEventId::try_from) {
                            self.by_event.insert(event, (key.clone(), Some(index)));
                        }
                    }
                    self.posted.insert(key.clone(), posted);
                    self.save();
                    if self.unposted.remove(&key).is_some() {
                        log(&format!("posted {} now", listed.title));
                    }
                }
                Err(error) => {
                    // Not lost: posted again until the homeserver takes it or the ask ends.
                    if self.unposted.insert(key, listed.clone()).is_none() {
                        log(&format!(
                            "cannot post {} ({error:#}); trying again every {} s",
                            listed.title,
                            POST_AGAIN.as_secs()
                        ));
                    }
                    return;
                }
            }
        }
        let Some(posted) = self.posted.get(&key) else { return };
        if posted.finished {
            return;
        }
        // The questions whose poll was posted: another is answered in the thread.
        let polled = (posted.polls.iter().enumerate())
            .filter_map(|(question, poll)| poll.is_some().then_some(question))
            .collect();
        self.open.insert(key, Open { listed, content, votes: HashMap::new(), polled });
    }

    /// Posts again the asks the homeserver did not take.
    async fn post_again(&mut self) {
        let waiting: Vec<Listed> = self.unposted.values().cloned().collect();
        for listed in waiting {
            self.show(listed).await;
        }
    }

    /// Posts the ask's message and one poll per question that has one; `Posted::polls` has the
    /// poll of question `index` at `index` (`None` for a question without one).
    async fn post(
        &self,
        listed: &Listed,
        message: chat::Message,
        polls: &[chat::Poll],
    ) -> Result<Posted> {
        // Every event the bridge sends says it mentions no one (an empty `m.mentions`): without
        // one, clients match the body with the legacy push rules, so an agent's text holding
        // someone's display name or `@room` would ping them.
        let content = RoomMessageEventContent::text_html(message.plain, message.html)
            .add_mentions(Mentions::new());
        let message = self.room.send(content).await.context("the message")?.response.event_id;
        let mut posted_polls = Vec::new();
        for poll in polls {
            posted_polls.resize(poll.question, None);
            let answers: Vec<UnstablePollAnswer> = poll
                .answers
                .iter()
                .map(|answer| {
                    UnstablePollAnswer::new(
                        answer.id.clone(),
                        format!("{}. {}", answer.id, answer.text),
                    )
                })
                .collect();
            let Ok(answers) = UnstablePollAnswers::try_from(answers) else {
                posted_polls.push(None);
                continue;
            };
            let mut block = UnstablePollStartContentBlock::new(poll.text.clone(), answers);
            block.kind = PollKind::Disclosed;
            block.max_selections =
                u64::try_from(poll.max_selections).ok().and_then(UInt::new).unwrap_or(UInt::MIN);
            let mut start = NewUnstablePollStartEventContent::plain_text(poll.text.clone(), block);
            start.relates_to = None;
            let content = UnstablePollStartEventContent::New(start);
            // The message is posted: a poll the homeserver does not take (it went away between
            // the two) leaves its question to be answered in the thread, not the ask unposted.
            match self.room.send(content).await {
                Ok(sent) => posted_polls.push(Some(sent.response.event_id.to_string())),
                Err(error) => {
                    log(&format!(
                        "cannot post the poll of question {} of {} ({error}); it is answered in \
                         the thread",
                        poll.question + 1,
                        listed.title
                    ));
                    posted_polls.push(None);
                }
            }
        }
        Ok(Posted {
            event_id: message.to_string(),
            title: listed.title.clone(),
            polls: posted_polls,
            finished: false,
            how: None,
        })
    }

    /// Edits the ask's message to say how it ended, and ends its polls.
    async fn finish(&mut self, key: &str, how: &str) {
        let Some(posted) = self.posted.get_mut(key) else { return };
        if posted.finished {
            return;
        }
        posted.finished = true;
        posted.how = Some(how.to_owned());
        let posted = posted.clone();
        self.save();
        let Ok(message) = OwnedEventId::try_from(posted.event_id.as_str()) else { return };
        // The title is the agent's text: made safe as the posted message's (no `@room` pings).
        let title = chat::field(&posted.title);
        let plain = format!("{title} — {how}");
        let html = format!("<p><b>{}</b> — {}</p>", chat::html(&title), chat::html(how));
        let edit = RoomMessageEventContent::text_html(plain, html)
            .add_mentions(Mentions::new())
            .make_replacement(ReplacementMetadata::new(message, None));
        if let Err(error) = self.room.send(edit).await {
            log(&format!("cannot edit the message of {}: {error}", posted.title));
        }
        for poll in posted.polls.iter().flatten() {
            let Ok(poll) = OwnedEventId::try_from(poll.as_str()) else { continue };
            let end = UnstablePollEndEventContent::new(format!("The poll has ended: {how}"), poll);
            if let Err(error) = self.room.send(end).await {
                log(&format!("cannot end a poll of {}: {error}", posted.title));
            }
        }
    }

    fn save(&self) {
        if let Err(error) = write_json(&self.dir.posted_file(), &self.posted) {
            log(&format!("cannot keep the posted asks: {error:#}"));
        }
    }

    async fn allowed(&self, user: &OwnedUserId) -> bool {
        match &self.answerers {
            Answerers::Users(users) => users.iter().any(|allowed| allowed == user.as_str()),
            Answerers::PowerLevel(level) => match self.room.get_member(user).await {
                Ok(Some(member)) => match member.power_level() {
                    matrix_sdk::ruma::events::room::power_levels::UserPowerLevel::Infinite => true,
                    matrix_sdk::ruma::events::room::power_levels::UserPowerLevel::Int(power) => {
                        i64::from(power) >= *level
                    }
                    _ => false,
                },
                _ => false,
            },
        }
    }

    async fn on_room(&mut self, event: FromRoom) {
        match event {
            FromRoom::Left { user } => {
                if !self.allowed(&user).await {
                    return;
                }
                // Nothing is answered for them: their asks wait in the inbox, and the people
                // still in the room (who may not answer) and the log say where to answer.
                let said = format!(
                    "{user} left the room. Nothing was answered for them: the asks open here \
                     ({}) stay open in the inbox; answer them in the window or the page, or \
                     invite someone allowed to answer.",
                    self.open.len()
                );
                log(&said);
                let content =
                    RoomMessageEventContent::notice_plain(said).add_mentions(Mentions::new());
                if let Err(error) = self.room.send(content).await {
                    log(&format!("cannot say it in the room: {error}"));
                }
            }
            FromRoom::Reply { sender, event_id, root, body } => {
                let Some((key, _)) = self.by_event.get(&root).cloned() else { return };
                let Some(thread_root) = self.thread_root(&key) else { return };
                if !self.allowed(&sender).await {
                    self.say(
                        &thread_root,
                        &event_id,
                        &format!("{sender} may not answer here: nothing was sent."),
                    )
                    .await;
                    return;
                }
                let Some(open) = self.open.get(&key) else {
                    let why = match (self.started, self.posted.get(&key).and_then(|posted| posted.how.as_deref())) {
                        (None, _) => "The inbox cannot be reached, so nothing was sent: answer again once it is back.".to_owned(),
                        (Some(_), Some(how)) => format!("Not sent: this ask has already ended. {how}"),
                        (Some(_), None) => "Not sent: this ask has already ended.".to_owned(),
                    };
                    self.say(&thread_root, &event_id, &why).await;
                    return;
                };
                let names: Vec<&str> = self.bot_names.iter().map(String::as_str).collect();
                match chat::parse_reply(&open.content, &body, &names) {
                    Ok(reply) => self.send(&key, &sender, reply, &thread_root, &event_id).await,
                    Err(why) => {
                        self.say(&thread_root, &event_id, &format!("Not sent: {why}.")).await
                    }
                }
            }
            FromRoom::Vote { sender, poll, answers } => {
                let Some((key, Some(question))) = self.by_event.get(&poll).cloned() else { return };
                let Some(thread_root) = self.thread_root(&key) else { return };
                if !self.allowed(&sender).await {
                    self.say(
                        &thread_root,
                        &poll,
                        &format!("{sender} may not answer here: the vote changes nothing."),
                    )
                    .await;
                    return;
                }
                let Some(open) = self.open.get_mut(&key) else {
                    // Another vote (or reply) answered it first, or it ended elsewhere: the
                    // voter hears so, and by whom, as a late thread reply does.
                    let how = self.posted.get(&key).and_then(|posted| posted.how.clone());
                    let why = match (self.started, how) {
                        (None, _) => "The inbox cannot be reached, so the vote was not sent: vote again once it is back.".to_owned(),
                        (Some(_), Some(how)) => format!("Not sent: this ask has already ended. {how}"),
                        (Some(_), None) => "Not sent: this ask has already ended.".to_owned(),
                    };
                    self.say(&thread_root, &poll, &why).await;
                    return;
                };
                if let Some((voter, counted)) = open.votes.get(&question) {
                    if answers.is_empty() && *voter == sender {
                        // Its voter took the vote back: the question waits for a vote again.
                        open.votes.remove(&question);
                        return;
                    }
                    let reply = Reply::Answer { answers: counted.clone(), notes: Map::new() };
                    let first = describe(&open.content, &reply);
                    let why = match *voter == sender {
                        true => format!(
                            "Not counted: your first vote stands ({first}); a vote cannot be changed once counted."
                        ),
                        false => format!("Not counted: {voter} voted first ({first})."),
                    };
                    self.say(&thread_root, &poll, &why).await;
                    return;
                }
                if answers.is_empty() {
                    return;
                }
                let chosen: Vec<&str> = answers.iter().map(String::as_str).collect();
                match chat::poll_reply(&open.content, question, &chosen) {
                    Ok(Reply::Answer { answers, .. }) => {
                        open.votes.insert(question, (sender.clone(), answers));
                    }
                    Ok(_) => return,
                    Err(why) => {
                        self.say(&thread_root, &poll, &format!("Not sent: {why}.")).await;
                        return;
                    }
                }
                if open.polled.iter().all(|question| open.votes.contains_key(question)) {
                    let answers: Map<String, Value> =
                        open.votes.values().flat_map(|(_, answers)| answers.clone()).collect();
                    let reply = Reply::Answer { answers, notes: Map::new() };
                    self.send(&key, &sender, reply, &thread_root, &poll).await;
                }
            }
        }
    }

    fn thread_root(&self, key: &str) -> Option<OwnedEventId> {
        self.posted
            .get(key)
            .and_then(|posted| OwnedEventId::try_from(posted.event_id.as_str()).ok())
    }

    /// Sends `verb` to the inbox for `sender`, and tells the thread what happened.
    async fn send(
        &mut self,
        key: &str,
        sender: &OwnedUserId,
        reply: Reply,
        root: &OwnedEventId,
        reply_to: &OwnedEventId,
    ) {
        let Some(open) = self.open.get(key) else { return };
        let (connection, id) = (open.listed.connection, open.listed.id.clone());
        let answered_by = sender.to_string();
        let said = describe(&open.content, &reply);
        let agent = agent_name(&open.listed);
        let message = reply.message(connection, id.clone(), answered_by);
        match self.inbox.decide(connection, &id, message).await {
            Ok(Ok(())) => {
                self.open.remove(key);
                self.say(root, reply_to, &format!("Sent to {agent}: {said}")).await;
                self.finish(key, &format!("Answered by {sender}: {said}")).await;
            }
            Ok(Err(reason)) => {
                self.say(root, reply_to, &format!("Not sent: {reason}.")).await;
            }
            Err(Unreachable) => {
                if let Some(open) = self.open.get_mut(key) {
                    open.votes.clear();
                }
                let why = "The inbox could not be reached, so nothing was sent: answer again once it is back.";
                self.say(root, reply_to, why).await;
            }
        }
    }

    /// A notice in the ask's thread, in reply to `reply_to`.
    async fn say(&self, root: &OwnedEventId, reply_to: &OwnedEventId, text: &str) {
        let mut content = RoomMessageEventContent::notice_plain(text).add_mentions(Mentions::new());
        content.relates_to = Some(Relation::Thread(Thread::plain(root.clone(), reply_to.clone())));
        if let Err(error) = self.room.send(content).await {
            log(&format!("cannot reply in the room: {error}"));
        }
    }
}

/// How an ask that ended elsewhere is told in its message: what happened and, when a person
/// settled it, who and where (`settled`'s `answered_by`: `window`, `page` or `socket:<label>`).
fn ended_elsewhere(outcome: &str, answered_by: Option<&str>) -> String {
    let by = match answered_by {
        Some("window") => " in the window".to_owned(),
        Some("page") => " in the browser page".to_owned(),
        Some(other) => match other.strip_prefix("socket:") {
            Some(label) => format!(" by {label}"),
            None => format!(" by {other}"),
        },
        None => " outside this room".to_owned(),
    };
    match outcome {
        "answered" | "allowed_once" | "allowed_always" | "allowed" => format!("Answered{by}."),
        "declined" | "denied" => format!("Declined{by}."),
        "clarify" => format!("Sent back to talk it over (\"Chat about this\"){by}."),
        "withdrawn" => "Withdrawn by the agent.".to_owned(),
        "timed_out" => "Timed out.".to_owned(),
        other => format!("Ended ({other})."),
    }
}

/// What was sent, as the confirmation says it (`Layout = Tabs`).
fn describe(content: &AskContent, reply: &Reply) -> String {
    let plan = matches!(content, AskContent::Approval { plan: Some(_), .. });
    match reply {
        Reply::Decline { message } if message.is_empty() => "declined".to_owned(),
        Reply::Decline { message } => format!("declined: {message}"),
        Reply::Clarify => "chat about this".to_owned(),
        Reply::Decide { decision: FrontEndDecision::Allow, .. } if plan => {
            "plan approved".to_owned()
        }
        Reply::Decide { decision: FrontEndDecision::Allow, .. } => "allowed".to_owned(),
        Reply::Decide { decision: FrontEndDecision::AllowAlways, .. } => {
            "always allowed".to_owned()
        }
        Reply::Decide { decision: FrontEndDecision::Deny, message, .. } if plan => {
            format!("keep planning: {message}")
        }
        Reply::Decide { decision: FrontEndDecision::Deny, message, .. } if message.is_empty() => {
            "denied".to_owned()
        }
        Reply::Decide { decision: FrontEndDecision::Deny, message, .. } => {
            format!("denied: {message}")
        }
        Reply::Answer { answers, notes } => {
            let questions = match content {
                AskContent::Question { questions } => questions.as_array().cloned(),
                AskContent::Approval { .. } => None,
            };
            let mut parts = Vec::new();
            for (index, question) in questions.unwrap_or_default().iter().enumerate() {
                let Some(answer) = answers.get(&index.to_string()).and_then(Value::as_str) else {
                    continue;
                };
                let header = question.get("header").and_then(Value::as_str).unwrap_or_default();
                let options = question.get("options").and_then(Value::as_array);
                let mut labels = Vec::new();
                let mut rest = answer;
                while !rest.is_empty() {
                    if let Some(other) = rest.strip_prefix("other:") {
                        labels.push(chat::field(other));
                        break;
                    }
                    let (part, tail) = rest.split_once(',').unwrap_or((rest, ""));
                    let label = part
                        .parse::<usize>()
                        .ok()
                        .and_then(|number| options?.get(number.checked_sub(1)?))
                        .and_then(|option| option.get("label"))
                        .and_then(Value::as_str)
                        .unwrap_or(part);
                    labels.push(chat::field(label));
                    rest = tail;
                }
                // The agent's header and labels (and a long Other) as the message writes them:
                // one bounded line whose `@` pings no one, in the notice and in the edit.
                let mut line = format!("{} = {}", chat::field(header), labels.join(", "));
                if let Some(note) = notes.get(&index.to_string()).and_then(Value::as_str) {
                    line.push_str(&format!(" (note: {})", chat::field(note)));
                }
                parts.push(line);
            }
            parts.join("; ")
        }
    }
}

/// The agent's name as a person knows it, from `list`'s `agent` (`hook` is Claude Code's hook).
fn agent_name(listed: &Listed) -> String {
    match listed.agent.as_deref() {
        Some("hook" | "claude") => "Claude Code".to_owned(),
        Some("codex") => "Codex".to_owned(),
        Some("opencode") => "OpenCode".to_owned(),
        Some("mcp") => "an MCP client".to_owned(),
        Some("acp") => "an ACP agent".to_owned(),
        Some("ask") => "askpane ask".to_owned(),
        Some(other) => other.to_owned(),
        None => listed.from.clone(),
    }
}

/// Resolves once the inbox that started the bridge (`inbox_pid`) is no longer its parent: killed
/// outright, it could not stop the bridge, which is then another process's child. Never without
/// an inbox pid (a bridge run by hand), or off Unix.
async fn orphaned(inbox_pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(inbox_pid) = inbox_pid {
        let mut every = tokio::time::interval(Duration::from_millis(250));
        loop {
            every.tick().await;
            if std::os::unix::process::parent_id() != inbox_pid {
                return;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = inbox_pid;
    std::future::pending::<()>().await
}

#[cfg(unix)]
fn terminate_signal() -> Result<tokio::signal::unix::Signal> {
    Ok(tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?)
}

/// Off Unix only Ctrl+C ends the bridge: a receiver that never fires.
#[cfg(not(unix))]
fn terminate_signal() -> Result<mpsc::UnboundedReceiver<()>> {
    let (keep, receiver) = mpsc::unbounded_channel();
    std::mem::forget(keep);
    Ok(receiver)
}

/// One line on stderr, as askpane's own (`askpane-matrix: …`).
pub fn log(line: &str) {
    #[expect(clippy::print_stderr, reason = "the bridge's log is its stderr")]
    {
        eprintln!("askpane-matrix: {line}");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_ask_settled_elsewhere_says_who_and_where() {
        assert_eq!(ended_elsewhere("answered", Some("window")), "Answered in the window.");
        assert_eq!(ended_elsewhere("declined", Some("page")), "Declined in the browser page.");
        assert_eq!(
            ended_elsewhere("allowed_once", Some("socket:@bob:x.org")),
            "Answered by @bob:x.org."
        );
        assert_eq!(ended_elsewhere("withdrawn", None), "Withdrawn by the agent.");
        assert_eq!(ended_elsewhere("timed_out", None), "Timed out.");
        assert_eq!(ended_elsewhere("answered", None), "Answered outside this room.");
    }

    #[test]
    fn the_confirmation_names_the_options_sent() {
        let content = AskContent::Question {
            questions: json!([{"question": "Which?", "header": "Layout", "multiSelect": true,
                "options": [{"label": "Tabs", "description": ""}, {"label": "Split", "description": ""}]}]),
        };
        let mut answers = Map::new();
        answers.insert("0".into(), json!("1,2"));
        let mut notes = Map::new();
        notes.insert("0".into(), json!("why"));
        let reply = Reply::Answer { answers, notes };
        assert_eq!(describe(&content, &reply), "Layout = Tabs, Split (note: why)");
        assert_eq!(describe(&content, &Reply::Clarify), "chat about this");
    }
}
