//! `askpane-matrix run`: the bridge. Every ask that waits for a person becomes one room message
//! and one poll per question; poll votes and thread replies of the people allowed to answer go
//! back to the inbox as a front end's verbs, and the room hears what was sent or why not. An ask
//! that ends anywhere else has its message edited to say how, and its polls ended.
//!
//! One task owns the state (what was posted, the polls' votes); the inbox's socket thread and
//! the Matrix sync feed it through channels.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use askpane::protocol::inbox::{ClientMessage, InboxMessage, Listed};
use matrix_sdk::config::SyncSettings;
use matrix_sdk::ruma::events::OriginalSyncMessageLikeEvent;
use matrix_sdk::ruma::events::poll::start::PollKind;
use matrix_sdk::ruma::events::poll::unstable_end::UnstablePollEndEventContent;
use matrix_sdk::ruma::events::poll::unstable_response::UnstablePollResponseEventContent;
use matrix_sdk::ruma::events::poll::unstable_start::{
    NewUnstablePollStartEventContent, UnstablePollAnswer, UnstablePollAnswers,
    UnstablePollStartContentBlock, UnstablePollStartEventContent,
};
use matrix_sdk::ruma::events::relation::Thread;
use matrix_sdk::ruma::events::room::message::{
    MessageType, OriginalSyncRoomMessageEvent, Relation, ReplacementMetadata,
    RoomMessageEventContent,
};
use matrix_sdk::ruma::{OwnedEventId, OwnedRoomId, OwnedUserId, UInt};
use matrix_sdk::{Client, Room};
use tokio::sync::mpsc;

use crate::chat::{self, Ask, Verb};
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
}

/// An ask the bridge shows, open in the inbox.
struct Open {
    listed: Listed,
    ask: Ask,
    /// The polls' votes so far, by question: option numbers from 1.
    votes: Vec<Option<Vec<usize>>>,
}

struct Bridge {
    room: Room,
    answerers: Answerers,
    dir: Dir,
    inbox: Inbox,
    posted: PostedMap,
    open: HashMap<String, Open>,
    /// The ask message's and its polls' event ids → ask key (and question index for a poll).
    by_event: HashMap<OwnedEventId, (String, Option<usize>)>,
    /// This run of the inbox, while connected.
    started: Option<u64>,
}

/// Runs until Ctrl+C or SIGTERM.
pub async fn run(dir: Dir) -> Result<()> {
    let config = dir.room()?;
    let client = account::restore(&dir).await?;
    client.sync_once(SyncSettings::default()).await.context("cannot sync with the homeserver")?;
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
        answerers: config.answerers,
        dir,
        inbox: inbox.clone(),
        posted,
        open: HashMap::new(),
        by_event,
        started: None,
    };
    log(&format!("bridging the inbox to {room_id}"));
    let outcome = bridge.serve(from_inbox, from_room).await;
    inbox.stop();
    sync.abort();
    let _ = sync.await;
    drop(to_bridge);
    tokio::task::spawn_blocking(move || inbox_thread.join()).await.ok();
    outcome
}

/// Syncs for ever; a homeserver that is away (restarted, the network down) is tried again.
async fn keep_syncing(client: Client) {
    loop {
        if let Err(error) =
            client.sync(SyncSettings::default().timeout(Duration::from_secs(30))).await
        {
            log(&format!("sync: {error}; trying again"));
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
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
    ) -> Result<()> {
        let mut terminate = terminate_signal()?;
        loop {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => return Ok(()),
                _ = terminate.recv() => return Ok(()),
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
            InboxMessage::Settled { connection, id, outcome, answered_by: _ } => {
                let Some(key) = self.key(connection, &id) else { return };
                self.open.remove(&key);
                self.finish(&key, &ended_elsewhere(&outcome)).await;
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
        let Some(ask) = listed.content.as_deref().and_then(Ask::of) else { return };
        let questions = ask.questions().len();
        if !self.posted.contains_key(&key) {
            match self.post(&listed, &ask).await {
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
                }
                Err(error) => {
                    log(&format!("cannot post {}: {error:#}", listed.title));
                    return;
                }
            }
        }
        if self.posted.get(&key).is_some_and(|posted| posted.finished) {
            return;
        }
        self.open.insert(key, Open { listed, ask, votes: vec![None; questions] });
    }

    async fn post(&self, listed: &Listed, ask: &Ask) -> Result<Posted> {
        let rendered = chat::render(listed, ask, now());
        let content = RoomMessageEventContent::text_html(rendered.plain, rendered.html);
        let message = self.room.send(content).await.context("the message")?.response.event_id;
        let count = ask.questions().len();
        let mut polls = Vec::new();
        for (index, question) in ask.questions().iter().enumerate() {
            let answers: Vec<UnstablePollAnswer> = question
                .options
                .iter()
                .enumerate()
                .map(|(number, option)| {
                    UnstablePollAnswer::new(
                        (number + 1).to_string(),
                        format!("{}. {}", number + 1, option.label),
                    )
                })
                .collect();
            let Ok(answers) = UnstablePollAnswers::try_from(answers) else {
                polls.push(None);
                continue;
            };
            let text = chat::poll_question(question, index, count);
            let mut block = UnstablePollStartContentBlock::new(text.clone(), answers);
            block.kind = PollKind::Disclosed;
            if question.multi_select {
                block.max_selections = u64::try_from(question.options.len())
                    .ok()
                    .and_then(UInt::new)
                    .unwrap_or(UInt::MIN);
            }
            let mut start = NewUnstablePollStartEventContent::plain_text(text, block);
            start.relates_to = None;
            let content = UnstablePollStartEventContent::New(start);
            let poll = self.room.send(content).await.context("a poll")?.response.event_id;
            polls.push(Some(poll.to_string()));
        }
        Ok(Posted {
            event_id: message.to_string(),
            title: listed.title.clone(),
            polls,
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
        let plain = format!("{} — {how}", posted.title);
        let html = format!("<p><b>{}</b> — {}</p>", chat::escape(&posted.title), chat::escape(how));
        let edit = RoomMessageEventContent::text_html(plain, html)
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
                match chat::parse_reply(&open.ask, &body, &open.votes) {
                    Ok(verb) => self.send(&key, &sender, verb, &thread_root, &event_id).await,
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
                    if self.started.is_none() {
                        let why = "The inbox cannot be reached, so the vote was not sent: vote again once it is back.";
                        self.say(&thread_root, &poll, why).await;
                    }
                    return;
                };
                let choices: Vec<usize> =
                    answers.iter().filter_map(|answer| answer.parse().ok()).collect();
                if let Some(slot) = open.votes.get_mut(question) {
                    *slot = (!choices.is_empty()).then_some(choices);
                }
                if open.votes.iter().all(Option::is_some) {
                    let mut picked = serde_json::Map::new();
                    for (index, vote) in open.votes.iter().enumerate() {
                        let text: Vec<String> =
                            vote.iter().flatten().map(usize::to_string).collect();
                        picked.insert(index.to_string(), serde_json::Value::String(text.join(",")));
                    }
                    let verb = Verb::Answer { answers: picked, notes: serde_json::Map::new() };
                    self.send(&key, &sender, verb, &thread_root, &poll).await;
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
        verb: Verb,
        root: &OwnedEventId,
        reply_to: &OwnedEventId,
    ) {
        let Some(open) = self.open.get(key) else { return };
        let (connection, id) = (open.listed.connection, open.listed.id.clone());
        let answered_by = sender.to_string();
        let said = chat::describe(&open.ask, &verb);
        let agent = chat::agent_name(&open.listed);
        let message = match verb {
            Verb::Answer { answers, notes } => ClientMessage::Answer {
                connection,
                id: id.clone(),
                answers,
                notes,
                response: None,
                answered_by,
            },
            Verb::Decline { message } => {
                ClientMessage::Decline { connection, id: id.clone(), message, answered_by }
            }
            Verb::Decide { decision, suggestion, message } => ClientMessage::Decide {
                connection,
                id: id.clone(),
                decision,
                suggestion,
                message,
                answered_by,
            },
        };
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
                    open.votes.iter_mut().for_each(|vote| *vote = None);
                }
                let why = "The inbox could not be reached, so nothing was sent: answer again once it is back.";
                self.say(root, reply_to, why).await;
            }
        }
    }

    /// A notice in the ask's thread, in reply to `reply_to`.
    async fn say(&self, root: &OwnedEventId, reply_to: &OwnedEventId, text: &str) {
        let mut content = RoomMessageEventContent::notice_plain(text);
        content.relates_to = Some(Relation::Thread(Thread::plain(root.clone(), reply_to.clone())));
        if let Err(error) = self.room.send(content).await {
            log(&format!("cannot reply in the room: {error}"));
        }
    }
}

/// How an ask that ended elsewhere is told in its message.
fn ended_elsewhere(outcome: &str) -> String {
    match outcome {
        "answered" | "allowed_once" | "allowed_always" | "allowed" => {
            "Answered outside this room (the window, the page or another front end).".to_owned()
        }
        "declined" | "denied" => "Declined outside this room.".to_owned(),
        "withdrawn" => "Withdrawn by the agent.".to_owned(),
        "timed_out" => "Timed out.".to_owned(),
        other => format!("Ended ({other})."),
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs())
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
