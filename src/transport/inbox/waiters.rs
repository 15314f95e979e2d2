//! The one thread (`inbox-waiter`) that waits for every open request of every client (issue 30
//! item 2): a question's outcome, a card's decision (until its deadline), a hosted session's
//! prompts. Each was a thread of its own, so 500 agents asking at once cost 500 threads; here
//! each is a receiver in one `crossbeam_channel::Select`, and what arrives is handed to the
//! wait's own code, which never blocks (it queues a line for its client, tells the window).
//!
//! A connection counts its waits ([`Pending`]): it closes only once they have all ended, so the
//! last outcome reaches the client before the end of the stream, as when it joined their threads.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Select, Sender, TryRecvError};

#[cfg(unix)]
use super::writer::Wake;

/// One thing waited for.
trait Wait: Send {
    /// Adds its receiver to `select`.
    fn register<'a>(&'a self, select: &mut Select<'a>);
    /// When it stops waiting on its own, if ever.
    fn deadline(&self) -> Option<Instant>;
    /// Takes what has arrived, if anything; whether it still waits.
    fn poll(&mut self) -> Still;
    /// Its deadline passed with nothing arrived.
    fn time_out(self: Box<Self>);
}

/// Whether a wait goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Still {
    Waiting,
    Ended,
}

/// Waits once for one answer (or the sender's end, or the deadline), then runs `then`.
struct Once<T, F> {
    receiver: Receiver<T>,
    deadline: Option<Instant>,
    then: Option<F>,
    _pending: PendingGuard,
}

impl<T: Send, F: FnOnce(Result<T, RecvTimeoutError>) + Send> Wait for Once<T, F> {
    fn register<'a>(&'a self, select: &mut Select<'a>) {
        select.recv(&self.receiver);
    }

    fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    fn poll(&mut self) -> Still {
        let got = match self.receiver.try_recv() {
            Ok(answer) => Ok(answer),
            Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
            Err(TryRecvError::Empty) => return Still::Waiting,
        };
        if let Some(then) = self.then.take() {
            then(got);
        }
        Still::Ended
    }

    fn time_out(mut self: Box<Self>) {
        // An answer that came with the deadline wins.
        if self.poll() == Still::Ended {
            return;
        }
        if let Some(then) = self.then.take() {
            then(Err(RecvTimeoutError::Timeout));
        }
    }
}

/// Hands every message to `each` until the senders are gone.
struct Each<T, F> {
    receiver: Receiver<T>,
    each: F,
    _pending: PendingGuard,
}

impl<T: Send, F: FnMut(T) + Send> Wait for Each<T, F> {
    fn register<'a>(&'a self, select: &mut Select<'a>) {
        select.recv(&self.receiver);
    }

    fn deadline(&self) -> Option<Instant> {
        None
    }

    fn poll(&mut self) -> Still {
        loop {
            match self.receiver.try_recv() {
                Ok(message) => (self.each)(message),
                Err(TryRecvError::Empty) => return Still::Waiting,
                Err(TryRecvError::Disconnected) => return Still::Ended,
            }
        }
    }

    fn time_out(self: Box<Self>) {}
}

/// The waiting thread, and the way new waits reach it.
pub(super) struct Waiters {
    adds: Mutex<Option<Sender<Box<dyn Wait>>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Waiters {
    /// Starts the thread (`inbox-waiter`).
    pub(super) fn start() -> std::io::Result<Waiters> {
        let (adds, added) = crossbeam_channel::unbounded::<Box<dyn Wait>>();
        let thread = crate::transport::spawn_named("inbox-waiter", move || wait_all(&added))?;
        Ok(Waiters { adds: Mutex::new(Some(adds)), thread: Mutex::new(Some(thread)) })
    }

    /// Waits for one answer on `receiver` (at most `timeout`, when given), then runs `then` on the
    /// waiting thread: with the answer, `Disconnected` when every sender went without one, or
    /// `Timeout`. `then` must not block. `false` (and `then` never runs) once the waiters ended.
    pub(super) fn once<T: Send + 'static>(
        &self,
        pending: &Pending,
        receiver: Receiver<T>,
        timeout: Option<Duration>,
        then: impl FnOnce(Result<T, RecvTimeoutError>) + Send + 'static,
    ) -> bool {
        let deadline = timeout.map(|timeout| Instant::now() + timeout);
        self.add(Box::new(Once { receiver, deadline, then: Some(then), _pending: pending.guard() }))
    }

    /// Hands every message on `receiver` to `each` on the waiting thread until its senders are
    /// gone. `each` must not block.
    pub(super) fn each<T: Send + 'static>(
        &self,
        pending: &Pending,
        receiver: Receiver<T>,
        each: impl FnMut(T) + Send + 'static,
    ) -> bool {
        self.add(Box::new(Each { receiver, each, _pending: pending.guard() }))
    }

    fn add(&self, wait: Box<dyn Wait>) -> bool {
        let adds = self.adds.lock().ok().and_then(|adds| adds.clone());
        adds.is_some_and(|adds| adds.send(wait).is_ok())
    }

    /// Takes no more waits, and joins the thread once every wait it has has ended (the inbox is
    /// ending: the window has dropped every request's responder).
    pub(super) fn stop(&self) {
        if let Ok(mut adds) = self.adds.lock() {
            adds.take();
        }
        let thread = self.thread.lock().ok().and_then(|mut thread| thread.take());
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

/// The waiting thread's loop: until no wait is left and no more can come.
fn wait_all(added: &Receiver<Box<dyn Wait>>) {
    let mut waits: Vec<Box<dyn Wait>> = Vec::new();
    let mut adding = true;
    while adding || !waits.is_empty() {
        let deadline = waits.iter().filter_map(|wait| wait.deadline()).min();
        let woken = {
            let mut select = Select::new();
            if adding {
                select.recv(added);
            }
            for wait in &waits {
                wait.register(&mut select);
            }
            match deadline {
                Some(deadline) => select.ready_deadline(deadline).is_ok(),
                None => {
                    select.ready();
                    true
                }
            }
        };
        if adding {
            loop {
                match added.try_recv() {
                    Ok(wait) => waits.push(wait),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        adding = false;
                        break;
                    }
                }
            }
        }
        // Every wait looks (a try each, no blocking): a burst of answers is taken in one pass.
        if woken {
            waits.retain_mut(|wait| wait.poll() == Still::Waiting);
        }
        let now = Instant::now();
        if deadline.is_some_and(|deadline| deadline <= now) {
            let (due, left): (Vec<_>, Vec<_>) = std::mem::take(&mut waits)
                .into_iter()
                .partition(|wait| wait.deadline().is_some_and(|deadline| deadline <= now));
            waits = left;
            for wait in due {
                wait.time_out();
            }
        }
    }
}

/// How many waits of one connection are still open: the connection ends once they have.
#[derive(Clone, Debug, Default)]
pub(super) struct Pending {
    count: Arc<(Mutex<usize>, Condvar)>,
    /// The event loop that serves the connection, woken when a wait ends.
    #[cfg(unix)]
    wake: Option<Arc<Wake>>,
}

impl Pending {
    /// Waits whose ends wake `wake` (the event loop, which looks at [`Pending::is_empty`]).
    #[cfg(unix)]
    pub(super) fn waking(wake: Arc<Wake>) -> Pending {
        Pending { count: Arc::default(), wake: Some(wake) }
    }

    fn guard(&self) -> PendingGuard {
        if let Ok(mut count) = self.count.0.lock() {
            *count += 1;
        }
        PendingGuard {
            count: Arc::clone(&self.count),
            #[cfg(unix)]
            wake: self.wake.clone(),
        }
    }

    /// Whether every wait of this connection has ended.
    #[cfg(unix)]
    pub(super) fn is_empty(&self) -> bool {
        self.count.0.lock().map_or(true, |count| *count == 0)
    }

    /// Waits until every wait of this connection has ended.
    #[cfg(any(windows, test))]
    pub(super) fn wait_for_none(&self) {
        let (count, ended) = &*self.count;
        let Ok(mut count) = count.lock() else { return };
        while *count > 0 {
            count = match ended.wait(count) {
                Ok(count) => count,
                Err(_) => return,
            };
        }
    }
}

/// Held by one wait; its end (after its code ran) counts down.
struct PendingGuard {
    count: Arc<(Mutex<usize>, Condvar)>,
    #[cfg(unix)]
    wake: Option<Arc<Wake>>,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        if let Ok(mut count) = self.count.0.lock() {
            *count = count.saturating_sub(1);
        }
        self.count.1.notify_all();
        #[cfg(unix)]
        if let Some(wake) = &self.wake {
            wake.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thousand_waits_are_answered_on_one_thread_and_counted_down() {
        let waiters = Waiters::start().expect("the waiter");
        let pending = Pending::default();
        let (told, heard) = crossbeam_channel::unbounded();
        let mut senders = Vec::new();
        for index in 0..1000 {
            let (sender, receiver) = crossbeam_channel::bounded::<usize>(1);
            let told = told.clone();
            assert!(waiters.once(&pending, receiver, None, move |got| {
                told.send((index, got.ok())).expect("heard");
            }));
            senders.push(sender);
        }
        for (index, sender) in senders.iter().enumerate().rev() {
            sender.send(index * 2).expect("an answer");
        }
        let mut answers: Vec<(usize, Option<usize>)> = heard.iter().take(1000).collect();
        answers.sort_unstable();
        assert!(answers.iter().all(|&(index, got)| got == Some(index * 2)));
        pending.wait_for_none();
        waiters.stop();
    }

    #[test]
    fn a_deadline_passes_a_dropped_sender_ends_and_a_stream_is_forwarded_in_order() {
        let waiters = Waiters::start().expect("the waiter");
        let pending = Pending::default();
        let (told, heard) = crossbeam_channel::unbounded();
        let (_kept, slow) = crossbeam_channel::bounded::<u8>(1);
        let (dropped, gone) = crossbeam_channel::bounded::<u8>(1);
        let (stream, streamed) = crossbeam_channel::unbounded::<u8>();
        let started = Instant::now();
        let slow_told = told.clone();
        waiters.once(&pending, slow, Some(Duration::from_millis(100)), move |got| {
            slow_told.send(format!("slow {got:?}")).expect("heard");
        });
        let gone_told = told.clone();
        waiters.once(&pending, gone, None, move |got| {
            gone_told.send(format!("gone {got:?}")).expect("heard");
        });
        waiters.each(&pending, streamed, move |message| {
            told.send(format!("stream {message}")).expect("heard");
        });
        drop(dropped);
        assert_eq!(heard.recv().expect("gone"), "gone Err(Disconnected)");
        for message in 0..3 {
            stream.send(message).expect("a message");
        }
        let streamed: Vec<String> = heard.iter().take(3).collect();
        assert_eq!(streamed, ["stream 0", "stream 1", "stream 2"]);
        assert_eq!(heard.recv().expect("slow"), "slow Err(Timeout)");
        assert!(started.elapsed() >= Duration::from_millis(100));
        drop(stream);
        pending.wait_for_none();
        waiters.stop();
    }
}
