//! The test Synapse (tests/support/synapse.rs) proven, nothing more: it starts, two users
//! registered by shared secret talk in a room over the plain client API (and an encrypted room
//! is made), forged registrations and open registration are refused, a restart (and a restart
//! after SIGKILL) keeps the accounts, tokens and room, and two homeservers at once keep apart.
//! Skipped when
//! `scripts/synapse` has not installed Synapse (a failure under `CI=true`).

use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::scratch_dir;
use crate::support::synapse::{Homeserver, Missing, hmac_sha1, missing_reason};

fn whoami(server: &Homeserver, token: &str) -> (u16, Value) {
    server.get("/_matrix/client/v3/account/whoami", Some(token))
}

#[test]
fn two_users_talk_in_a_room_over_the_client_api() {
    let Some(server) = Homeserver::start() else { return };
    eprintln!("synapse: started in {:?} ({:?} of CPU)", server.started_in(), server.start_cpu());
    let alice = server.register("alice", "alice's password", true);
    let bob = server.register("bob", "bob's password", false);
    assert_eq!(alice.user_id, "@alice:localhost");
    assert_eq!(bob.user_id, "@bob:localhost");

    assert_eq!((alice.user.as_str(), bob.user.as_str()), ("alice", "bob"));
    assert_ne!(alice.device_id, bob.device_id);

    // Alice on a device of her own, by password, as a bridge logs in.
    let token = server.login(&alice.user, &alice.password);
    assert_ne!(token, alice.access_token, "a login is a new device");
    let room = server.create_room(&token, &[&bob.user_id], false);
    server.send_text(&token, &room, "t1", "Layout? 1. Tabs 2. Split");

    // Bob was invited: he joins and reads what Alice said.
    server.join(&bob.access_token, &room);
    assert_eq!(
        server.texts(&bob.access_token, &room),
        [(alice.user_id.clone(), "Layout? 1. Tabs 2. Split".to_owned())]
    );
    server.send_text(&bob.access_token, &room, "t1", "1");
    assert_eq!(server.texts(&token, &room).len(), 2);

    // An encrypted room, as the bridge wants: its state says Megolm.
    let secret = server.create_room(&token, &[&bob.user_id], true);
    let path = format!("/_matrix/client/v3/rooms/{secret}/state/m.room.encryption/");
    let (status, encryption) = server.get(&path, Some(&token));
    assert_eq!((status, &encryption["algorithm"]), (200, &json!("m.megolm.v1.aes-sha2")));
    let path = format!("/_matrix/client/v3/rooms/{room}/state/m.room.encryption/");
    assert_eq!(server.get(&path, Some(&token)).0, 404, "the first room is not encrypted");

    // A wrong password and a made-up token are refused.
    let wrong = json!({
        "type": "m.login.password",
        "identifier": {"type": "m.id.user", "user": "alice"},
        "password": "guess",
    });
    let (status, refused) = server.post("/_matrix/client/v3/login", None, &wrong);
    assert_eq!((status, &refused["errcode"]), (403, &json!("M_FORBIDDEN")));
    let (status, refused) = whoami(&server, "syt_made_up");
    assert_eq!((status, &refused["errcode"]), (401, &json!("M_UNKNOWN_TOKEN")));

    // A registration not signed with this homeserver's secret is refused.
    let (_, nonce) = server.get("/_synapse/admin/v1/register", None);
    let forged = json!({
        "nonce": nonce["nonce"], "username": "mallory", "password": "p", "admin": true,
        "mac": "0000000000000000000000000000000000000000",
    });
    let (status, refused) = server.post("/_synapse/admin/v1/register", None, &forged);
    assert_eq!((status, &refused["error"]), (403, &json!("HMAC incorrect")), "{refused}");

    // Open registration is off: only the shared secret makes accounts.
    let open = json!({"username": "mallory", "password": "p", "auth": {"type": "m.login.dummy"}});
    let (status, refused) = server.post("/_matrix/client/v3/register", None, &open);
    assert_eq!((status, &refused["errcode"]), (403, &json!("M_FORBIDDEN")), "{refused}");

    eprintln!("synapse: round trip (whoami, median of 20) {:?}", server.round_trip(&token, 20));
}

#[test]
fn a_restarted_synapse_keeps_accounts_tokens_and_rooms() {
    let Some(mut server) = Homeserver::start() else { return };
    let url = server.url();
    let alice = server.register("alice", "alice's password", false);
    let room = server.create_room(&alice.access_token, &[], false);
    server.send_text(&alice.access_token, &room, "t1", "before the restart");

    server.stop();
    let down = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(2)))
        .build()
        .new_agent()
        .get(format!("{url}/_matrix/client/versions"))
        .call();
    assert!(down.is_err(), "a stopped Synapse still answers");

    server.restart();
    eprintln!("synapse: restarted in {:?}", server.started_in());
    assert_eq!(server.url(), url, "a restart keeps the port");
    let (status, me) = whoami(&server, &alice.access_token);
    assert_eq!((status, &me["user_id"]), (200, &json!(alice.user_id)), "the old token: {me}");
    let token = server.login("alice", "alice's password");
    let (status, rooms) = server.get("/_matrix/client/v3/joined_rooms", Some(&token));
    assert_eq!((status, &rooms["joined_rooms"]), (200, &json!([room])));
    server.send_text(&token, &room, "t2", "after the restart");
    let said: Vec<String> = server.texts(&token, &room).into_iter().map(|(_, text)| text).collect();
    assert_eq!(said, ["before the restart", "after the restart"]);
}

#[test]
fn a_killed_synapse_restarts_with_what_it_had_committed() {
    let Some(mut server) = Homeserver::start() else { return };
    let alice = server.register("alice", "alice's password", false);
    let room = server.create_room(&alice.access_token, &[], false);
    server.send_text(&alice.access_token, &room, "t1", "sent before the crash");

    server.kill();
    server.restart();
    let said: Vec<String> =
        server.texts(&alice.access_token, &room).into_iter().map(|(_, text)| text).collect();
    assert_eq!(said, ["sent before the crash"]);
    // The transaction id is remembered per device: the same one again is the same event.
    let first = server.send_text(&alice.access_token, &room, "t2", "once");
    let again = server.send_text(&alice.access_token, &room, "t2", "once");
    assert_eq!(first, again);
}

#[test]
fn two_synapses_at_once_keep_apart() {
    // Started at the same moment: ports, directories and the template database must not clash.
    let starting: Vec<_> = (0..2).map(|_| thread::spawn(Homeserver::start)).collect();
    let servers: Vec<Homeserver> =
        starting.into_iter().filter_map(|start| start.join().expect("a start")).collect();
    let [first, second] = servers.as_slice() else { return };
    assert_ne!(first.port(), second.port());
    assert_ne!(first.dir(), second.dir());

    // The same name on both: two accounts, each known only to its own homeserver.
    let on_first = first.register("alice", "one", false);
    let on_second = second.register("alice", "two", false);
    assert_eq!(whoami(first, &on_first.access_token).0, 200);
    assert_eq!(whoami(second, &on_second.access_token).0, 200);
    let (status, refused) = whoami(second, &on_first.access_token);
    assert_eq!((status, &refused["errcode"]), (401, &json!("M_UNKNOWN_TOKEN")));
    let wrong = json!({
        "type": "m.login.password",
        "identifier": {"type": "m.id.user", "user": "alice"},
        "password": "one",
    });
    assert_eq!(second.post("/_matrix/client/v3/login", None, &wrong).0, 403);
}

#[test]
fn a_missing_synapse_skips_but_fails_under_ci() {
    let empty = scratch_dir("no-synapse");
    assert!(matches!(missing_reason(&empty, None), Err(Missing::Skip(_))));
    assert!(matches!(missing_reason(&empty, Some("false")), Err(Missing::Skip(_))));
    match missing_reason(&empty, Some("true")) {
        Err(Missing::Fail(message)) => {
            assert!(message.contains("run scripts/synapse"), "{message}")
        }
        other => panic!("under CI a missing Synapse must fail: {other:?}"),
    }
    // A venv whose install was cut off (no `.complete`) is not taken.
    std::fs::create_dir_all(empty.join("bin")).unwrap();
    std::fs::write(empty.join("bin/python"), "").unwrap();
    assert!(matches!(missing_reason(&empty, None), Err(Missing::Skip(_))));
    std::fs::write(empty.join(".complete"), "").unwrap();
    assert_eq!(missing_reason(&empty, Some("true")), Ok(empty.join("bin/python")));
}

#[test]
fn hmac_sha1_is_rfc_2202s() {
    // RFC 2202's test cases 1 and 6 (a key longer than a block is hashed first).
    let hex = |bytes: [u8; 20]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    assert_eq!(
        hex(hmac_sha1(&[0x0b; 20], b"Hi There")),
        "b617318655057264e28bc0b6fb378c8ef146be00"
    );
    assert_eq!(
        hex(hmac_sha1(&[0xaa; 80], b"Test Using Larger Than Block-Size Key - Hash Key First")),
        "aa4ae5e15272d00e95705637ce8a3b55ed402112"
    );
}
