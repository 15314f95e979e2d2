//! Issue 31, who may answer: the room as it is now decides. A member whose power level is
//! lowered below the room's `--power-level` is refused from their next answer on and changes
//! nothing (the ask waits for someone else); one raised to it answers; an invited answerer who
//! left and came back answers again, the ask that waited for them included.

use serde_json::{Value, json};

use super::end_to_end::window_reply;
use super::peer::{Bridged, Peer, answer_at_the_desk};
use crate::inbox::Client;
use crate::support::run_bounded;

/// A PreToolUse hook input for AskUserQuestion with one two-option question whose header is
/// `header` (each round of a test has its own, so its messages and confirmations are its own).
fn hook_input(tool_use_id: &str, header: &str) -> String {
    let questions = json!([{"question": format!("Which layout for {header}?"), "header": header,
        "multiSelect": false, "options": [{"label": "Tabs", "description": "one pane"},
                                          {"label": "Split", "description": "two panes"}]}]);
    super::end_to_end::hook_input(tool_use_id, questions)
}

/// alice's room (she created it, so she is its admin at power level 100), the bot and bob
/// invited; the bridge takes it with `room use --power-level 50`, so bob (at 0) may not answer
/// until alice raises him. `None` without Synapse.
fn power_room(name: &str) -> Option<(Bridged, Peer, String)> {
    let mut bridged = Bridged::logged_in(name)?;
    let bob_account = bridged.homeserver.register("bob", "bob-password", false);
    let mut bob = Peer::start(&bridged.homeserver, &bob_account);
    let server = bridged.alice_account.user_id.split_once(':').expect("@alice:server").1;
    let bot = format!("@askpane:{server}");
    let room = bridged
        .alice
        .call(json!({"do": "create_room", "invite": [bot, bob_account.user_id]}))["room"]
        .as_str()
        .expect("a room")
        .to_owned();
    let used =
        run_bounded(&mut bridged.command(&["room", "use", &room, "--power-level", "50"]).0, None);
    assert!(used.status.success(), "room use: {}", used.stderr);
    bob.call(json!({"do": "join", "room": room}));
    bridged.room = room;
    bridged.run_bridge();
    Some((bridged, bob, bob_account.user_id))
}

/// Sets `user`'s power level in the room, sent by alice (the room's admin).
fn set_power_level(bridged: &mut Bridged, user: &str, level: i64) {
    let room = bridged.room.clone();
    bridged.alice.call(json!({"do": "power_level", "room": room, "user": user, "level": level}));
}

/// The ask's message and its poll, once `peer` sees both.
fn ask_in_room(peer: &mut Peer, room: &str, header: &str) -> (Value, Value) {
    let text = format!("Which layout for {header}?");
    let message = peer.wait_message(room, &text);
    let poll =
        peer.call(json!({"do": "wait_poll", "room": room, "contains": text}))["event"].clone();
    (message, poll)
}

/// `peer` votes for option `option` in `poll`.
fn vote(peer: &mut Peer, room: &str, poll: &Value, option: &str) {
    peer.call(json!({"do": "vote", "room": room, "poll": poll["event_id"], "answers": [option]}));
}

/// The hook's reply, which must be what the window sends for `answers`.
fn hook_reads_the_window_s(bridged: &Bridged, hook: Client, input: &str, answers: &Value) {
    let (code, stdout, stderr) = hook.finish();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, window_reply(&bridged.world, input, answers));
}

/// (a) bob at 50 answers and it counts; alice lowers him to 0 (once the next ask is in the
/// room) and his vote and thread reply on it are refused and change nothing: the hook waits
/// until the socket answers, and reads exactly that answer. (b) Raised back from 0 to 50 (the
/// third ask already posted), bob answers it.
#[test]
fn a_member_lowered_below_the_power_level_is_refused_and_one_raised_to_it_answers() {
    let Some((mut bridged, mut bob, bob_id)) = power_room("matrix-power") else { return };
    let room = bridged.room.clone();

    set_power_level(&mut bridged, &bob_id, 50);
    let input = hook_input("toolu_power_50", "First");
    let hook = bridged.world.client(&["hook"], &input);
    let (_, poll) = ask_in_room(&mut bob, &room, "First");
    vote(&mut bob, &room, &poll, "2");
    hook_reads_the_window_s(&bridged, hook, &input, &json!({"First": "Split"}));
    bob.wait_message(&room, "Sent to Claude Code: First = Split");

    // Lowered while the new ask is already in the room, just before bob votes on it: the
    // bridge must read the room as it is when the vote arrives, not as it was at the post.
    let input = hook_input("toolu_power_0", "Second");
    let mut hook = bridged.world.client(&["hook"], &input);
    let (message, poll) = ask_in_room(&mut bob, &room, "Second");
    set_power_level(&mut bridged, &bob_id, 0);
    vote(&mut bob, &room, &poll, "2");
    bob.wait_message(&room, &format!("{bob_id} may not answer here: the vote changes nothing."));
    bob.call(json!({"do": "reply_in_thread", "room": room, "event": message["event_id"],
                    "text": "2"}));
    bob.wait_message(&room, &format!("{bob_id} may not answer here: nothing was sent."));
    let mut front = bridged.world.connect();
    let asks = front.list();
    assert_eq!(asks.len(), 1, "the ask still waits: {asks:?}");
    assert!(hook.process.child.try_wait().expect("the hook's status").is_none(), "still waits");
    assert!(answer_at_the_desk(&mut front, asks.first().expect("the ask")));
    hook_reads_the_window_s(&bridged, hook, &input, &json!({"Second": "Tabs"}));
    bob.call(json!({"do": "wait_edit", "room": room, "event": message["event_id"],
                    "contains": "Answered by @desk."}));
    let said = bob.call(json!({"do": "seen"}))["events"].to_string();
    assert!(!said.contains("Sent to Claude Code: Second"), "bob's answer was sent: {said}");

    let input = hook_input("toolu_power_raised", "Third");
    let hook = bridged.world.client(&["hook"], &input);
    let (message, _) = ask_in_room(&mut bob, &room, "Third");
    set_power_level(&mut bridged, &bob_id, 50);
    bob.call(json!({"do": "reply_in_thread", "room": room, "event": message["event_id"],
                    "text": "2"}));
    hook_reads_the_window_s(&bridged, hook, &input, &json!({"Third": "Split"}));
    bob.wait_message(&room, "Sent to Claude Code: Third = Split");
}

/// (c) An invited answerer (`room create --invite`) who leaves the room is still one: bob (a
/// member who may not answer) invites her back, she rejoins, and her vote on the ask that
/// waited for her answers it; the next ask reaches her and her thread reply answers it too.
#[test]
fn an_invited_answerer_who_left_and_rejoined_answers_again() {
    let Some(mut bridged) = Bridged::start("matrix-rejoin") else { return };
    let room = bridged.room.clone();
    let alice_id = bridged.alice_account.user_id.clone();
    let bob_account = bridged.homeserver.register("bob", "bob-password", false);
    let mut bob = Peer::start(&bridged.homeserver, &bob_account);
    bridged.alice.call(json!({"do": "invite", "room": room, "user": bob_account.user_id}));
    bob.call(json!({"do": "join", "room": room}));

    let input = hook_input("toolu_rejoin", "Before");
    let hook = bridged.world.client(&["hook"], &input);
    let (_, poll) = ask_in_room(&mut bridged.alice, &room, "Before");
    bob.wait_message(&room, "Which layout for Before?");
    bridged.alice.call(json!({"do": "leave", "room": room}));
    bridged.wait_log("left the room");
    bob.wait_message(&room, &format!("{alice_id} left the room."));
    bob.call(json!({"do": "invite", "room": room, "user": alice_id}));
    bridged.alice.call(json!({"do": "join", "room": room}));
    vote(&mut bridged.alice, &room, &poll, "1");
    hook_reads_the_window_s(&bridged, hook, &input, &json!({"Before": "Tabs"}));
    bob.wait_message(&room, "Sent to Claude Code: Before = Tabs");

    let input = hook_input("toolu_rejoined", "After");
    let hook = bridged.world.client(&["hook"], &input);
    let (message, _) = ask_in_room(&mut bridged.alice, &room, "After");
    bridged.alice.call(json!({"do": "reply_in_thread", "room": room,
                              "event": message["event_id"], "text": "2"}));
    hook_reads_the_window_s(&bridged, hook, &input, &json!({"After": "Split"}));
    bridged.alice.wait_message(&room, "Sent to Claude Code: After = Split");
}

/// matrix.md, "Unknown devices": the bridge shares the room's keys only with devices their
/// owner cross-signed. A new device of alice's that she never verified (a stolen access token
/// used from a new login) is in the room but cannot read the ask; her signed device reads it and
/// answers.
#[test]
fn a_device_its_owner_never_signed_cannot_read_the_asks() {
    let Some(mut bridged) = Bridged::start("matrix-unsigned") else { return };
    let room = bridged.room.clone();
    // Logged in before the bridge's next start, so the bridge's first sync already lists the
    // device: it is left out by the sharing rule, not for being unknown.
    bridged.stop_bridge();
    let mut unsigned = Peer::start_device(&bridged.homeserver, &bridged.alice_account, false);
    bridged.run_bridge();
    let input = hook_input("toolu_unsigned", "Signed");
    let hook = bridged.world.client(&["hook"], &input);
    let (message, poll) = ask_in_room(&mut bridged.alice, &room, "Signed");
    let undecrypted =
        unsigned.call(json!({"do": "wait_undecrypted", "room": room}))["event"].clone();
    assert_eq!(undecrypted["event_id"], message["event_id"], "{undecrypted}");
    vote(&mut bridged.alice, &room, &poll, "2");
    hook_reads_the_window_s(&bridged, hook, &input, &json!({"Signed": "Split"}));
    bridged.alice.wait_message(&room, "Sent to Claude Code: Signed = Split");
    let seen = unsigned.call(json!({"do": "seen"}))["events"].to_string();
    assert!(!seen.contains("Which layout for Signed"), "the unsigned device read the ask: {seen}");
}
