//! The browser's side of `--ui web`: one WebSocket to askpane's bridge. `user_question` messages
//! become [`Request`]s for the app; each outcome goes back as `question_answer` or
//! `question_declined`, rendered by the same envelope code as every other reply.
//!
//! wasm has no threads: the socket's callbacks only queue what arrives and wake the UI, and
//! [`BridgeClient::pump`] (called at the start of every frame) does the work. A dropped
//! connection is retried; the bridge then sends every open question again, and questions
//! already shown here are not shown twice.

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::rc::Rc;

use crossbeam_channel::Receiver;
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

use crate::protocol::{Envelope, Outcome, parse_message};

use super::{Inbound, Provenance, Request, UiSender, Waker};

/// How long to wait before connecting again after the bridge went away, in milliseconds.
const RETRY_MS: f64 = 2000.0;

/// What the socket's callbacks hand to [`BridgeClient::pump`].
#[derive(Default)]
struct Mailbox {
    messages: VecDeque<String>,
    opened: bool,
    closed: bool,
    /// The bridge closed normally: askpane is done, there is nothing to reconnect to.
    finished: bool,
}

/// A connection to the bridge, for the app's frame hook.
pub struct BridgeClient {
    url: String,
    to_ui: UiSender,
    waker: Waker,
    socket: Option<web_sys::WebSocket>,
    mailbox: Rc<RefCell<Mailbox>>,
    /// Questions shown here, by tool_use_id: a resend after a reconnect is not shown twice.
    shown: HashSet<String>,
    awaited: Vec<(String, Envelope, Receiver<Outcome>)>,
    /// When to try again (performance.now() milliseconds), after the socket closed.
    retry_at: Option<f64>,
    told_disconnected: bool,
    finished: bool,
}

impl BridgeClient {
    /// `ws_url` is `ws://host:port/ws?token=…`.
    pub fn new(ws_url: String, to_ui: UiSender, waker: Waker) -> Self {
        let mut client = BridgeClient {
            url: ws_url,
            to_ui,
            waker,
            socket: None,
            mailbox: Rc::new(RefCell::new(Mailbox::default())),
            shown: HashSet::new(),
            awaited: Vec::new(),
            retry_at: None,
            told_disconnected: false,
            finished: false,
        };
        client.connect();
        client
    }

    fn connect(&mut self) {
        self.mailbox = Rc::new(RefCell::new(Mailbox::default()));
        let Ok(socket) = web_sys::WebSocket::new(&self.url) else {
            self.mailbox.borrow_mut().closed = true;
            return;
        };
        let (mailbox, waker) = (Rc::clone(&self.mailbox), self.waker.clone());
        let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
            move |event: web_sys::MessageEvent| {
                if let Some(text) = event.data().as_string() {
                    mailbox.borrow_mut().messages.push_back(text);
                    waker.wake();
                }
            },
        );
        socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        let (mailbox, waker) = (Rc::clone(&self.mailbox), self.waker.clone());
        let on_open = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
            mailbox.borrow_mut().opened = true;
            waker.wake();
        });
        socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        on_open.forget();
        let (mailbox, waker) = (Rc::clone(&self.mailbox), self.waker.clone());
        let on_close =
            Closure::<dyn FnMut(web_sys::CloseEvent)>::new(move |event: web_sys::CloseEvent| {
                let mut mailbox = mailbox.borrow_mut();
                mailbox.closed = true;
                // 1000 (normal closure) is the bridge saying it is done, not a lost connection.
                mailbox.finished = event.code() == 1000;
                waker.wake();
            });
        socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        on_close.forget();
        self.socket = Some(socket);
    }

    /// Does what arrived, sends what was decided, and reconnects when it is time.
    pub fn pump(&mut self, now_ms: f64) {
        let (messages, opened, closed, finished) = {
            let mut mailbox = self.mailbox.borrow_mut();
            let opened = std::mem::take(&mut mailbox.opened);
            (std::mem::take(&mut mailbox.messages), opened, mailbox.closed, mailbox.finished)
        };
        if opened {
            self.told_disconnected = false;
        }
        for text in messages {
            self.receive(&text);
        }
        self.send_decided();
        if finished && !self.finished {
            self.finished = true;
            self.socket = None;
            self.to_ui.send(Inbound::Notice(
                "askpane has finished with this page; you can close it.".to_owned(),
            ));
        }
        if closed && !self.finished {
            self.socket = None;
            if !self.told_disconnected {
                self.told_disconnected = true;
                self.to_ui.send(Inbound::Notice(
                    "The connection to askpane was lost; trying again. Your answers are kept."
                        .to_owned(),
                ));
            }
            match self.retry_at {
                None => self.retry_at = Some(now_ms + RETRY_MS),
                Some(at) if now_ms >= at => {
                    self.retry_at = None;
                    self.connect();
                }
                Some(_) => {}
            }
        }
    }

    /// True while a reconnect is pending (the app should wake again soon).
    pub fn waiting_to_retry(&self) -> bool {
        self.retry_at.is_some()
    }

    fn receive(&mut self, text: &str) {
        let Ok(value) = serde_json::from_str::<Value>(text) else { return };
        match value.get("type").and_then(Value::as_str) {
            Some("user_question") => {
                let Ok(incoming) = parse_message(&value) else { return };
                let Some(id) = incoming.envelope.tool_use_id().map(str::to_owned) else { return };
                if !self.shown.insert(id.clone()) {
                    return;
                }
                let source = value.get("source").and_then(Value::as_str).map(str::to_owned);
                let envelope = incoming.envelope.clone();
                match Request::new(incoming, Provenance::new("askpane", source)) {
                    Ok((mut request, outcome)) => {
                        let field = |name| value.get(name);
                        request.timeout = field("timeout_secs")
                            .and_then(Value::as_u64)
                            .map(std::time::Duration::from_secs);
                        request.mark_skipped =
                            field("mark_skipped").and_then(Value::as_bool).unwrap_or(false);
                        if let Some(Value::Object(selected)) = field("selected") {
                            let drafts = crate::protocol::web::drafts_from_numbers(
                                &request.ask,
                                selected,
                                None,
                            );
                            request.drafts = drafts.unwrap_or_default();
                        }
                        self.awaited.push((id, envelope, outcome));
                        self.to_ui.send(Inbound::Ask(Box::new(request)));
                    }
                    Err(invalid) => {
                        self.to_ui.send(Inbound::Notice(format!(
                            "askpane sent questions this page cannot show: {invalid}"
                        )));
                    }
                }
            }
            Some("question_withdrawn") => {
                let Some(id) = value.get("tool_use_id").and_then(Value::as_str) else { return };
                let tool_use_id = id.to_owned();
                // How it ended elsewhere: answered in another tab, or withdrawn by the agent.
                let how = match value.get("reason").and_then(Value::as_str) {
                    Some("answered" | "replied") => Some("answered in another window"),
                    Some("declined" | "stopped") => Some("declined in another window"),
                    Some("timed_out") => Some("ended: its time ran out"),
                    _ => None,
                };
                self.to_ui.send(match how {
                    Some(how) => Inbound::Settled { tool_use_id, how: how.to_owned() },
                    None => Inbound::Withdraw { tool_use_id },
                });
            }
            Some("error") => {
                let message = value.get("message").and_then(Value::as_str).unwrap_or("unknown");
                self.to_ui.send(Inbound::Notice(format!("askpane refused the answer: {message}")));
            }
            _ => {}
        }
    }

    fn send_decided(&mut self) {
        // Until the socket is open, decided answers wait here rather than be lost.
        let Some(socket) =
            self.socket.as_ref().filter(|s| s.ready_state() == web_sys::WebSocket::OPEN)
        else {
            return;
        };
        let mut index = 0;
        while index < self.awaited.len() {
            let received = self.awaited[index].2.try_recv();
            let Ok(outcome) = received else {
                index += 1;
                continue;
            };
            let (id, envelope, _) = self.awaited.swap_remove(index);
            self.shown.remove(&id);
            // Withdrawn: the bridge already knows; everything else is the user's decision.
            if matches!(outcome, Outcome::Withdrawn) {
                continue;
            }
            if let Some(reply) = envelope.reply(&outcome) {
                let _ = socket.send_with_str(&reply.to_string());
            }
        }
    }
}
