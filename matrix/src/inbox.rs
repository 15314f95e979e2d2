//! The bridge's connection to the inbox's socket, as a front end: one named thread that
//! connects (again and again while the inbox is away), subscribes, lists the asks with their
//! content, and hands every line to the bridge; verdicts go straight to whoever waits for them.
//! askpane's own client code and wire types (`askpane::transport::inbox`,
//! `askpane::protocol::inbox`), so the wire is owned in one place.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use askpane::protocol::inbox::{ClientMessage, InboxMessage};
use askpane::transport::inbox::{InboxClient, Place};
use tokio::sync::{mpsc, oneshot};

/// What the inbox's thread tells the bridge.
#[derive(Debug)]
pub enum FromInbox {
    /// Connected (again); `started` names this run of the inbox.
    Up { started: u64 },
    /// A line from the inbox (the list, asked, settled).
    /// Boxed: a message with a full list is far larger than the other variants.
    Message(Box<InboxMessage>),
    /// The connection is gone; answers are refused until `Up`.
    Down,
}

/// A verdict on an answer: accepted, or refused with the inbox's reason.
pub type Verdict = Result<(), String>;

type Waiting = Arc<Mutex<HashMap<(u64, String), oneshot::Sender<Verdict>>>>;

/// The bridge's handle on the inbox: sends verbs and waits for their verdicts.
#[derive(Clone)]
pub struct Inbox {
    writer: Arc<Mutex<Option<InboxClient>>>,
    waiting: Waiting,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

/// Why an answer was not taken: the inbox could not be asked (the person must answer again).
#[derive(Debug)]
pub struct Unreachable;

impl Inbox {
    /// Starts the thread (`inbox-socket`) that keeps a connection and feeds `events`.
    pub fn start(
        events: mpsc::UnboundedSender<FromInbox>,
    ) -> std::io::Result<(Inbox, JoinHandle<()>)> {
        let inbox = Inbox {
            writer: Arc::new(Mutex::new(None)),
            waiting: Arc::new(Mutex::new(HashMap::new())),
            stop: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        };
        let thread_inbox = inbox.clone();
        let handle =
            askpane::transport::spawn_named("inbox-socket", move || thread_inbox.run(&events))?;
        Ok((inbox, handle))
    }

    fn run(&self, events: &mpsc::UnboundedSender<FromInbox>) {
        let mut announced_down = false;
        while !self.stopped() {
            match self.connect() {
                Some(mut reader) => {
                    announced_down = false;
                    let started = reader.started_at.unwrap_or(u64::from(reader.inbox_pid));
                    if events.send(FromInbox::Up { started }).is_err() {
                        return;
                    }
                    loop {
                        match reader.receive() {
                            Ok(Some(InboxMessage::Verdict {
                                connection,
                                id,
                                accepted,
                                reason,
                            })) => {
                                let verdict = if accepted {
                                    Ok(())
                                } else {
                                    Err(reason.unwrap_or_else(|| "refused".to_owned()))
                                };
                                let waiter = self
                                    .waiting
                                    .lock()
                                    .unwrap_or_else(PoisonError::into_inner)
                                    .remove(&(connection, id));
                                if let Some(waiter) = waiter {
                                    let _ = waiter.send(verdict);
                                }
                            }
                            Ok(Some(InboxMessage::Error { message, id: Some(id) })) => {
                                // A verb the inbox could not take (an ask it no longer knows):
                                // whoever waits on that id hears why.
                                let mut waiting =
                                    self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
                                let key = waiting.keys().find(|(_, waited)| *waited == id).cloned();
                                if let Some(waiter) = key.and_then(|key| waiting.remove(&key)) {
                                    let _ = waiter.send(Err(message));
                                }
                            }
                            Ok(Some(message)) => {
                                if events.send(FromInbox::Message(Box::new(message))).is_err() {
                                    return;
                                }
                            }
                            Ok(None) | Err(_) => break,
                        }
                    }
                    self.lost();
                    if events.send(FromInbox::Down).is_err() {
                        return;
                    }
                }
                None => {
                    if !announced_down {
                        announced_down = true;
                        if events.send(FromInbox::Down).is_err() {
                            return;
                        }
                    }
                    // The inbox is away: try again soon (a bounded wait, checked for stop).
                    for _ in 0..5 {
                        if self.stopped() {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                }
            }
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Connects, subscribes and lists; the writer half goes where `send` finds it.
    fn connect(&self) -> Option<InboxClient> {
        let place = Place::find().ok()?;
        let mut client = InboxClient::connect(&place).ok()?;
        let _ = client.set_write_timeout(Some(Duration::from_secs(10)));
        client
            .send(&ClientMessage::Hello {
                version: askpane::protocol::inbox::VERSION,
                client: Some("askpane-matrix".to_owned()),
            })
            .ok()?;
        client.send(&ClientMessage::Subscribe { full: true }).ok()?;
        client.send(&ClientMessage::List { full: true }).ok()?;
        let writer = client.try_clone().ok()?;
        *self.writer.lock().unwrap_or_else(PoisonError::into_inner) = Some(writer);
        if self.stopped() {
            client.close();
            return None;
        }
        Some(client)
    }

    /// The connection ended: no more sends, and whoever waits for a verdict hears nothing.
    fn lost(&self) {
        *self.writer.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }

    /// Asks for the full list again (an `asked` without its content).
    pub fn relist(&self) {
        let _ = self.send_line(&ClientMessage::List { full: true });
    }

    fn send_line(&self, message: &ClientMessage) -> Result<(), Unreachable> {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let client = writer.as_mut().ok_or(Unreachable)?;
        client.send(message).map_err(|_| Unreachable)
    }

    /// Sends a front end's verb on ask (`connection`, `id`) and waits (bounded) for its verdict.
    pub async fn decide(
        &self,
        connection: u64,
        id: &str,
        message: ClientMessage,
    ) -> Result<Verdict, Unreachable> {
        let (tell, hear) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((connection, id.to_owned()), tell);
        let sent = {
            let inbox = self.clone();
            tokio::task::spawn_blocking(move || inbox.send_line(&message))
                .await
                .map_err(|_| Unreachable)?
        };
        if sent.is_err() {
            self.waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&(connection, id.to_owned()));
            return Err(Unreachable);
        }
        match tokio::time::timeout(Duration::from_secs(10), hear).await {
            Ok(Ok(verdict)) => Ok(verdict),
            _ => Err(Unreachable),
        }
    }

    /// Ends the thread: closes the connection so its read returns.
    pub fn stop(&self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(client) = self.writer.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            client.close();
        }
    }
}
